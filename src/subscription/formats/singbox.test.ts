/**
 * sing-box JSON (subscription-formats.md §4.6): golden files for the fixture and for a notice,
 * and a structural check of the config as a 1.12+ core would load it.
 *
 * The golden files are in ./golden. After an intended change to the output, regenerate them with
 *   UPDATE_GOLDEN=1 bun test src/subscription/formats/singbox.test.ts
 * and read the diff before committing.
 */
import { describe, expect, test } from "bun:test";
import type { RenderInput } from "../model.ts";
import { Notice } from "../service.ts";
import { FIXTURE_PROXIES, fixtureInput, noticeInput } from "../test-fixture.ts";
import { expectGolden } from "./expect-golden.ts";
import { renderSingbox } from "./singbox.ts";

type Json = Record<string, unknown>;
interface Outbound extends Json {
  type: string;
  tag: string;
  outbounds?: string[];
  tls?: {
    enabled?: boolean;
    server_name?: string;
    insecure?: boolean;
    utls?: { enabled?: boolean; fingerprint?: string };
    reality?: { enabled?: boolean; public_key?: string; short_id?: string };
  };
}
interface SingboxConfig {
  log: Json;
  dns: {
    servers: { type: string; tag: string; server?: string; detour?: string }[];
    final: string;
    strategy: string;
  };
  inbounds: Json[];
  outbounds: Outbound[];
  route: { rules: Json[]; final: string; auto_detect_interface: boolean; default_domain_resolver: string };
}

const GROUP_TYPES = ["selector", "urltest", "direct"];
const PROXY_TYPES = ["vmess", "vless", "shadowsocks", "hysteria2"];

/** What is wrong with an outbound that a 1.12 core would refuse or mis-dial. */
function outboundProblems(outbound: Outbound): string[] {
  const problems: string[] = [];
  const need = (ok: boolean, what: string) => {
    if (!ok) problems.push(`${outbound.tag}: ${what}`);
  };
  need(PROXY_TYPES.includes(outbound.type), `type ${outbound.type}`);
  need(typeof outbound.server === "string" && outbound.server !== "", "server");
  need(Number.isInteger(outbound.server_port), "server_port");
  const tls = outbound.tls;
  switch (outbound.type) {
    case "vmess":
      need(outbound.security === "auto" && outbound.alter_id === 0, "security auto, alter_id 0");
      if (tls) need(tls.enabled === true && !!tls.server_name && tls.insecure === false, "tls");
      break;
    case "vless":
      need(outbound.flow === "xtls-rprx-vision", "flow");
      if (tls?.reality) {
        // "uTLS is required by reality client"
        need(tls.utls?.enabled === true && !!tls.utls.fingerprint, "utls with reality");
        need(tls.enabled === true && !!tls.server_name && !!tls.reality.public_key, "reality tls");
      }
      break;
    case "shadowsocks":
      need(!!outbound.method && !!outbound.password, "method and password");
      break;
    case "hysteria2":
      need(!!outbound.password && tls?.enabled === true, "password and tls");
      if (!tls?.server_name) need(tls?.insecure === true, "no server_name yet verifying the certificate");
      break;
  }
  return problems;
}

function load(body: string): SingboxConfig {
  return JSON.parse(body) as SingboxConfig;
}

function expectComplete(config: SingboxConfig, proxyCount: number) {
  expect(config.inbounds.length).toBeGreaterThan(0);
  const tags = config.outbounds.map((outbound) => outbound.tag);
  expect(new Set(tags).size).toBe(tags.length);
  expect(config.outbounds.slice(0, 3).map((outbound) => outbound.type)).toEqual(GROUP_TYPES);
  const proxies = config.outbounds.slice(3);
  expect(proxies.length).toBe(proxyCount);
  expect(proxies.flatMap(outboundProblems)).toEqual([]);
  const groupMembers = config.outbounds.flatMap((outbound) => outbound.outbounds ?? []);
  expect(groupMembers.filter((tag) => !tags.includes(tag))).toEqual([]);
  expect(tags).toContain(config.route.final);
  const detours = config.dns.servers.flatMap((server) => server.detour ?? []);
  expect(detours.filter((tag) => !tags.includes(tag))).toEqual([]);
  const dnsTags = config.dns.servers.map((server) => server.tag);
  expect(dnsTags).toContain(config.dns.final);
  expect(dnsTags).toContain(config.route.default_domain_resolver);
}

describe("sing-box", () => {
  const input = fixtureInput("singbox");
  const rendered = renderSingbox(input);

  test("matches the golden file", () => {
    expectGolden("singbox.json", rendered.body);
  });

  test("is a complete config with one outbound per proxy behind the groups", () => {
    const config = load(rendered.body);
    expectComplete(config, input.proxies.length);
    const names = input.proxies.map((proxy) => proxy.name);
    expect(config.outbounds.slice(3).map((outbound) => outbound.tag)).toEqual(names);
    const [selector, urltest] = config.outbounds;
    expect(selector).toEqual({
      type: "selector",
      tag: "proxy",
      outbounds: ["auto", ...names],
      default: "auto",
    });
    expect(urltest).toEqual({ type: "urltest", tag: "auto", outbounds: names, interval: "3m" });
    expect(config.route.final).toBe("proxy");
  });

  test("uses 1.12 syntax: typed DNS servers, rule actions, tun address", () => {
    const config = load(rendered.body);
    expect(config.dns).toEqual({
      servers: [
        { type: "https", tag: "remote", server: "1.1.1.1", detour: "proxy" },
        { type: "local", tag: "local" },
      ],
      final: "remote",
      strategy: "prefer_ipv4",
    });
    expect(config.inbounds.map((inbound) => inbound.type)).toEqual(["tun", "mixed"]);
    expect(config.inbounds[0]).toHaveProperty("address");
    expect(config.inbounds[0]).not.toHaveProperty("inet4_address");
    expect(config.outbounds.map((outbound) => outbound.type)).not.toContain("dns");
    expect(config.outbounds.map((outbound) => outbound.type)).not.toContain("block");
    expect(config.route.rules.slice(0, 2)).toEqual([
      { action: "sniff" },
      { protocol: "dns", action: "hijack-dns" },
    ]);
    expect(config.route).toMatchObject({ auto_detect_interface: true, default_domain_resolver: "local" });
  });

  test("private networks and the subscription server go direct", () => {
    const { rules } = load(rendered.body).route;
    expect(rules).toContainEqual({ ip_is_private: true, outbound: "direct" });
    expect(rules).toContainEqual({ domain: ["sub.example.com"], outbound: "direct" });
    const byIp = load(renderSingbox({ ...input, host: "192.0.2.7" }).body).route.rules;
    expect(byIp).toContainEqual({ ip_cidr: ["192.0.2.7/32"], outbound: "direct" });
  });

  test("outbound shapes: vmess ws+tls, Reality with uTLS, 2022 ss, Hysteria2 without a domain", () => {
    const byTag = new Map(load(rendered.body).outbounds.map((outbound) => [outbound.tag, outbound]));
    expect(byTag.get("香港 CDN [0.5x]")).toEqual({
      type: "vmess",
      tag: "香港 CDN [0.5x]",
      server: "cdn.example.net",
      server_port: 443,
      uuid: "11111111-2222-3333-4444-555555555555",
      security: "auto",
      alter_id: 0,
      tls: { enabled: true, server_name: "hk.example.com", insecure: false },
      transport: { type: "ws", path: "/a1b2c3d4e5f6", headers: { Host: "hk.example.com" } },
    });
    expect(byTag.get("香港 TCP 01 [1x]")).not.toHaveProperty("tls");
    expect(byTag.get("香港 TCP 01 [1x]")).not.toHaveProperty("transport");
    expect(byTag.get("美国 Reality 中转-1 [1x]")).toEqual({
      type: "vless",
      tag: "美国 Reality 中转-1 [1x]",
      server: "198.51.100.1",
      server_port: 443,
      uuid: "11111111-2222-3333-4444-555555555555",
      flow: "xtls-rprx-vision",
      tls: {
        enabled: true,
        server_name: "www.example.org",
        utls: { enabled: true, fingerprint: "chrome" },
        reality: {
          enabled: true,
          public_key: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
          short_id: "0123456789abcdef",
        },
      },
    });
    expect(byTag.get("日本 SS2022 [2x]")).toMatchObject({
      type: "shadowsocks",
      method: "2022-blake3-aes-128-gcm",
      password: "BwcHBwcHBwcHBwcHBwcHBw==:MTExMTExMTEtMjIyMi0zMw==",
    });
    expect(byTag.get("韩国 Hy2 [1x]")).toEqual({
      type: "hysteria2",
      tag: "韩国 Hy2 [1x]",
      server: "203.0.113.50",
      server_port: 8443,
      password: "11111111-2222-3333-4444-555555555555",
      tls: { enabled: true, insecure: true },
      obfs: { type: "salamander", password: "obfs-Pa55word" },
    });
  });

  test("every Reality outbound has uTLS, and no SSR is ever emitted", () => {
    const body = renderSingbox({ ...input, proxies: FIXTURE_PROXIES }).body;
    const config = load(body);
    const reality = config.outbounds.filter((outbound) => outbound.tls?.reality);
    expect(reality.length).toBe(FIXTURE_PROXIES.filter((proxy) => proxy.type === "vless").length);
    for (const outbound of reality)
      expect(outbound.tls?.utls).toEqual({ enabled: true, fingerprint: "chrome" });
    expect(body).not.toMatch(/shadowsocksr|"ssr"|obfs_param|"protocol": "origin"/);
  });

  test("names the profile and says it is JSON", () => {
    expect(rendered.contentType).toBe("application/json; charset=utf-8");
    expect(rendered.filename).toBe("飞渡.json");
  });

  test("a notice is the only proxy outbound and what the groups select", () => {
    const notice: RenderInput = noticeInput(Notice.noTraffic);
    const body = renderSingbox(notice).body;
    expectGolden("singbox.notice.json", body);
    const config = load(body);
    expectComplete(config, 1);
    expect(config.outbounds[3]?.tag).toBe(Notice.noTraffic);
    const [selector, urltest] = config.outbounds;
    expect(selector?.outbounds).toEqual(["auto", Notice.noTraffic]);
    expect(urltest?.outbounds).toEqual([Notice.noTraffic]);
  });

  test("with no proxies at all the selector falls back to direct and stays valid", () => {
    const config = load(renderSingbox({ ...input, proxies: [] }).body);
    expect(config.outbounds).toEqual([
      { type: "selector", tag: "proxy", outbounds: ["direct"] },
      { type: "direct", tag: "direct" },
    ]);
    expect(config.outbounds.map((outbound) => outbound.tag)).toContain(config.route.final);
  });
});
