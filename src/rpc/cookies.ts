import { requestView } from "./request-view.ts";

export interface CookieOptions {
  maxAgeSeconds?: number;
  httpOnly?: boolean;
  secure?: boolean;
}

const DAY = 86_400;
/** Cookie lifetimes of seed 000 §9, shared by the server and the SPA. */
export const COOKIE_DAYS = { token: 99_999, channel: 30, channelDefault: 99_999, lastRegister: 50 } as const;
export const days = (n: number) => n * DAY;

export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, "Path=/", "SameSite=Lax"];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (options.httpOnly) parts.push("HttpOnly");
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}

export function parseCookies(header: string | null): Record<string, string> {
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!name || name in cookies) continue;
    try {
      cookies[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      cookies[name] = part.slice(eq + 1).trim();
    }
  }
  return cookies;
}

/** One cookie's value without parsing the rest of the header (the session token, every request). */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  const prefix = `${name}=`;
  let start = 0;
  while (start < header.length) {
    while (header.charCodeAt(start) === 32) start++;
    const end = header.indexOf(";", start);
    const stop = end < 0 ? header.length : end;
    if (header.startsWith(prefix, start)) return header.slice(start + prefix.length, stop).trim();
    start = stop + 1;
  }
  return undefined;
}

/** Whether the client reached us over https (a forwarded claim counts only from a trusted proxy). */
export function isHttps(request: Request): boolean {
  return requestView(request).https;
}
