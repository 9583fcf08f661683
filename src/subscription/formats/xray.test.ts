/**
 * The Xray JSON subscription (issue 29 §5): golden files, one complete config per line, and each
 * config read back as Xray reads it (xtls.github.io/config: inbounds, outbounds, routing).
 */
import { describe, expect, test } from "bun:test";
import type { ProxyEntry, ShadowsocksProxy, VlessRealityProxy, VmessProxy } from "../model.ts";
import { Notice } from "../service.ts";
import { supports } from "../support.ts";
import { FIXTURE_PROXIES, fixtureInput, noticeInput } from "../test-fixture.ts";
import { expectGolden } from "./expect-golden.ts";
import { HTTP_PORT, renderXray, SOCKS_PORT } from "./xray.ts";

interface Outbound {
  tag: string;
  protocol: string;
  settings: Record<string, unknown>;
  streamSettings?: Record<string, unknown>;
}
interface XrayConfig {
  remarks: string;
  inbounds: { tag: string; listen: string; port: number; protocol: string }[];
  outbounds: Outbound[];
  routing: { domainStrategy: string; rules: Record<string, unknown>[] };
}

const rendered = renderXray(fixtureInput("xray"));
const configs = JSON.parse(rendered.body) as XrayConfig[];
const expected = fixtureInput("xray").proxies;
const proxyOf = (config: XrayConfig) => config.outbounds[0] as Outbound;

describe("xray JSON", () => {
  test("golden file: a JSON array, one config a line, served as JSON named after the site", () => {
    expectGolden("xray.json", rendered.body);
    const lines = rendered.body.trimEnd().split("\n");
    expect(lines[0]).toBe("[");
    expect(lines.at(-1)).toBe("]");
    const middle = lines.slice(1, -1);
    expect(middle).toHaveLength(configs.length);
    middle.forEach((line, index) => {
      expect(JSON.parse(line.replace(/,$/, ""))).toEqual(configs[index] as XrayConfig);
    });
    expect(rendered.contentType).toBe("application/json; charset=utf-8");
    expect(rendered.filename).toBe("飞渡.json");
  });

  test("one config per proxy the format supports, in order, named by remarks; no Hysteria2", () => {
    expect(configs.map((config) => config.remarks)).toEqual(expected.map((proxy) => proxy.name));
    expect(expected.length).toBe(FIXTURE_PROXIES.filter((proxy) => proxy.type !== "hysteria2").length);
    expect(FIXTURE_PROXIES.some((proxy) => proxy.type === "hysteria2" && supports("xray", proxy))).toBe(
      false,
    );
  });

  test("each config: SOCKS and HTTP on loopback, the line's outbound first, then direct and block", () => {
    for (const config of configs) {
      expect(
        config.inbounds.map(({ tag, listen, port, protocol }) => ({ tag, listen, port, protocol })),
      ).toEqual([
        { tag: "socks", listen: "127.0.0.1", port: SOCKS_PORT, protocol: "socks" },
        { tag: "http", listen: "127.0.0.1", port: HTTP_PORT, protocol: "http" },
      ]);
      expect(config.outbounds.map((outbound) => [outbound.tag, outbound.protocol])).toEqual([
        ["proxy", proxyOf(config).protocol],
        ["direct", "freedom"],
        ["block", "blackhole"],
      ]);
      // Whatever no rule catches goes to the first outbound: the proxy.
      expect(
        config.routing.rules.every((rule) => rule.outboundTag === "direct" && rule.type === "field"),
      ).toBe(true);
    }
  });

  test("every outbound carries its proxy's server, credentials and transport", () => {
    expected.forEach((proxy: ProxyEntry, index) => {
      const outbound = proxyOf(configs[index] as XrayConfig);
      if (proxy.type === "vmess") expectVmess(outbound, proxy);
      else if (proxy.type === "vless") expectReality(outbound, proxy);
      else if (proxy.type === "ss") expectShadowsocks(outbound, proxy);
      else throw new Error(`unexpected ${proxy.type}`);
    });
  });

  test("a notice renders one valid config named after it", () => {
    const notice = renderXray(noticeInput(Notice.noTraffic));
    expectGolden("xray.notice.json", notice.body);
    const [only, ...rest] = JSON.parse(notice.body) as XrayConfig[];
    expect(rest).toEqual([]);
    expect(only?.remarks).toBe(Notice.noTraffic);
    expect(proxyOf(only as XrayConfig).settings).toEqual({
      servers: [{ address: "127.0.0.1", port: 1, method: "aes-256-gcm", password: "0" }],
    });
  });
});

function expectVmess(outbound: Outbound, proxy: VmessProxy) {
  expect(outbound.protocol).toBe("vmess");
  expect(outbound.settings).toEqual({
    vnext: [
      { address: proxy.server, port: proxy.port, users: [{ id: proxy.uuid, alterId: 0, security: "auto" }] },
    ],
  });
  const stream = outbound.streamSettings as Record<string, unknown>;
  expect(stream.network).toBe(proxy.network);
  expect(stream.security).toBe(proxy.tls ? "tls" : "none");
  expect(stream.tlsSettings).toEqual(proxy.tls ? { serverName: proxy.sni } : undefined);
  expect(stream.wsSettings).toEqual(
    proxy.network === "ws"
      ? { path: proxy.wsPath, host: proxy.wsHost, headers: { Host: proxy.wsHost } }
      : undefined,
  );
}

function expectReality(outbound: Outbound, proxy: VlessRealityProxy) {
  expect(outbound.protocol).toBe("vless");
  expect(outbound.settings).toEqual({
    vnext: [
      {
        address: proxy.server,
        port: proxy.port,
        users: [{ id: proxy.uuid, encryption: "none", flow: "xtls-rprx-vision" }],
      },
    ],
  });
  expect(outbound.streamSettings).toEqual({
    network: "tcp",
    security: "reality",
    realitySettings: {
      serverName: proxy.sni,
      fingerprint: "chrome",
      publicKey: proxy.publicKey,
      shortId: proxy.shortId,
    },
  });
}

function expectShadowsocks(outbound: Outbound, proxy: ShadowsocksProxy) {
  expect(outbound.protocol).toBe("shadowsocks");
  expect(outbound.settings).toEqual({
    servers: [{ address: proxy.server, port: proxy.port, method: proxy.method, password: proxy.password }],
  });
  // 2022 ciphers: the server key and the user's key, as Xray's multi-user client takes them.
  if (proxy.method.startsWith("2022-")) expect(proxy.password).toMatch(/^[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
  expect(outbound.streamSettings).toBeUndefined();
}
