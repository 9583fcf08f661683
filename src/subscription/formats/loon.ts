/**
 * Loon (subscription-formats.md §4.11): plain `Name = Type, host, port, …` lines, not base64,
 * secrets quoted. Loon reads the usage from the `subscription-userinfo` header.
 */
import type { ProxyEntry, Renderer } from "../model.ts";

export function loonLine(proxy: ProxyEntry): string {
  const head = `${proxy.name} = `;
  switch (proxy.type) {
    case "vmess": {
      const fields = [
        "vmess",
        proxy.server,
        proxy.port,
        "auto",
        `"${proxy.uuid}"`,
        `transport=${proxy.network}`,
      ];
      if (proxy.network === "ws") fields.push(`path=${proxy.wsPath}`, `host=${proxy.wsHost}`);
      fields.push(`over-tls=${proxy.tls}`);
      if (proxy.tls) fields.push(`tls-name=${proxy.sni}`, "skip-cert-verify=false");
      fields.push("alterId=0", "udp=true");
      return head + fields.join(", ");
    }
    case "ss":
      return `${head}Shadowsocks, ${proxy.server}, ${proxy.port}, ${proxy.method}, "${proxy.password}", udp=true`;
    case "vless":
      return (
        head +
        [
          "VLESS",
          proxy.server,
          proxy.port,
          `"${proxy.uuid}"`,
          "transport=tcp",
          "over-tls=true",
          `tls-name=${proxy.sni}`,
          `flow=${proxy.flow}`,
          `public-key="${proxy.publicKey}"`,
          `short-id=${proxy.shortId}`,
          "udp=true",
        ].join(", ")
      );
    case "hysteria2": {
      const fields = ["Hysteria2", proxy.server, proxy.port, `"${proxy.password}"`];
      if (proxy.sni) fields.push(`tls-name=${proxy.sni}`);
      if (proxy.insecure) fields.push("skip-cert-verify=true");
      if (proxy.obfsPassword) fields.push(`salamander-password=${proxy.obfsPassword}`);
      fields.push("udp=true");
      return head + fields.join(", ");
    }
  }
}

export const renderLoon: Renderer = (input) => ({
  body: `${input.proxies.map(loonLine).join("\n")}\n`,
  contentType: "text/plain; charset=utf-8",
  filename: input.title,
});
