/**
 * Quantumult X (subscription-formats.md §4.9): base64 of `server_local` lines, each ending in
 * `tag=<name>`. QX takes only `chacha20-poly1305` (or none) as the VMess method and has no
 * Hysteria2 (support.ts keeps it out).
 */
import type { ProxyEntry, Renderer } from "../model.ts";
import { supports } from "../support.ts";
import { base64, hostPort } from "./uri.ts";

type QxProxy = Exclude<ProxyEntry, { type: "hysteria2" }>;

export function qxLine(proxy: QxProxy): string {
  const address = hostPort(proxy.server, proxy.port);
  let fields: string[];
  switch (proxy.type) {
    case "vmess": {
      fields = [`vmess=${address}`, "method=chacha20-poly1305", `password=${proxy.uuid}`];
      if (proxy.network === "ws")
        fields.push(
          `obfs=${proxy.tls ? "wss" : "ws"}`,
          `obfs-host=${proxy.wsHost}`,
          `obfs-uri=${proxy.wsPath}`,
        );
      else if (proxy.tls) fields.push("obfs=over-tls");
      if (proxy.tls) fields.push(`tls-host=${proxy.sni}`, "tls-verification=true");
      fields.push("aead=true", "fast-open=false", "udp-relay=false");
      break;
    }
    case "vless":
      fields = [
        `vless=${address}`,
        "method=none",
        `password=${proxy.uuid}`,
        "obfs=over-tls",
        `tls-host=${proxy.sni}`,
        `reality-base64-pubkey=${proxy.publicKey}`,
        `reality-hex-shortid=${proxy.shortId}`,
        `vless-flow=${proxy.flow}`,
        "udp-relay=true",
      ];
      break;
    case "ss":
      fields = [
        `shadowsocks=${address}`,
        `method=${proxy.method}`,
        `password=${proxy.password}`,
        "udp-relay=true",
      ];
      break;
  }
  return [...fields, `tag=${proxy.name}`].join(", ");
}

export const renderQx: Renderer = (input) => {
  const lines = input.proxies
    .filter((proxy): proxy is QxProxy => proxy.type !== "hysteria2" && supports("qx", proxy))
    .map(qxLine);
  return {
    body: base64(`${lines.join("\n")}\n`),
    contentType: "text/plain; charset=utf-8",
    filename: input.title,
  };
};
