/**
 * The internal model every subscription format is rendered from (subscription-formats.md §1).
 * One ProxyEntry per (line copy, entry address); names are already unique and free of `,` and `=`.
 */

import type { LineProtocol } from "../modules/line/schema.ts";
import type { SsMethod } from "../modules/node-record/schema.ts";
import type { SingboxDialect } from "./singbox-version.ts";

interface ProxyBase {
  name: string;
  /** What the client dials: node IP, entry IP or CDN address. */
  server: string;
  port: number;
  /** The panel line kind it came from. */
  line: LineProtocol;
}

/** vmesh_tcp / vmesh_ws: VMess with alterId 0 (AEAD), cipher auto. */
export interface VmessProxy extends ProxyBase {
  type: "vmess";
  uuid: string;
  network: "tcp" | "ws";
  /** WebSocket path and Host header ("" for tcp). */
  wsPath: string;
  wsHost: string;
  /** TLS on (cf_cdn); the SNI is then `sni`. */
  tls: boolean;
  sni: string;
}

/** reality: VLESS + TCP + REALITY with the Vision flow and a chrome uTLS fingerprint. */
export interface VlessRealityProxy extends ProxyBase {
  type: "vless";
  uuid: string;
  flow: "xtls-rprx-vision";
  sni: string;
  publicKey: string;
  shortId: string;
  fingerprint: "chrome";
}

/** ss / compat: Shadowsocks; for 2022 methods the password is `serverKey:userKey`. */
export interface ShadowsocksProxy extends ProxyBase {
  type: "ss";
  method: SsMethod;
  password: string;
  /** compat lines: also published as SSR (protocol origin, obfs plain) for SSR-only clients. */
  ssr: boolean;
}

/** h2: Hysteria2 over UDP, salamander obfuscation. `insecure` when the node has no domain. */
export interface Hysteria2Proxy extends ProxyBase {
  type: "hysteria2";
  password: string;
  /** "" when the node has no domain (then insecure is true). */
  sni: string;
  insecure: boolean;
  obfsPassword: string;
}

export type ProxyEntry = VmessProxy | VlessRealityProxy | ShadowsocksProxy | Hysteria2Proxy;

/** Usage figures for the `subscription-userinfo` header and in-body status lines (bytes, unix s). */
export interface UsageInfo {
  upload: number;
  download: number;
  total: number;
  /** Unix seconds; 0 = never. */
  expire: number;
}

/** `upload=…; download=…; total=…; expire=…`: the subscription-userinfo header, also in CFW's comment line. */
export function usageText({ upload, download, total, expire }: UsageInfo): string {
  return `upload=${upload}; download=${download}; total=${total}; expire=${expire}`;
}

/**
 * The customer's profile toggles (seed 000 §2 Profile) that change what a subscription holds;
 * docs/decisions.md "Profile toggles (issue 13)" says what each does per format.
 */
export interface ProfileToggles {
  /** inXinjiang, 释放DNS控制: the customer's network blocks or poisons DNS. */
  releaseDns: boolean;
  /** in_foreign: the customer is outside mainland China, so China is not direct. */
  abroad: boolean;
  /** use_english_node: node and group names in English. */
  english: boolean;
}

export const NO_TOGGLES: ProfileToggles = Object.freeze({ releaseDns: false, abroad: false, english: false });

export interface RenderInput {
  /** Non-empty. When `notice` is set it holds one placeholder entry whose name is the notice. */
  proxies: ProxyEntry[];
  notice: string | null;
  usage: UsageInfo;
  /** The profile's name (the site name, or the `name` query parameter). */
  title: string;
  /** The URL this subscription was fetched from (managed-config lines, deep links). */
  url: string;
  /** Host name of the subscription server, for the DIRECT rule that keeps updates off the proxy. */
  host: string;
  /** The request's query parameters (format options such as streisands' `base64=0`). */
  query: URLSearchParams;
  /** The customer's toggles; names are already English in `proxies` when `english` is on. */
  toggles: ProfileToggles;
  /** sing-box only: the config dialect for the client's core (default: the current one). */
  singbox?: SingboxDialect;
  /**
   * The profile headers as `#key: value` lines (profile-headers.ts), for the text formats whose
   * clients read them at the top of the body; the others leave them to the HTTP headers.
   */
  headerLines?: readonly string[];
}

export interface Rendered {
  body: string;
  contentType: string;
  /** The file name clients use as the profile name, before percent-encoding. */
  filename: string;
}

export type Renderer = (input: RenderInput) => Rendered;

/** Every output format the service can produce. */
export const FORMATS = [
  "clash",
  "mihomo",
  "stash",
  "singbox",
  "v2ray",
  "shadowrocket",
  "ssr",
  "surge",
  "surfboard",
  "qx",
  "quantumult",
  "loon",
  "xray",
] as const;
export type Format = (typeof FORMATS)[number];
