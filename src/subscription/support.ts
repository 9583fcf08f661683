/**
 * Which proxies each format can express (subscription-formats.md §6). Lines a client cannot
 * express are left out of its file rather than sent broken. Version gates are not applied: a
 * format that needs a recent client for a protocol gets it (docs/decisions.md).
 */
import { isSs2022 } from "../modules/node-record/schema.ts";
import type { Format, ProxyEntry } from "./model.ts";

type Kind = "vmess" | "ss-aead" | "ss-2022" | "reality" | "hysteria2";

function kindOf(proxy: ProxyEntry): Kind {
  if (proxy.type === "ss") return isSs2022(proxy.method) ? "ss-2022" : "ss-aead";
  if (proxy.type === "vless") return "reality";
  return proxy.type;
}

const ALL: readonly Kind[] = ["vmess", "ss-aead", "ss-2022", "reality", "hysteria2"];

const SUPPORTED: Record<Exclude<Format, "ssr">, readonly Kind[]> = {
  clash: ["vmess", "ss-aead"],
  mihomo: ALL,
  stash: ALL,
  singbox: ALL,
  v2ray: ALL,
  shadowrocket: ALL,
  surge: ["vmess", "ss-aead", "ss-2022", "hysteria2"],
  surfboard: ["vmess", "ss-aead", "ss-2022"],
  qx: ["vmess", "ss-aead", "ss-2022", "reality"],
  quantumult: ["vmess", "ss-aead"],
  loon: ALL,
  // Xray's Hysteria2 client is new and its obfuscation settings still moving (docs/decisions.md, issue 29).
  xray: ["vmess", "ss-aead", "ss-2022", "reality"],
};

export function supports(format: Format, proxy: ProxyEntry): boolean {
  // The SSR list carries only compat lines, in SSR form, which has no 2022 ciphers.
  if (format === "ssr") return proxy.type === "ss" && proxy.ssr && !isSs2022(proxy.method);
  return SUPPORTED[format].includes(kindOf(proxy));
}
