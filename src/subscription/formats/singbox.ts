/**
 * sing-box JSON (subscription-formats.md §4.6): a complete config, one outbound per proxy behind a
 * selector and an urltest, in the dialect of the client's core (`singbox-version.ts`): for 1.12
 * and later typed DNS servers, rule actions and `default_domain_resolver`; for 1.11 the legacy
 * DNS servers with rule actions; before 1.11 legacy DNS servers, the `dns` outbound and inbound
 * sniffing. The outbounds are the same in every dialect. SSR is never emitted: the core dropped it
 * in 1.6 and the model has no SSR-only entry.
 */
import type {
  Hysteria2Proxy,
  ProxyEntry,
  Renderer,
  ShadowsocksProxy,
  VlessRealityProxy,
  VmessProxy,
} from "../model.ts";
import { hostCidr } from "../rules.ts";
import { DEFAULT_SINGBOX_DIALECT, type SingboxDialect } from "../singbox-version.ts";
import { supports } from "../support.ts";

type Outbound = Record<string, unknown>;

function endpoint(proxy: ProxyEntry) {
  return { tag: proxy.name, server: proxy.server, server_port: proxy.port };
}

function vmess(proxy: VmessProxy): Outbound {
  return {
    type: "vmess",
    ...endpoint(proxy),
    uuid: proxy.uuid,
    security: "auto",
    alter_id: 0,
    ...(proxy.tls && { tls: { enabled: true, server_name: proxy.sni, insecure: false } }),
    ...(proxy.network === "ws" && {
      transport: { type: "ws", path: proxy.wsPath, headers: { Host: proxy.wsHost } },
    }),
  };
}

function vlessReality(proxy: VlessRealityProxy): Outbound {
  return {
    type: "vless",
    ...endpoint(proxy),
    uuid: proxy.uuid,
    flow: proxy.flow,
    tls: {
      enabled: true,
      server_name: proxy.sni,
      // The core refuses Reality without uTLS ("uTLS is required by reality client").
      utls: { enabled: true, fingerprint: proxy.fingerprint },
      reality: { enabled: true, public_key: proxy.publicKey, short_id: proxy.shortId },
    },
  };
}

function shadowsocks(proxy: ShadowsocksProxy): Outbound {
  return { type: "shadowsocks", ...endpoint(proxy), method: proxy.method, password: proxy.password };
}

function hysteria2(proxy: Hysteria2Proxy): Outbound {
  return {
    type: "hysteria2",
    ...endpoint(proxy),
    password: proxy.password,
    tls: {
      enabled: true,
      ...(proxy.sni !== "" && { server_name: proxy.sni }),
      insecure: proxy.insecure,
    },
    ...(proxy.obfsPassword !== "" && { obfs: { type: "salamander", password: proxy.obfsPassword } }),
  };
}

function outbound(proxy: ProxyEntry): Outbound {
  switch (proxy.type) {
    case "vmess":
      return vmess(proxy);
    case "vless":
      return vlessReality(proxy);
    case "ss":
      return shadowsocks(proxy);
    case "hysteria2":
      return hysteria2(proxy);
  }
}

/** The selector `proxy` (default `auto`) and the urltest `auto`; an empty group is invalid, so none then. */
function groups(tags: string[]): Outbound[] {
  if (tags.length === 0) return [{ type: "selector", tag: "proxy", outbounds: ["direct"] }];
  return [
    { type: "selector", tag: "proxy", outbounds: ["auto", ...tags], default: "auto" },
    { type: "urltest", tag: "auto", outbounds: tags, interval: "3m" },
  ];
}

/** Keeps subscription updates off the proxy, whether the server is named or addressed by IP. */
function subscriptionHostRule(host: string) {
  const cidr = hostCidr(host);
  return cidr ? { ip_cidr: [cidr], outbound: "direct" } : { domain: [host], outbound: "direct" };
}

/** DNS through the proxy to an IP resolver; the local resolver for the proxy servers' own names. */
function dns(dialect: SingboxDialect) {
  if (dialect === "1.12")
    return {
      servers: [
        { type: "https", tag: "remote", server: "1.1.1.1", detour: "proxy" },
        { type: "local", tag: "local" },
      ],
      final: "remote",
      strategy: "prefer_ipv4",
    };
  // Legacy servers (the only form before 1.12); the `outbound` rule sends the proxy servers' own
  // names to the local resolver, what `default_domain_resolver` does from 1.12.
  return {
    servers: [
      { tag: "remote", address: "https://1.1.1.1/dns-query", detour: "proxy" },
      { tag: "local", address: "local", detour: "direct" },
    ],
    rules: [{ outbound: "any", server: "local" }],
    final: "remote",
    strategy: "prefer_ipv4",
  };
}

/** Before 1.11 an inbound sniffs itself (the `sniff` rule action is 1.11's). */
function inbounds(dialect: SingboxDialect) {
  const sniff = dialect === "1.10" ? { sniff: true } : {};
  return [
    {
      type: "tun",
      tag: "tun-in",
      address: ["172.19.0.1/30", "fdfe:dcba:9876::1/126"],
      auto_route: true,
      strict_route: true,
      ...sniff,
    },
    { type: "mixed", tag: "mixed-in", listen: "127.0.0.1", listen_port: 2080, ...sniff },
  ];
}

/** The legacy `dns` outbound answers hijacked DNS before 1.11; later cores use the `hijack-dns` action. */
const specialOutbounds = (dialect: SingboxDialect): Outbound[] =>
  dialect === "1.10" ? [{ type: "dns", tag: "dns-out" }] : [];

function route(dialect: SingboxDialect, host: string) {
  const direct = [{ ip_is_private: true, outbound: "direct" }, subscriptionHostRule(host)];
  const common = { final: "proxy", auto_detect_interface: true };
  if (dialect === "1.10") return { rules: [{ protocol: "dns", outbound: "dns-out" }, ...direct], ...common };
  const rules = [{ action: "sniff" }, { protocol: "dns", action: "hijack-dns" }, ...direct];
  if (dialect === "1.11") return { rules, ...common };
  // Proxy servers given by name resolve locally, not through the proxied DNS (a loop).
  return { rules, ...common, default_domain_resolver: "local" };
}

export const renderSingbox: Renderer = (input) => {
  const dialect = input.singbox ?? DEFAULT_SINGBOX_DIALECT;
  const usable = input.proxies.filter((proxy) => supports("singbox", proxy));
  const config = {
    log: { level: "warn" },
    dns: dns(dialect),
    inbounds: inbounds(dialect),
    outbounds: [
      ...groups(usable.map((proxy) => proxy.name)),
      { type: "direct", tag: "direct" },
      ...specialOutbounds(dialect),
      ...usable.map(outbound),
    ],
    route: route(dialect, input.host),
  };
  return {
    body: `${JSON.stringify(config, null, 2)}\n`,
    contentType: "application/json; charset=utf-8",
    filename: `${input.title}.json`,
  };
};
