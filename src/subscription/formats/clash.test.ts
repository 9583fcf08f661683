/**
 * Clash, mihomo and Stash YAML (subscription-formats.md §4.3–§4.5): golden files for the fixture
 * and for a notice, and a structural check of every output as the core would load it.
 *
 * The golden files are in ./golden. After an intended change to the output, regenerate them with
 *   UPDATE_GOLDEN=1 bun test src/subscription/formats/clash.test.ts
 * and read the diff before committing.
 */
import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import type { Renderer, RenderInput } from "../model.ts";
import { Notice } from "../service.ts";
import { FIXTURE_PROXIES, fixtureInput, noticeInput } from "../test-fixture.ts";
import { AUTO_GROUP, renderClash, renderMihomo, renderStash, SELECT_GROUP } from "./clash.ts";
import { expectGolden } from "./expect-golden.ts";

type YamlProxy = Record<string, unknown>;
interface ClashConfig {
  "mixed-port": number;
  "allow-lan": boolean;
  mode: string;
  "log-level": string;
  proxies: YamlProxy[];
  "proxy-groups": { name: string; type: string; proxies: string[]; url?: string; interval?: number }[];
  rules: string[];
}

const FORMATS = [
  { format: "clash", render: renderClash },
  { format: "mihomo", render: renderMihomo },
  { format: "stash", render: renderStash },
] as const;
type ClashFormat = (typeof FORMATS)[number]["format"];

const AEAD = ["aes-128-gcm", "aes-256-gcm", "chacha20-ietf-poly1305"];
/** The ss ciphers each core loads (§2): no 2022 in Clash, only the AES 2022 methods in Stash. */
const CIPHERS: Record<ClashFormat, string[]> = {
  clash: AEAD,
  mihomo: [...AEAD, "2022-blake3-aes-128-gcm", "2022-blake3-aes-256-gcm", "2022-blake3-chacha20-poly1305"],
  stash: [...AEAD, "2022-blake3-aes-128-gcm", "2022-blake3-aes-256-gcm"],
};
const PROXY_TYPES: Record<ClashFormat, string[]> = {
  clash: ["vmess", "ss"],
  mihomo: ["vmess", "ss", "vless", "hysteria2"],
  stash: ["vmess", "ss", "vless", "hysteria2"],
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const nonEmpty = (value: unknown) => typeof value === "string" && value !== "";

/** What the core needs to load a proxy of each type; the list of what is wrong with one. */
function proxyProblems(proxy: YamlProxy, format: ClashFormat): string[] {
  const problems: string[] = [];
  const need = (ok: boolean, what: string) => {
    if (!ok) problems.push(`${String(proxy.name)}: ${what}`);
  };
  need(nonEmpty(proxy.name), "name");
  need(PROXY_TYPES[format].includes(proxy.type as string), `type ${String(proxy.type)}`);
  need(nonEmpty(proxy.server), "server");
  need(Number.isInteger(proxy.port) && (proxy.port as number) > 0 && (proxy.port as number) < 65536, "port");
  const ws = proxy["ws-opts"] as { path?: unknown; headers?: { Host?: unknown } } | undefined;
  const reality = proxy["reality-opts"] as { "public-key"?: unknown; "short-id"?: unknown } | undefined;
  switch (proxy.type) {
    case "vmess":
      need(UUID.test(String(proxy.uuid)), "uuid");
      need(proxy.alterId === 0, "alterId 0");
      need(proxy.cipher === "auto", "cipher auto");
      if (proxy.network === "ws")
        need(nonEmpty(ws?.path) && nonEmpty(ws?.headers?.Host), "ws-opts path and Host");
      if (proxy.tls) need(nonEmpty(proxy.servername) && proxy["skip-cert-verify"] === false, "servername");
      break;
    case "ss":
      need(CIPHERS[format].includes(proxy.cipher as string), `cipher ${String(proxy.cipher)}`);
      need(nonEmpty(proxy.password), "password");
      break;
    case "vless":
      need(UUID.test(String(proxy.uuid)), "uuid");
      need(proxy.network === "tcp" && proxy.tls === true, "network tcp with tls");
      need(proxy.flow === "xtls-rprx-vision", "flow");
      need(nonEmpty(proxy.servername), "servername");
      if (format === "stash") need(proxy.sni === proxy.servername, "sni beside servername");
      if (reality) {
        need(nonEmpty(reality["public-key"]) && typeof reality["short-id"] === "string", "reality-opts");
        need(nonEmpty(proxy["client-fingerprint"]), "client-fingerprint");
      }
      break;
    case "hysteria2": {
      const [key, other] = format === "stash" ? ["auth", "password"] : ["password", "auth"];
      need(nonEmpty(proxy[key]) && !(other in proxy), `${key} (not ${other})`);
      need(typeof proxy["skip-cert-verify"] === "boolean", "skip-cert-verify");
      if ("sni" in proxy) need(nonEmpty(proxy.sni), "sni empty");
      else need(proxy["skip-cert-verify"] === true, "no sni yet verifying the certificate");
      if ("obfs" in proxy) need(proxy.obfs === "salamander" && nonEmpty(proxy["obfs-password"]), "obfs");
      break;
    }
  }
  return problems;
}

/** Loads the file as both YAML 1.1 (Go's older readers) and 1.2 readers do; they must agree. */
function load(body: string): ClashConfig {
  const config = parse(body) as ClashConfig;
  expect(parse(body, { version: "1.1" })).toEqual(config);
  return config;
}

/** Everything a group names is a proxy, another group or a built-in policy. */
function unknownGroupMembers(config: ClashConfig): string[] {
  const known = new Set([
    ...config.proxies.map((proxy) => proxy.name as string),
    ...config["proxy-groups"].map((group) => group.name),
    "DIRECT",
  ]);
  return config["proxy-groups"].flatMap((group) => group.proxies).filter((name) => !known.has(name));
}

function expectLoadable(config: ClashConfig, format: ClashFormat) {
  expect(config.proxies.length).toBeGreaterThan(0);
  expect(config.proxies.flatMap((proxy) => proxyProblems(proxy, format))).toEqual([]);
  const names = config.proxies.map((proxy) => proxy.name);
  expect(new Set(names).size).toBe(names.length);
  expect(unknownGroupMembers(config)).toEqual([]);
  for (const group of config["proxy-groups"]) expect(group.proxies.length).toBeGreaterThan(0);
  const finalRule = config.rules.at(-1) ?? "";
  expect(finalRule).toBe(`MATCH,${SELECT_GROUP}`);
  expect(config["proxy-groups"].map((group) => group.name)).toContain(SELECT_GROUP);
}

const usageLine = ({ usage }: RenderInput) =>
  `# upload=${usage.upload}; download=${usage.download}; total=${usage.total}; expire=${usage.expire};`;

describe.each(FORMATS)("$format", ({ format, render }: { format: ClashFormat; render: Renderer }) => {
  const input = fixtureInput(format);
  const rendered = render(input);

  test("matches the golden file", () => {
    expectGolden(`${format}.yaml`, rendered.body);
  });

  test("is a complete config the core loads, with every proxy the format supports", () => {
    const config = load(rendered.body);
    expect(config["mixed-port"]).toBe(7890);
    expect(config["allow-lan"]).toBe(false);
    expect(config.mode).toBe("rule");
    expect(config["log-level"]).toBe("info");
    expectLoadable(config, format);
    expect(config.proxies.map((proxy) => proxy.name)).toEqual(input.proxies.map((proxy) => proxy.name));
  });

  test("selects between the url-test group and every proxy", () => {
    const config = load(rendered.body);
    const names = config.proxies.map((proxy) => proxy.name);
    const [select, auto] = config["proxy-groups"];
    expect(select).toEqual({
      name: SELECT_GROUP,
      type: "select",
      proxies: [AUTO_GROUP, ...(names as string[])],
    });
    expect(auto).toEqual({
      name: AUTO_GROUP,
      type: "url-test",
      proxies: names as string[],
      url: "http://www.gstatic.com/generate_204",
      interval: 300,
    });
  });

  test("keeps the subscription server, private networks and China off the proxy", () => {
    const { rules } = load(rendered.body);
    expect(rules[0]).toBe("DOMAIN,sub.example.com,DIRECT");
    expect(rules).toContain("IP-CIDR,192.168.0.0/16,DIRECT,no-resolve");
    expect(rules).toContain("GEOIP,CN,DIRECT");
  });

  test("a server addressed by IP gets an IP rule", () => {
    expect(load(render({ ...input, host: "192.0.2.7" }).body).rules[0]).toBe(
      "IP-CIDR,192.0.2.7/32,DIRECT,no-resolve",
    );
    expect(load(render({ ...input, host: "[2001:db8::1]" }).body).rules[0]).toBe(
      "IP-CIDR6,2001:db8::1/128,DIRECT,no-resolve",
    );
  });

  test("starts with the usage line Clash for Windows reads and names the profile", () => {
    expect(rendered.body.split("\n")[0]).toBe(usageLine(input));
    expect(rendered.contentType).toBe("text/yaml; charset=utf-8");
    expect(rendered.filename).toBe("飞渡");
  });

  test("never emits a proxy the core cannot load, even when handed one", () => {
    const config = load(render({ ...input, proxies: FIXTURE_PROXIES }).body);
    expectLoadable(config, format);
  });

  test("a notice is the only proxy and what the groups select", () => {
    const notice = noticeInput(Notice.noTraffic);
    const body = render(notice).body;
    expectGolden(`${format}.notice.yaml`, body);
    const config = load(body);
    expectLoadable(config, format);
    expect(config.proxies.map((proxy) => proxy.name)).toEqual([Notice.noTraffic]);
    for (const group of config["proxy-groups"]) expect(group.proxies).toContain(Notice.noTraffic);
  });
});

describe("per-core proxy shapes", () => {
  const proxiesOf = (render: Renderer, format: ClashFormat) =>
    new Map(load(render(fixtureInput(format)).body).proxies.map((proxy) => [proxy.name as string, proxy]));

  test("Clash gets vmess and classic ss only: no VLESS, Hysteria2 or 2022 ciphers", () => {
    const body = renderClash({ ...fixtureInput("clash"), proxies: FIXTURE_PROXIES }).body;
    const types = new Set(load(body).proxies.map((proxy) => proxy.type));
    expect([...types].sort()).toEqual(["ss", "vmess"]);
    expect(body).not.toContain("2022-blake3");
    expect(body).not.toContain("reality");
  });

  test("vmess over WebSocket through the CDN carries TLS, SNI and the node's Host", () => {
    expect(proxiesOf(renderMihomo, "mihomo").get("香港 CDN [0.5x]")).toEqual({
      name: "香港 CDN [0.5x]",
      type: "vmess",
      server: "cdn.example.net",
      port: 443,
      uuid: "11111111-2222-3333-4444-555555555555",
      alterId: 0,
      cipher: "auto",
      udp: true,
      tls: true,
      servername: "hk.example.com",
      "skip-cert-verify": false,
      network: "ws",
      "ws-opts": { path: "/a1b2c3d4e5f6", headers: { Host: "hk.example.com" } },
    });
  });

  test("mihomo Reality and Hysteria2 (with and without a domain)", () => {
    const proxies = proxiesOf(renderMihomo, "mihomo");
    expect(proxies.get("美国 Reality 中转-2 [1x]")).toEqual({
      name: "美国 Reality 中转-2 [1x]",
      type: "vless",
      server: "198.51.100.2",
      port: 443,
      uuid: "11111111-2222-3333-4444-555555555555",
      network: "tcp",
      udp: true,
      tls: true,
      flow: "xtls-rprx-vision",
      servername: "www.example.org",
      "client-fingerprint": "chrome",
      "reality-opts": {
        "public-key": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
        "short-id": "0123456789abcdef",
      },
    });
    expect(proxies.get("新加坡 Hy2 [1x]")).toMatchObject({
      password: "11111111-2222-3333-4444-555555555555",
      sni: "sg.example.com",
      "skip-cert-verify": false,
      obfs: "salamander",
      "obfs-password": "obfs-Pa55word",
    });
    const noDomain = proxies.get("韩国 Hy2 [1x]");
    expect(noDomain).toMatchObject({ "skip-cert-verify": true });
    expect(noDomain).not.toHaveProperty("sni");
  });

  test("Stash Hysteria2 authenticates with `auth`, and its Reality carries `sni` too", () => {
    const proxies = proxiesOf(renderStash, "stash");
    const hy2 = proxies.get("新加坡 Hy2 [1x]");
    expect(hy2).toMatchObject({ auth: "11111111-2222-3333-4444-555555555555" });
    expect(hy2).not.toHaveProperty("password");
    expect(proxies.get("美国 Reality [1x]")).toMatchObject({
      sni: "www.example.org",
      servername: "www.example.org",
    });
  });

  test("with nothing the core can load, the select group offers DIRECT and the file still loads", () => {
    const realityOnly = FIXTURE_PROXIES.filter((proxy) => proxy.type === "vless");
    const config = load(renderClash({ ...fixtureInput("clash"), proxies: realityOnly }).body);
    expect(config.proxies).toEqual([]);
    expect(config["proxy-groups"]).toEqual([{ name: SELECT_GROUP, type: "select", proxies: ["DIRECT"] }]);
    expect(unknownGroupMembers(config)).toEqual([]);
  });
});
