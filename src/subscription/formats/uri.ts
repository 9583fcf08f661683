/**
 * Share-URI subscriptions (subscription-formats.md §4.1, §4.2, §4.10): the base64 URI list for
 * v2rayN and the Xray apps, Shadowrocket's list with its STATUS line, the SSR list and old
 * Quantumult's list. The per-proxy builders are exported for pages that show one link or QR code.
 */
import { businessDay } from "../../lib/time.ts";
import { formatGB } from "../../lib/traffic.ts";
import { isSs2022 } from "../../modules/node-record/schema.ts";
import type {
  Hysteria2Proxy,
  ProxyEntry,
  Rendered,
  Renderer,
  RenderInput,
  ShadowsocksProxy,
  UsageInfo,
  VlessRealityProxy,
  VmessProxy,
} from "../model.ts";
import { noticeProxy } from "../proxies.ts";

/** Standard base64 (with padding) of UTF-8 text: list bodies, vmess JSON. */
export const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
/** base64url without padding (SIP002 userinfo, SSR). */
const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

/** `host:port`, with an IPv6 address in brackets. */
export function hostPort(server: string, port: number): string {
  return server.includes(":") ? `[${server}]:${port}` : `${server}:${port}`;
}

/** A query string with every value percent-encoded. */
export function queryString(params: [key: string, value: string][]): string {
  return params.map(([key, value]) => `${key}=${encodeURIComponent(value)}`).join("&");
}

/** vmess:// + base64 of the v2rayN "ver 2" JSON. */
export function vmessUri(proxy: VmessProxy): string {
  const json = {
    v: "2",
    ps: proxy.name,
    add: proxy.server,
    port: String(proxy.port),
    id: proxy.uuid,
    aid: "0",
    scy: "auto",
    net: proxy.network,
    type: "none",
    host: proxy.wsHost,
    path: proxy.wsPath,
    tls: proxy.tls ? "tls" : "",
    sni: proxy.sni,
    alpn: "",
    fp: "",
  };
  return `vmess://${base64(JSON.stringify(json))}`;
}

/** vless:// in the X91 form with Xray's Reality keys. */
export function vlessUri(proxy: VlessRealityProxy): string {
  const query = queryString([
    ["encryption", "none"],
    ["type", "tcp"],
    ["headerType", "none"],
    ["security", "reality"],
    ["sni", proxy.sni],
    ["fp", proxy.fingerprint],
    ["pbk", proxy.publicKey],
    ["sid", proxy.shortId],
    ["flow", proxy.flow],
  ]);
  return `vless://${proxy.uuid}@${hostPort(proxy.server, proxy.port)}?${query}#${encodeURIComponent(proxy.name)}`;
}

/** SIP002: base64url userinfo for classic AEAD; plain percent-encoded `method:password` for 2022. */
export function ssUri(proxy: ShadowsocksProxy): string {
  const userinfo = isSs2022(proxy.method)
    ? `${encodeURIComponent(proxy.method)}:${encodeURIComponent(proxy.password)}`
    : base64url(`${proxy.method}:${proxy.password}`);
  return `ss://${userinfo}@${hostPort(proxy.server, proxy.port)}#${encodeURIComponent(proxy.name)}`;
}

function hysteria2Params(proxy: Hysteria2Proxy): [string, string][] {
  const params: [string, string][] = [["insecure", proxy.insecure ? "1" : "0"]];
  if (proxy.obfsPassword) params.push(["obfs", "salamander"], ["obfs-password", proxy.obfsPassword]);
  return params;
}

/** hysteria2:// per the Hysteria URI scheme; no sni when the node has no domain. */
export function hysteria2Uri(proxy: Hysteria2Proxy): string {
  const sni: [string, string][] = proxy.sni ? [["sni", proxy.sni]] : [];
  const query = queryString([...sni, ...hysteria2Params(proxy)]);
  return `hysteria2://${encodeURIComponent(proxy.password)}@${hostPort(proxy.server, proxy.port)}/?${query}#${encodeURIComponent(proxy.name)}`;
}

/** ssr:// (SSRQR) for a compat line: protocol origin, obfs plain. `group` is the profile name. */
export function ssrUri(proxy: ShadowsocksProxy, group: string): string {
  const main = `${proxy.server}:${proxy.port}:origin:${proxy.method}:plain:${base64url(proxy.password)}`;
  const params = `obfsparam=&protoparam=&remarks=${base64url(proxy.name)}&group=${base64url(group)}`;
  return `ssr://${base64url(`${main}/?${params}`)}`;
}

/** The standard share link of any proxy (v2rayN, Streisand, V2Box, the user's link list). */
export function shareUri(proxy: ProxyEntry): string {
  switch (proxy.type) {
    case "vmess":
      return vmessUri(proxy);
    case "vless":
      return vlessUri(proxy);
    case "ss":
      return ssUri(proxy);
    case "hysteria2":
      return hysteria2Uri(proxy);
  }
}

/** `base64=0` (or `false`) asks for the plain list: the link-list page and streisands' option. */
function wantsPlain(query: URLSearchParams): boolean {
  const value = query.get("base64")?.trim().toLowerCase();
  return value === "0" || value === "false";
}

function uriList(input: RenderInput, lines: string[], plainAllowed: boolean): Rendered {
  const text = `${lines.join("\n")}\n`;
  return {
    body: plainAllowed && wantsPlain(input.query) ? text : base64(text),
    contentType: "text/plain; charset=utf-8",
    filename: input.title,
  };
}

const MODE_TYPES: readonly ProxyEntry["type"][] = ["vmess", "vless", "ss", "hysteria2"];
export const NO_MODE_MATCH = "所选协议暂无可用线路";

/**
 * streisands' `mode=vmess,ss,…`: only those proxy types. Unknown values are ignored, and a
 * notice file is left as it is.
 */
export function filterByMode(input: RenderInput): ProxyEntry[] {
  const requested = (input.query.get("mode") ?? "").split(",").map((mode) => mode.trim().toLowerCase());
  const modes = MODE_TYPES.filter((type) => requested.includes(type));
  if (input.notice || modes.length === 0) return input.proxies;
  const kept = input.proxies.filter((proxy) => modes.includes(proxy.type));
  return kept.length > 0 ? kept : [noticeProxy(NO_MODE_MATCH)];
}

/** The URI list, its first lines the profile headers (Happ and Hiddify read them there; v2rayN/NG skip them). */
export const renderV2ray: Renderer = (input) =>
  uriList(input, [...(input.headerLines ?? []), ...filterByMode(input).map(shareUri)], true);

export const renderSsr: Renderer = (input) =>
  uriList(
    input,
    input.proxies.flatMap((proxy) => (proxy.type === "ss" ? [ssrUri(proxy, input.title)] : [])),
    true,
  );

/** Expiry dates are shown in the business timezone. */
const STATUS_TIME_ZONE = "Asia/Shanghai";

/** Shadowrocket's first line, shown as the subscription's usage (Xboard's form). */
export function shadowrocketStatus(usage: UsageInfo): string {
  const expires = usage.expire > 0 ? businessDay(usage.expire * 1000, STATUS_TIME_ZONE) : "N/A";
  return `STATUS=🚀↑:${formatGB(usage.upload)}GB,↓:${formatGB(usage.download)}GB,TOT:${formatGB(usage.total)}GB💡Expires:${expires}`;
}

/** Shadowrocket's legacy VMess/VLESS form: base64(`auto:uuid@host:port`) and a query. */
function shadowrocketLegacy(
  scheme: "vmess" | "vless",
  uuid: string,
  proxy: ProxyEntry,
  params: [string, string][],
) {
  const userinfo = base64(`auto:${uuid}@${hostPort(proxy.server, proxy.port)}`);
  return `${scheme}://${userinfo}?${queryString([["remark", proxy.name], ["tfo", "1"], ...params])}`;
}

function shadowrocketUri(proxy: ProxyEntry): string {
  switch (proxy.type) {
    case "ss":
      return ssUri(proxy);
    case "vmess": {
      const params: [string, string][] = [["alterId", "0"]];
      if (proxy.tls) params.push(["tls", "1"], ["peer", proxy.sni]);
      if (proxy.network === "ws")
        params.push(["obfs", "websocket"], ["path", proxy.wsPath], ["obfsParam", proxy.wsHost]);
      return shadowrocketLegacy("vmess", proxy.uuid, proxy, params);
    }
    case "vless":
      return shadowrocketLegacy("vless", proxy.uuid, proxy, [
        ["tls", "1"],
        ["xtls", "2"],
        ["sni", proxy.sni],
        ["pbk", proxy.publicKey],
        ["sid", proxy.shortId],
        ["fp", proxy.fingerprint],
      ]);
    case "hysteria2": {
      const sni: [string, string][] = proxy.sni
        ? [
            ["peer", proxy.sni],
            ["sni", proxy.sni],
          ]
        : [];
      const query = queryString([...sni, ...hysteria2Params(proxy), ["fastopen", "1"]]);
      return `hysteria2://${encodeURIComponent(proxy.password)}@${hostPort(proxy.server, proxy.port)}?${query}#${encodeURIComponent(proxy.name)}`;
    }
  }
}

export const renderShadowrocket: Renderer = (input) =>
  uriList(input, [shadowrocketStatus(input.usage), ...input.proxies.map(shadowrocketUri)], false);

/** Old Quantumult's own VMess line, base64url-wrapped. `,` and `=` are separators there. */
function quantumultVmessUri(proxy: VmessProxy, group: string): string {
  const fields = [
    `${proxy.name} = vmess`,
    proxy.server,
    String(proxy.port),
    "chacha20-ietf-poly1305",
    `"${proxy.uuid}"`,
    `group=${group.replace(/[,=]/g, " ")}`,
    `over-tls=${proxy.tls}`,
    ...(proxy.tls ? [`tls-host=${proxy.sni}`] : []),
    "certificate=1",
    ...(proxy.network === "ws"
      ? ["obfs=ws", `obfs-path="${proxy.wsPath}"`, `obfs-header="Host: ${proxy.wsHost}"`]
      : []),
  ];
  return `vmess://${base64url(fields.join(", "))}`;
}

export const renderQuantumult: Renderer = (input) =>
  uriList(
    input,
    input.proxies.flatMap((proxy) => {
      if (proxy.type === "vmess") return [quantumultVmessUri(proxy, input.title)];
      if (proxy.type === "ss") return [ssUri(proxy)];
      return [];
    }),
    false,
  );
