/**
 * The `{client}` of `/api/subscript/{client}/{userId}/{userkey}` (seed 000 §7) and the format
 * each gets; `auto` picks by `?flag=` or the User-Agent (subscription-formats.md §3.2).
 */
import type { Format } from "./model.ts";

export const CLIENT_FORMATS = {
  clash: "clash",
  mjclash: "mihomo",
  flclash: "mihomo",
  stash: "stash",
  singbox: "singbox",
  v2ray: "v2ray",
  v2box: "v2ray",
  streisands: "v2ray",
  ss: "shadowrocket",
  ssr: "ssr",
  surge: "surge",
  surfboard: "surfboard",
  qx: "qx",
  q: "quantumult",
  loon: "loon",
  json: "xray",
} as const satisfies Record<string, Format>;
export type Client = keyof typeof CLIENT_FORMATS | "auto";

export const CLIENTS = [...Object.keys(CLIENT_FORMATS), "auto"] as Client[];

export const isClient = (value: string): value is Client =>
  value === "auto" || Object.hasOwn(CLIENT_FORMATS, value);

/**
 * UA substrings, most specific first: Stash before clash, Quantumult X before Quantumult,
 * the mihomo family before plain clash. Anything unknown gets the base64 URI list.
 */
const UA_RULES: [pattern: Pick<RegExp, "test">, format: Format][] = [
  [/surge/i, "surge"],
  [/surfboard/i, "surfboard"],
  [/stash/i, "stash"],
  [/sing-box|singbox|hiddify|karing|^sf[aimt]\//i, "singbox"],
  [{ test: takesXrayJson }, "xray"],
  [/shadowrocket/i, "shadowrocket"],
  [/quantumult%20x|quantumult-x|quantumult x/i, "qx"],
  [/quantumult/i, "quantumult"],
  [/loon/i, "loon"],
  [/mihomo|clash\.meta|clash-meta|meta|verge|flclash|nekobox|nyanpasu/i, "mihomo"],
  [/clash/i, "clash"],
];

/** v2rayNG imports an Xray JSON subscription from 1.8.29 on (docs/decisions.md, issue 29). */
const V2RAYNG_JSON_SINCE = [1, 8, 29];

/**
 * Xray apps that import a JSON array of full configs: Happ, Streisand, V2Box, and v2rayNG from
 * 1.8.29 (older ones, and v2rayN, keep the URI list).
 */
export function takesXrayJson(userAgent: string): boolean {
  if (/^happ\/|streisand|v2box/i.test(userAgent)) return true;
  const v2rayng = /v2rayng\/(\d+)\.(\d+)\.(\d+)/i.exec(userAgent);
  if (!v2rayng) return false;
  const version = v2rayng.slice(1).map(Number);
  const differs = version.findIndex((part, index) => part !== V2RAYNG_JSON_SINCE[index]);
  return differs === -1 || (version[differs] as number) > (V2RAYNG_JSON_SINCE[differs] as number);
}

export function detectFormat(userAgent: string): Format {
  for (const [pattern, format] of UA_RULES) if (pattern.test(userAgent)) return format;
  return "v2ray";
}

/** `flag` (Xboard / V2Board's explicit override, e.g. Shadowrocket's deep link) beats the UA. */
export function formatFor(client: Client, userAgent: string, flag: string | null): Format {
  if (client !== "auto") return CLIENT_FORMATS[client];
  if (flag) {
    const lowered = flag.toLowerCase();
    if (isClient(lowered) && lowered !== "auto") return CLIENT_FORMATS[lowered];
    return detectFormat(lowered);
  }
  return detectFormat(userAgent);
}

/**
 * Where subscription links point: the describe_host setting ("sub.example.com" or a full
 * origin) when set, else the site the customer is on.
 */
export function subscriptionOrigin(describeHost: string, currentOrigin: string): string {
  const host = describeHost.trim().replace(/\/+$/, "");
  if (!host) return currentOrigin;
  return /^https?:\/\//.test(host) ? host : `https://${host}`;
}

export function subscriptionUrl(
  origin: string,
  client: Client,
  user: { _id: string; userkey: string },
  params?: Record<string, string>,
): string {
  const query = params && Object.keys(params).length > 0 ? `?${new URLSearchParams(params)}` : "";
  return `${origin}/api/subscript/${client}/${user._id}/${user.userkey}${query}`;
}
