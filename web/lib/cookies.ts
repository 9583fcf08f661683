/**
 * Browser cookies the SPA itself may set (seed 000 §3/§4). Defaults: path "/", SameSite=Lax,
 * expiry 1 day. The session cookie `token` is HttpOnly and is never read or written here.
 */
export interface CookieOptions {
  /** Lifetime in days; default 1. */
  days?: number;
  path?: string;
}

const DAY_SECONDS = 86_400;

export function getCookie(name: string): string | undefined {
  for (const part of document.cookie.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return undefined;
}

export function setCookie(name: string, value: string, options: CookieOptions = {}): void {
  const days = options.days ?? 1;
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path ?? "/"}`,
    "SameSite=Lax",
    `Max-Age=${Math.round(days * DAY_SECONDS)}`,
  ];
  if (location.protocol === "https:") parts.push("Secure");
  // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing in Safari and Firefox
  document.cookie = parts.join("; ");
}

export function deleteCookie(name: string, path = "/"): void {
  // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing in Safari and Firefox
  document.cookie = `${name}=; Path=${path}; SameSite=Lax; Max-Age=0`;
}

/** Cookie names and lifetimes used by the SPA (seed 000 §3, §9). */
export const Cookies = {
  channelCode: "channel_code",
  lastRegister: "lastRegister",
  platform: "platform",
  noticeDismissed: "noticeDismissed",
  /** The business day this browser last checked an account in (seed 000 §5 "another account"). */
  lastSignUse: "lastSignUse",
} as const;
