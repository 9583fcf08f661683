/**
 * sing-box JSON (subscription-formats.md §4.6): golden files for the fixture and for a notice,
 * and a structural check of the config as a 1.12+ core would load it; then one golden file per
 * older dialect (1.11, before 1.11), each checked against the option fields that core decodes.
 *
 * The golden files are in ./golden. After an intended change to the output, regenerate them with
 *   UPDATE_GOLDEN=1 bun test src/subscription/formats/singbox.test.ts
 * and read the diff before committing.
 */
import { describe, expect, test } from "bun:test";
import { NO_TOGGLES, type ProfileToggles, type RenderInput } from "../model.ts";
import { Notice } from "../service.ts";
import { SINGBOX_DIALECTS, type SingboxDialect } from "../singbox-version.ts";
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

// ---- per core version (issue 29) -----------------------------------------------------------

/**
 * The fields each core decodes, from SagerNet/sing-box's option structs (option/route.go,
 * option/rule.go + rule_action.go, option/dns.go, option/inbound.go) at v1.10.7, v1.11.15 and
 * v1.13.2. sing-box decodes strictly: a field its version does not know stops the config
 * ("json: unknown field"). Only the fields Ferry could plausibly write are listed.
 */
const ROUTE_FIELDS: Record<SingboxDialect, string[]> = {
  "1.10": ["rules", "rule_set", "final", "find_process", "auto_detect_interface", "default_interface"],
  "1.11": ["rules", "rule_set", "final", "find_process", "auto_detect_interface", "default_interface"],
  "1.12": [
    "rules",
    "rule_set",
    "final",
    "find_process",
    "auto_detect_interface",
    "default_interface",
    "default_domain_resolver",
  ],
};
const ROUTE_RULE_FIELDS = ["protocol", "ip_is_private", "ip_cidr", "domain", "domain_suffix", "outbound"];
const RULE_ACTIONS = ["sniff", "hijack-dns", "reject", "route", "resolve"];
const LEGACY_DNS_SERVER_FIELDS = [
  "tag",
  "address",
  "address_resolver",
  "address_strategy",
  "strategy",
  "detour",
];
const DNS_SERVER_FIELDS = ["type", "tag", "server", "server_port", "path", "detour", "domain_resolver"];

const unknown = (object: object, known: string[]) =>
  Object.keys(object).filter((key) => !known.includes(key));

interface AnyConfig {
  dns: { servers: Json[]; rules?: Json[]; final: string; strategy: string };
  inbounds: Json[];
  outbounds: Outbound[];
  route: Json & { rules: Json[]; final: string };
}

const renderAt = (dialect: SingboxDialect, toggles: ProfileToggles = NO_TOGGLES) =>
  renderSingbox({ ...fixtureInput("singbox", "", toggles), singbox: dialect }).body;

describe.each(SINGBOX_DIALECTS)("sing-box %s", (dialect) => {
  const body = renderAt(dialect);
  const config = JSON.parse(body) as AnyConfig;
  const golden = dialect === "1.12" ? "singbox.json" : `singbox.${dialect}.json`;

  test("matches its golden file (1.12: the default file)", () => {
    expectGolden(golden, body);
  });

  test("every route, rule and DNS server field is one this core decodes", () => {
    expect(unknown(config.route, ROUTE_FIELDS[dialect])).toEqual([]);
    const actionFields = dialect === "1.10" ? [] : ["action"];
    for (const rule of config.route.rules)
      expect(unknown(rule, [...ROUTE_RULE_FIELDS, ...actionFields])).toEqual([]);
    const serverFields = dialect === "1.12" ? DNS_SERVER_FIELDS : LEGACY_DNS_SERVER_FIELDS;
    for (const server of config.dns.servers) expect(unknown(server, serverFields)).toEqual([]);
    for (const rule of config.route.rules)
      if (rule.action !== undefined) expect(RULE_ACTIONS).toContain(rule.action as string);
  });

  test("the same proxies, groups and final in every dialect; every tag referred to exists", () => {
    const proxies = config.outbounds.filter((outbound) => PROXY_TYPES.includes(outbound.type));
    const current = JSON.parse(renderAt("1.12")) as AnyConfig;
    expect(proxies).toEqual(current.outbounds.filter((outbound) => PROXY_TYPES.includes(outbound.type)));
    expect(proxies.flatMap(outboundProblems)).toEqual([]);
    expect(config.outbounds.slice(0, 3)).toEqual(current.outbounds.slice(0, 3));
    const tags = config.outbounds.map((outbound) => outbound.tag);
    expect(new Set(tags).size).toBe(tags.length);
    const referred = [
      config.route.final,
      ...config.route.rules.flatMap((rule) => (rule.outbound ? [rule.outbound as string] : [])),
      ...config.dns.servers.flatMap((server) => (server.detour ? [server.detour as string] : [])),
    ];
    expect(referred.filter((tag) => !tags.includes(tag))).toEqual([]);
    const dnsTags = config.dns.servers.map((server) => server.tag as string);
    expect(dnsTags).toContain(config.dns.final);
    for (const rule of config.dns.rules ?? []) expect(dnsTags).toContain(rule.server as string);
  });

  test("proxy servers given by name resolve locally, never through the proxied DNS", () => {
    if (dialect === "1.12") expect(config.route.default_domain_resolver).toBe("local");
    else expect(config.dns.rules).toEqual([{ outbound: "any", server: "local" }]);
    const remote = config.dns.servers.find((server) => server.tag === "remote");
    expect(remote?.detour).toBe("proxy");
  });

  test("the profile toggles: English names in every group; releaseDns and abroad leave the file as it is", () => {
    for (const toggles of [
      { ...NO_TOGGLES, releaseDns: true },
      { ...NO_TOGGLES, abroad: true },
      { ...NO_TOGGLES, releaseDns: true, abroad: true },
    ])
      expect(renderAt(dialect, toggles)).toBe(body);
    const english = JSON.parse(renderAt(dialect, { ...NO_TOGGLES, english: true })) as AnyConfig;
    const tags = english.outbounds
      .filter((outbound) => PROXY_TYPES.includes(outbound.type))
      .map((o) => o.tag);
    expect(tags.length).toBe(fixtureInput("singbox").proxies.length);
    expect(tags.filter((tag) => /\p{Script=Han}/u.test(tag))).toEqual([]);
    expect(english.outbounds[0]?.outbounds).toEqual(["auto", ...tags]);
    expect(english.outbounds[1]?.outbounds).toEqual(tags);
  });
});

describe("what each dialect leaves out, by sing-box's deprecation notes", () => {
  const load = (dialect: SingboxDialect) => JSON.parse(renderAt(dialect)) as AnyConfig;
  const types = (config: AnyConfig) => config.outbounds.map((outbound) => outbound.type);

  test("1.12 and later: nothing deprecated from 1.11 to 1.14 (so 1.13 and 1.14 load it as it is)", () => {
    const config = load("1.12");
    expect(types(config)).not.toContain("dns"); // legacy special outbounds: removed in 1.13
    expect(types(config)).not.toContain("block");
    for (const inbound of config.inbounds) expect(inbound).not.toHaveProperty("sniff"); // removed in 1.13
    for (const server of config.dns.servers) expect(server).not.toHaveProperty("address"); // removed in 1.14
    expect(config.dns).not.toHaveProperty("rules"); // `outbound` DNS rule item: deprecated in 1.12
    expect(config.route.default_domain_resolver).toBe("local"); // missing it: deprecated in 1.12
  });

  test("1.11: legacy DNS servers (the typed ones are 1.12's) and rule actions, no legacy outbounds (deprecated in 1.11)", () => {
    const config = load("1.11");
    expect(config.dns.servers).toEqual([
      { tag: "remote", address: "https://1.1.1.1/dns-query", detour: "proxy" },
      { tag: "local", address: "local", detour: "direct" },
    ]);
    expect(types(config)).not.toContain("dns");
    expect(types(config)).not.toContain("block");
    for (const inbound of config.inbounds) expect(inbound).not.toHaveProperty("sniff");
    expect(config.route.rules.slice(0, 2)).toEqual([
      { action: "sniff" },
      { protocol: "dns", action: "hijack-dns" },
    ]);
    expect(config.route).not.toHaveProperty("default_domain_resolver");
  });

  test("before 1.11: no rule actions; the dns outbound answers DNS and the inbounds sniff", () => {
    const config = load("1.10");
    expect(config.outbounds).toContainEqual({ type: "dns", tag: "dns-out" });
    expect(config.route.rules[0]).toEqual({ protocol: "dns", outbound: "dns-out" });
    expect(JSON.stringify(config.route)).not.toContain('"action"');
    for (const inbound of config.inbounds) expect(inbound.sniff).toBe(true);
    expect(config.dns.servers.map((server) => server.address)).toEqual([
      "https://1.1.1.1/dns-query",
      "local",
    ]);
  });
});
