/**
 * Clash-family YAML (subscription-formats.md §4.3–§4.5): a complete config with general keys,
 * proxies, a select group over an url-test group, and rules. The original core gets vmess and
 * classic-AEAD ss only; mihomo and Stash also get VLESS Reality and Hysteria2, Stash with its
 * own key names (`auth`, `sni` beside `servername`).
 */
import { stringify } from "yaml";
import {
  type Hysteria2Proxy,
  type ProfileToggles,
  type ProxyEntry,
  type Rendered,
  type Renderer,
  type RenderInput,
  type ShadowsocksProxy,
  usageText,
  type VlessRealityProxy,
  type VmessProxy,
} from "../model.ts";
import { directRules, releasedDnsServers, TEST_URL } from "../rules.ts";
import { supports } from "../support.ts";

type ClashFormat = "clash" | "mihomo" | "stash";
type ClashProxy = Record<string, unknown>;

export const SELECT_GROUP = "节点选择";
export const AUTO_GROUP = "自动选择";
/** The same groups for a customer with English node names (Clash and Surge profiles). */
export const ENGLISH_SELECT_GROUP = "Proxy";
export const ENGLISH_AUTO_GROUP = "Auto";

export function groupNames(toggles: ProfileToggles): { select: string; auto: string } {
  return toggles.english
    ? { select: ENGLISH_SELECT_GROUP, auto: ENGLISH_AUTO_GROUP }
    : { select: SELECT_GROUP, auto: AUTO_GROUP };
}

function endpoint(proxy: ProxyEntry) {
  return { name: proxy.name, type: proxy.type, server: proxy.server, port: proxy.port };
}

function vmess(proxy: VmessProxy): ClashProxy {
  return {
    ...endpoint(proxy),
    uuid: proxy.uuid,
    alterId: 0,
    cipher: "auto",
    udp: true,
    ...(proxy.tls && { tls: true, servername: proxy.sni, "skip-cert-verify": false }),
    ...(proxy.network === "ws" && {
      network: "ws",
      "ws-opts": { path: proxy.wsPath, headers: { Host: proxy.wsHost } },
    }),
  };
}

function shadowsocks(proxy: ShadowsocksProxy): ClashProxy {
  return { ...endpoint(proxy), cipher: proxy.method, password: proxy.password, udp: true };
}

function vlessReality(proxy: VlessRealityProxy, format: ClashFormat): ClashProxy {
  return {
    ...endpoint(proxy),
    uuid: proxy.uuid,
    network: "tcp",
    udp: true,
    tls: true,
    flow: proxy.flow,
    servername: proxy.sni,
    // Stash reads the SNI from `sni`; mihomo from `servername`.
    ...(format === "stash" && { sni: proxy.sni }),
    "client-fingerprint": proxy.fingerprint,
    "reality-opts": { "public-key": proxy.publicKey, "short-id": proxy.shortId },
  };
}

function hysteria2(proxy: Hysteria2Proxy, format: ClashFormat): ClashProxy {
  return {
    ...endpoint(proxy),
    [format === "stash" ? "auth" : "password"]: proxy.password,
    ...(proxy.sni !== "" && { sni: proxy.sni }),
    "skip-cert-verify": proxy.insecure,
    ...(proxy.obfsPassword !== "" && { obfs: "salamander", "obfs-password": proxy.obfsPassword }),
  };
}

function clashProxy(proxy: ProxyEntry, format: ClashFormat): ClashProxy {
  switch (proxy.type) {
    case "vmess":
      return vmess(proxy);
    case "ss":
      return shadowsocks(proxy);
    case "vless":
      return vlessReality(proxy, format);
    case "hysteria2":
      return hysteria2(proxy, format);
  }
}

/** The shared DIRECT rules, then everything else through the select group. */
const rules = (input: RenderInput): string[] => [
  ...directRules(input.host, input.toggles),
  `MATCH,${groupNames(input.toggles).select}`,
];

function proxyGroups(names: string[], toggles: ProfileToggles) {
  const group = groupNames(toggles);
  // A group with no members fails to load; with nothing to test, the select group offers DIRECT.
  if (names.length === 0) return [{ name: group.select, type: "select", proxies: ["DIRECT"] }];
  return [
    { name: group.select, type: "select", proxies: [group.auto, ...names] },
    { name: group.auto, type: "url-test", proxies: names, url: TEST_URL, interval: 300 },
  ];
}

/**
 * Released DNS (inXinjiang): the core answers apps with fake IPs, so a name meant for the proxy is
 * never looked up on the customer's network, and what it does resolve (direct mainland names)
 * goes to resolvers given as plain IPs: nothing needs bootstrapping. Without the toggle the
 * profile has no `dns` section and the client keeps its own settings.
 */
function releasedDns(toggles: ProfileToggles) {
  const servers = releasedDnsServers(toggles);
  return {
    enable: true,
    ipv6: false,
    "enhanced-mode": "fake-ip",
    "fake-ip-range": "198.18.0.1/16",
    "fake-ip-filter": ["*.lan", "*.local", "*.msftconnecttest.com", "*.msftncsi.com"],
    // Two arrays, not one shared: the YAML writer would turn a shared one into an anchor and alias.
    "default-nameserver": [...servers],
    nameserver: [...servers],
  };
}

function renderClashFamily(format: ClashFormat, input: RenderInput): Rendered {
  // The service filters already; filtering again keeps a protocol the core cannot parse out for sure.
  const usable = input.proxies.filter((proxy) => supports(format, proxy));
  const config = {
    "mixed-port": 7890,
    "allow-lan": false,
    mode: "rule",
    "log-level": "info",
    ...(input.toggles.releaseDns && { dns: releasedDns(input.toggles) }),
    proxies: usable.map((proxy) => clashProxy(proxy, format)),
    "proxy-groups": proxyGroups(
      usable.map((proxy) => proxy.name),
      input.toggles,
    ),
    rules: rules(input),
  };
  // Clash for Windows reads usage from this first line (§3.1).
  const usageLine = `# ${usageText(input.usage)};`;
  // YAML 1.1 output quotes scalars such as `yes`/`on` that Go's 1.1 readers would turn into booleans.
  const yaml = stringify(config, { version: "1.1", lineWidth: 0 });
  return { body: `${usageLine}\n${yaml}`, contentType: "text/yaml; charset=utf-8", filename: input.title };
}

export const renderClash: Renderer = (input) => renderClashFamily("clash", input);
export const renderMihomo: Renderer = (input) => renderClashFamily("mihomo", input);
export const renderStash: Renderer = (input) => renderClashFamily("stash", input);
