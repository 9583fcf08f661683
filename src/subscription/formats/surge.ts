/**
 * Surge and Surfboard profiles (subscription-formats.md §4.7, §4.8): a managed profile that
 * updates itself, the proxies, a select group over an url-test group, and rules that keep the
 * subscription server, private networks and China direct. Surfboard reads the same subset;
 * which proxies each gets is decided by support.ts.
 */
import type { ProxyEntry, Renderer, RenderInput, VlessRealityProxy } from "../model.ts";
import { directRules, PRIVATE_NETWORKS, releasedDnsServers, TEST_URL } from "../rules.ts";
import { supports } from "../support.ts";
import { groupNames } from "./clash.ts";

/** Seconds between profile updates (Xboard's value). */
const UPDATE_INTERVAL_SECONDS = 43200;
const SKIP_PROXY = [...PRIVATE_NETWORKS, "localhost", "*.local", "captive.apple.com"];

/** Only Surge 6 reads VLESS, so neither profile carries Reality lines. */
type SurgeProxy = Exclude<ProxyEntry, VlessRealityProxy>;

/**
 * One `[Proxy]` line: `Name = type, host, port, key=value, …` (names carry no `,` or `=`).
 * Passwords are quoted: 2022 keys end in `=`.
 */
export function surgeProxyLine(proxy: SurgeProxy): string {
  const head = `${proxy.name} = `;
  switch (proxy.type) {
    case "vmess": {
      const fields = ["vmess", proxy.server, proxy.port, `username=${proxy.uuid}`, "vmess-aead=true"];
      if (proxy.tls) fields.push("tls=true", `sni=${proxy.sni}`);
      if (proxy.network === "ws")
        fields.push("ws=true", `ws-path=${proxy.wsPath}`, `ws-headers=Host:${proxy.wsHost}`);
      return head + fields.join(", ");
    }
    case "ss":
      return `${head}ss, ${proxy.server}, ${proxy.port}, encrypt-method=${proxy.method}, password="${proxy.password}", udp-relay=true`;
    case "hysteria2": {
      const fields = ["hysteria2", proxy.server, proxy.port, `password="${proxy.password}"`];
      if (proxy.sni) fields.push(`sni=${proxy.sni}`);
      if (proxy.insecure) fields.push("skip-cert-verify=true");
      if (proxy.obfsPassword) fields.push(`salamander-password=${proxy.obfsPassword}`);
      return head + fields.join(", ");
    }
  }
}

export function surgeProfile(format: "surge" | "surfboard", input: RenderInput): string {
  // The service filters already; filtering again keeps a line the app cannot parse out for sure.
  const proxies = input.proxies.filter(
    (proxy): proxy is SurgeProxy => proxy.type !== "vless" && supports(format, proxy),
  );
  const names = proxies.map((proxy) => proxy.name).join(", ");
  const group = groupNames(input.toggles);
  // Released DNS (inXinjiang): resolvers given as plain IPs instead of whatever the system has.
  const dnsServers = input.toggles.releaseDns ? releasedDnsServers(input.toggles).join(", ") : "system";
  return [
    `#!MANAGED-CONFIG ${input.url} interval=${UPDATE_INTERVAL_SECONDS} strict=false`,
    "",
    "[General]",
    "loglevel = notify",
    `skip-proxy = ${SKIP_PROXY.join(", ")}`,
    `dns-server = ${dnsServers}`,
    "",
    "[Proxy]",
    ...proxies.map(surgeProxyLine),
    "",
    "[Proxy Group]",
    `${group.select} = select, ${group.auto}, ${names}`,
    `${group.auto} = url-test, ${names}, url=${TEST_URL}, interval=600`,
    "",
    "[Rule]",
    ...directRules(input.host, input.toggles),
    `FINAL,${group.select}`,
    "",
  ].join("\n");
}

const profileRenderer =
  (format: "surge" | "surfboard"): Renderer =>
  (input) => ({
    body: surgeProfile(format, input),
    contentType: "text/plain; charset=utf-8",
    filename: `${input.title}.conf`,
  });

export const renderSurge = profileRenderer("surge");
export const renderSurfboard = profileRenderer("surfboard");
