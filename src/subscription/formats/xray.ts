/**
 * Xray JSON (issue 29 §5; Xray's config docs at xtls.github.io/config): a JSON array of complete
 * client configs, one per line and one per proxy, for Happ, Streisand, V2Box and v2rayNG. Each has
 * its `remarks`, SOCKS and HTTP inbounds on loopback (10808/10809, v2rayNG's own ports, which its
 * VPN mode hands traffic to), the line's outbound tagged `proxy`, `direct` and `block`, and rules
 * that keep the subscription server, private networks and (unless the customer is abroad) China
 * direct, as the Clash profile does. The fields are those Xray and v2fly 4.x/5.x read alike, except
 * what only Xray has (REALITY, `flow`, 2022 ciphers); docs/decisions.md says what differs.
 */
import type {
  ProfileToggles,
  ProxyEntry,
  Renderer,
  RenderInput,
  ShadowsocksProxy,
  VlessRealityProxy,
  VmessProxy,
} from "../model.ts";
import { DIRECT_DOMAINS, hostCidr, PRIVATE_NETWORKS, releasedDnsServers } from "../rules.ts";
import { supports } from "../support.ts";

type XrayOutbound = Record<string, unknown>;
type RoutingRule = { type: "field"; outboundTag: "direct" | "block"; domain?: string[]; ip?: string[] };

/** The local ports v2rayNG's VPN mode (tun2socks) and HTTP proxy setting expect. */
export const SOCKS_PORT = 10808;
export const HTTP_PORT = 10809;

function vmess(proxy: VmessProxy): XrayOutbound {
  return {
    protocol: "vmess",
    settings: {
      vnext: [
        {
          address: proxy.server,
          port: proxy.port,
          // alterId 0 is AEAD; Xray has only AEAD and ignores the field, v2fly 4.x needs it 0.
          users: [{ id: proxy.uuid, alterId: 0, security: "auto" }],
        },
      ],
    },
    streamSettings: {
      network: proxy.network,
      security: proxy.tls ? "tls" : "none",
      ...(proxy.tls && { tlsSettings: { serverName: proxy.sni } }),
      ...(proxy.network === "ws" && {
        // Xray reads `host`; v2fly (and Xray before 24.9) the Host header.
        wsSettings: { path: proxy.wsPath, host: proxy.wsHost, headers: { Host: proxy.wsHost } },
      }),
    },
  };
}

function vlessReality(proxy: VlessRealityProxy): XrayOutbound {
  return {
    protocol: "vless",
    settings: {
      vnext: [
        {
          address: proxy.server,
          port: proxy.port,
          users: [{ id: proxy.uuid, encryption: "none", flow: proxy.flow }],
        },
      ],
    },
    streamSettings: {
      network: "tcp",
      security: "reality",
      realitySettings: {
        serverName: proxy.sni,
        fingerprint: proxy.fingerprint,
        publicKey: proxy.publicKey,
        shortId: proxy.shortId,
      },
    },
  };
}

function shadowsocks(proxy: ShadowsocksProxy): XrayOutbound {
  return {
    protocol: "shadowsocks",
    settings: {
      servers: [{ address: proxy.server, port: proxy.port, method: proxy.method, password: proxy.password }],
    },
  };
}

type XrayProxy = Exclude<ProxyEntry, { type: "hysteria2" }>;

function proxyOutbound(proxy: XrayProxy): XrayOutbound {
  switch (proxy.type) {
    case "vmess":
      return vmess(proxy);
    case "vless":
      return vlessReality(proxy);
    case "ss":
      return shadowsocks(proxy);
  }
}

const direct = (match: { domain: string[] } | { ip: string[] }): RoutingRule => ({
  type: "field",
  ...match,
  outboundTag: "direct",
});

/**
 * The Clash profile's DIRECT rules (rules.ts directRules) in Xray's form. Private networks are
 * listed as CIDRs rather than `geoip:private`, so a core without geoip.dat (Debian's v2ray) loads
 * the file of a customer abroad too.
 */
export function routingRules(host: string, toggles: ProfileToggles): RoutingRule[] {
  const cidr = hostCidr(host);
  const rules = [
    direct(cidr ? { ip: [cidr] } : { domain: [`full:${host}`] }),
    direct({ ip: [...PRIVATE_NETWORKS] }),
  ];
  if (toggles.abroad) return rules;
  if (toggles.releaseDns) rules.push(direct({ domain: DIRECT_DOMAINS.map((domain) => `domain:${domain}`) }));
  rules.push(direct({ ip: ["geoip:cn"] }));
  return rules;
}

const SNIFFING = { enabled: true, destOverride: ["http", "tls"], routeOnly: true };

export function xrayConfig(proxy: XrayProxy, input: RenderInput) {
  const { toggles } = input;
  return {
    remarks: proxy.name,
    log: { loglevel: "warning" },
    // Released DNS (inXinjiang): resolvers given as plain IPs, as in the Clash profile.
    ...(toggles.releaseDns && { dns: { servers: [...releasedDnsServers(toggles)] } }),
    inbounds: [
      {
        tag: "socks",
        listen: "127.0.0.1",
        port: SOCKS_PORT,
        protocol: "socks",
        settings: { auth: "noauth", udp: true },
        sniffing: SNIFFING,
      },
      {
        tag: "http",
        listen: "127.0.0.1",
        port: HTTP_PORT,
        protocol: "http",
        settings: {},
        sniffing: SNIFFING,
      },
    ],
    outbounds: [
      { tag: "proxy", ...proxyOutbound(proxy) },
      { tag: "direct", protocol: "freedom", settings: {} },
      { tag: "block", protocol: "blackhole", settings: {} },
    ],
    routing: {
      // Released DNS: nothing is resolved on the customer's network to choose a rule, so only
      // connections made to an IP meet the IP rules; otherwise a name is resolved when no name rule
      // matched, as Clash's GEOIP rule does.
      domainStrategy: toggles.releaseDns ? "AsIs" : "IPIfNonMatch",
      rules: routingRules(input.host, toggles),
    },
  };
}

export const renderXray: Renderer = (input) => {
  // The service filters already; filtering again keeps a protocol the core cannot parse out for sure.
  const usable = input.proxies.filter(
    (proxy): proxy is XrayProxy => proxy.type !== "hysteria2" && supports("xray", proxy),
  );
  const lines = usable.map((proxy) => JSON.stringify(xrayConfig(proxy, input)));
  return {
    body: `[\n${lines.join(",\n")}\n]\n`,
    contentType: "application/json; charset=utf-8",
    filename: `${input.title}.json`,
  };
};
