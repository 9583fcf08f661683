/**
 * The three profile toggles (issue 13 §4, docs/decisions.md "Profile toggles (issue 13)"), per
 * format: each file is rendered for the golden fixture with the toggle off and on, and read back
 * the way the client reads it (YAML, JSON, base64 lists, `Name = …` lines) to show what changes.
 * Where a format cannot express a toggle the two files must be byte-identical. The default file
 * (every toggle off) is pinned by the golden tests in ./formats, which these changes leave as they were.
 */
import { describe, expect, test } from "bun:test";
import { isIPv4 } from "node:net";
import { parse } from "yaml";
import { COUNTRIES, englishCountryName } from "../modules/node-record/countries.ts";
import { englishName, FALLBACK_NAME } from "./english-names.ts";
import { ENGLISH_AUTO_GROUP, ENGLISH_SELECT_GROUP } from "./formats/clash.ts";
import { RENDERERS } from "./formats/index.ts";
import { FORMATS, type Format, NO_TOGGLES, type ProfileToggles } from "./model.ts";
import { lineProxies, uniqueNames } from "./proxies.ts";
import { FOREIGN_DNS, MAINLAND_DNS, PRIVATE_NETWORKS } from "./rules.ts";
import { FIXTURE_UUID, fixtureInput, sections } from "./test-fixture.ts";

const RELEASE_DNS: ProfileToggles = { ...NO_TOGGLES, releaseDns: true };
const ABROAD: ProfileToggles = { ...NO_TOGGLES, abroad: true };
const ABROAD_RELEASE_DNS: ProfileToggles = { ...NO_TOGGLES, abroad: true, releaseDns: true };
const ENGLISH: ProfileToggles = { ...NO_TOGGLES, english: true };

const render = (format: Format, toggles: ProfileToggles = NO_TOGGLES) =>
  RENDERERS[format](fixtureInput(format, "", toggles)).body;

/** Chinese, Japanese and Korean script, and full-width punctuation: none may be left in an English name. */
const CJK =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

// ---- reading the files back as clients do --------------------------------------------------

const decode = (body: string) => Buffer.from(body, "base64").toString("utf8");
const fromBase64url = (text: string) => Buffer.from(text, "base64url").toString("utf8");
const lines = (text: string) => text.split("\n").filter((line) => line !== "");
const fragment = (uri: string) => decodeURIComponent(uri.slice(uri.lastIndexOf("#") + 1));

interface ClashConfig {
  dns?: Record<string, unknown>;
  proxies: { name: string; server: string }[];
  "proxy-groups": { name: string; proxies: string[] }[];
  rules: string[];
}
interface SingboxConfig {
  dns: { servers: Record<string, unknown>[]; final: string };
  outbounds: { type: string; tag: string; outbounds?: string[] }[];
  route: { rules: Record<string, unknown>[]; final: string };
}

const clashConfig = (body: string) => parse(body) as ClashConfig;
const singboxConfig = (body: string) => JSON.parse(body) as SingboxConfig;
interface XrayConfig {
  remarks: string;
  dns?: { servers: string[] };
  outbounds: Record<string, unknown>[];
  routing: { domainStrategy: string; rules: { domain?: string[]; ip?: string[]; outboundTag: string }[] };
}
const xrayConfigs = (body: string) => JSON.parse(body) as XrayConfig[];

const nameBeforeEquals = (line: string) => line.slice(0, line.indexOf(" = "));

/** Each proxy's name as the client shows it, in file order. */
function proxyNames(format: Format, body: string): string[] {
  switch (format) {
    case "clash":
    case "mihomo":
    case "stash":
      return clashConfig(body).proxies.map((proxy) => proxy.name);
    case "singbox":
      return singboxConfig(body)
        .outbounds.filter((outbound) => !["selector", "urltest", "direct"].includes(outbound.type))
        .map((outbound) => outbound.tag);
    case "surge":
    case "surfboard":
      return (sections(body).Proxy ?? []).map(nameBeforeEquals);
    case "loon":
      return lines(body).map(nameBeforeEquals);
    case "qx":
      return lines(decode(body)).map((line) => line.slice(line.lastIndexOf("tag=") + 4));
    case "v2ray":
      return lines(decode(body)).map((uri) =>
        uri.startsWith("vmess://") ? JSON.parse(decode(uri.slice(8))).ps : fragment(uri),
      );
    case "shadowrocket":
      return lines(decode(body))
        .filter((line) => !line.startsWith("STATUS="))
        .map((uri) =>
          /^(vmess|vless):\/\/[^#]*\?/.test(uri)
            ? (new URLSearchParams(uri.slice(uri.indexOf("?") + 1)).get("remark") as string)
            : fragment(uri),
        );
    case "ssr":
      return lines(decode(body)).map((uri) => {
        const query = fromBase64url(uri.slice("ssr://".length)).split("/?")[1] ?? "";
        return fromBase64url(new URLSearchParams(query).get("remarks") ?? "");
      });
    case "xray":
      return xrayConfigs(body).map((config) => config.remarks);
    case "quantumult":
      return lines(decode(body)).map((uri) =>
        uri.startsWith("vmess://")
          ? nameBeforeEquals(fromBase64url(uri.slice("vmess://".length)))
          : fragment(uri),
      );
  }
}

// ---- use_english_node ----------------------------------------------------------------------

describe("use_english_node: node names in English, in every format", () => {
  test.each([...FORMATS])(
    "%s: every proxy the client lists is named in English, nothing else moves",
    (format) => {
      const chinese = proxyNames(format, render(format));
      const english = proxyNames(format, render(format, ENGLISH));
      expect(chinese.length).toBeGreaterThan(0);
      expect(chinese.some((name) => CJK.test(name))).toBe(true);
      // The same proxies in the same order, each renamed: what the service computed for the format.
      expect(english).toEqual(fixtureInput(format, "", ENGLISH).proxies.map((proxy) => proxy.name));
      expect(english).toHaveLength(chinese.length);
      for (const name of english) {
        expect(name).not.toMatch(CJK);
        expect(name).not.toMatch(/[,=]/);
      }
      expect(new Set(english).size).toBe(english.length);
    },
  );

  test.each([
    ["clash", "Hong Kong TCP 01 [1x]"],
    ["v2ray", "United States Reality Relay-2 [1x]"],
    ["shadowrocket", "Singapore Hy2 [1x]"],
    ["ssr", "Hong Kong SSR-1 [1x]"],
    ["surge", "Korea Hy2 [1x]"],
    ["surfboard", "Japan SS2022 [2x]"],
    ["qx", "Hong Kong Relay-1 [1.5x]"],
    ["quantumult", "Hong Kong CDN [0.5x]"],
    ["loon", "United States Reality [1x]"],
    ["singbox", "Hong Kong WS [1x]"],
  ] as [Format, string][])("%s shows %s", (format, name) => {
    expect(proxyNames(format, render(format, ENGLISH))).toContain(name);
  });

  test.each(["clash", "mihomo", "stash"] as const)(
    "%s: the groups are Proxy and Auto and hold the English names",
    (format) => {
      const config = clashConfig(render(format, ENGLISH));
      const names = config.proxies.map((proxy) => proxy.name);
      expect(config["proxy-groups"]).toMatchObject([
        { name: ENGLISH_SELECT_GROUP, proxies: [ENGLISH_AUTO_GROUP, ...names] },
        { name: ENGLISH_AUTO_GROUP, proxies: names },
      ]);
      expect(config.rules.at(-1)).toBe(`MATCH,${ENGLISH_SELECT_GROUP}`);
      // Only names differ: the same servers and ports, rules apart from the final group.
      const chinese = clashConfig(render(format));
      expect(config.proxies.map(({ name: _, ...rest }) => rest)).toEqual(
        chinese.proxies.map(({ name: _, ...rest }) => rest),
      );
      expect(config.rules.slice(0, -1)).toEqual(chinese.rules.slice(0, -1));
    },
  );

  test.each(["surge", "surfboard"] as const)(
    "%s: the groups are Proxy and Auto and hold the English names",
    (format) => {
      const profile = sections(render(format, ENGLISH));
      const names = (profile.Proxy ?? []).map(nameBeforeEquals).join(", ");
      expect(profile["Proxy Group"]?.[0]).toBe(
        `${ENGLISH_SELECT_GROUP} = select, ${ENGLISH_AUTO_GROUP}, ${names}`,
      );
      expect(profile["Proxy Group"]?.[1]).toStartWith(`${ENGLISH_AUTO_GROUP} = url-test, ${names}, url=`);
      expect(profile.Rule?.at(-1)).toBe(`FINAL,${ENGLISH_SELECT_GROUP}`);
    },
  );

  test("singbox: the selector and urltest hold the English tags", () => {
    const config = singboxConfig(render("singbox", ENGLISH));
    const tags = proxyNames("singbox", render("singbox", ENGLISH));
    expect(config.outbounds.find((outbound) => outbound.tag === "proxy")?.outbounds).toEqual([
      "auto",
      ...tags,
    ]);
    expect(config.outbounds.find((outbound) => outbound.tag === "auto")?.outbounds).toEqual(tags);
  });

  test("the admin's Chinese becomes English: countries in place, common words, the node's country first", () => {
    expect(englishName("🇯🇵 日本 01", "JP")).toBe("🇯🇵 Japan 01");
    expect(englishName("香港中转", "HK")).toBe("Hong Kong Relay");
    expect(englishName("中国香港-日本 IPLC", "HK")).toBe("Hong Kong - Japan IPLC");
    expect(englishName("印度尼西亚 家宽", "ID")).toBe("Indonesia Residential");
    expect(englishName("🇺🇸 原生", "US")).toBe("🇺🇸 United States Native");
    expect(englishName("Tokyo 01", "JP")).toBe("Japan Tokyo 01");
    expect(englishName("（香港）专线，Ａ１＝", "HK")).toBe("(Hong Kong) Dedicated A1");
    // Nothing translatable and no country on the node.
    expect(englishName("测试线路", "")).toBe(FALLBACK_NAME);
    expect(englishName("测试线路", "XX")).toBe(FALLBACK_NAME);
  });

  test("lines whose only difference was Chinese stay apart: unique names, no `,` or `=`", () => {
    const agent = {
      type: "v2ray" as const,
      ip: "203.0.113.7",
      host: "",
      zz_port: 20000,
      public_port: 10000,
      ss_method: "aes-256-gcm" as const,
      ws_path: "/p",
      reality_public_key: "",
      reality_short_id: "",
      hy2_obfs_password: "",
      ss_server_key: "",
    };
    const line = (name: string) => ({
      line: {
        name,
        protocol: "vmesh_tcp" as const,
        bridge: "none" as const,
        num: 1,
        fix_name: 0,
        scale: 1,
        bridge_addr: "",
      },
      agent,
      entry: null,
      country: "HK",
    });
    const names = uniqueNames(
      ["香港 一号", "香港 二号", "香港,=三号"].flatMap((name) =>
        lineProxies(line(name), { uuid: FIXTURE_UUID }, { english: true }),
      ),
    ).map((proxy) => proxy.name);
    expect(names).toEqual(["Hong Kong [1x]", "Hong Kong [1x] (2)", "Hong Kong [1x] (3)"]);
  });

  test("every country of the node form has an English name", () => {
    for (const country of COUNTRIES) expect(englishCountryName(country.code)).toMatch(/^[A-Za-z][A-Za-z ]+$/);
  });
});

// ---- inXinjiang (release DNS) and in_foreign -------------------------------------------------

/** Formats that carry only proxies: no DNS settings and no rules for the toggles to change. */
const LIST_FORMATS = ["v2ray", "shadowrocket", "ssr", "qx", "quantumult", "loon"] as const;

describe("formats without DNS settings or rules: not applicable, the file is unchanged", () => {
  test.each([...LIST_FORMATS, "singbox"] as Format[])(
    "%s: identical with either toggle, or both",
    (format) => {
      const plain = render(format);
      for (const toggles of [RELEASE_DNS, ABROAD, ABROAD_RELEASE_DNS])
        expect(render(format, toggles)).toBe(plain);
    },
  );

  test("singbox already does what both toggles ask: DNS through the proxy to an IP, nothing China-direct", () => {
    const config = singboxConfig(render("singbox"));
    expect(config.dns.final).toBe("remote");
    expect(config.dns.servers[0]).toMatchObject({ tag: "remote", server: "1.1.1.1", detour: "proxy" });
    expect(JSON.stringify(config.route.rules)).not.toMatch(/geoip|geosite|rule_set|\bcn\b/i);
    expect(config.route.final).toBe("proxy");
  });
});

/** Rules that would make the client resolve a name locally to decide: IP rules without no-resolve. */
const resolvingRules = (rules: string[]) =>
  rules.filter((rule) => /^(GEOIP|IP-CIDR6?),/.test(rule) && !rule.endsWith(",no-resolve"));

describe.each(["clash", "mihomo", "stash"] as const)("%s", (format) => {
  const config = (toggles: ProfileToggles = NO_TOGGLES) => clashConfig(render(format, toggles));

  test("by default: no dns section (the client's own), China direct by GeoIP", () => {
    const plain = config();
    expect(plain.dns).toBeUndefined();
    expect(plain.rules).toContain("GEOIP,CN,DIRECT");
    expect(resolvingRules(plain.rules)).toEqual(["GEOIP,CN,DIRECT"]);
  });

  test("releaseDns: fake-ip, resolvers as plain IPs, mainland direct by name, no local lookup to pick a rule", () => {
    const released = config(RELEASE_DNS);
    expect(released.dns).toMatchObject({ enable: true, "enhanced-mode": "fake-ip", ipv6: false });
    expect(released.dns?.nameserver).toEqual([...MAINLAND_DNS]);
    expect(released.dns?.["default-nameserver"]).toEqual([...MAINLAND_DNS]);
    for (const server of (released.dns?.nameserver ?? []) as string[]) expect(isIPv4(server)).toBe(true);
    expect(JSON.stringify(released.dns)).not.toMatch(/https:|tls:|quic:/);
    expect(resolvingRules(released.rules)).toEqual([]);
    expect(released.rules).toContain("GEOIP,CN,DIRECT,no-resolve");
    expect(released.rules).toContain("DOMAIN-SUFFIX,baidu.com,DIRECT");
    expect(released.rules).toContain("DOMAIN-SUFFIX,cn,DIRECT");
    expect(released.rules[0]).toBe("DOMAIN,sub.example.com,DIRECT");
    // The proxies are untouched: server addresses are the node and entry IPs already, the CDN a name.
    expect(released.proxies).toEqual(config().proxies);
    const names = released.proxies.filter((proxy) => !isIPv4(proxy.server)).map((proxy) => proxy.server);
    expect(new Set(names)).toEqual(new Set(["cdn.example.net"]));
  });

  test("abroad: China is not direct; only the subscription server and private networks are", () => {
    const abroad = config(ABROAD);
    expect(abroad.dns).toBeUndefined();
    expect(abroad.rules.join("\n")).not.toMatch(/CN|DOMAIN-SUFFIX/);
    expect(abroad.rules).toEqual([
      "DOMAIN,sub.example.com,DIRECT",
      "IP-CIDR,10.0.0.0/8,DIRECT,no-resolve",
      "IP-CIDR,127.0.0.0/8,DIRECT,no-resolve",
      "IP-CIDR,172.16.0.0/12,DIRECT,no-resolve",
      "IP-CIDR,192.168.0.0/16,DIRECT,no-resolve",
      "IP-CIDR,100.64.0.0/10,DIRECT,no-resolve",
      "MATCH,节点选择",
    ]);
    expect(abroad.proxies).toEqual(config().proxies);
  });

  test("abroad with releaseDns: resolvers outside China, still nothing China-direct", () => {
    const both = config(ABROAD_RELEASE_DNS);
    expect(both.dns?.nameserver).toEqual([...FOREIGN_DNS]);
    expect(both.rules).toEqual(config(ABROAD).rules);
  });
});

describe.each(["surge", "surfboard"] as const)("%s", (format) => {
  const profile = (toggles: ProfileToggles = NO_TOGGLES) => sections(render(format, toggles));
  const dnsServer = (toggles: ProfileToggles) =>
    profile(toggles).General?.find((line) => line.startsWith("dns-server = "));

  test("by default: the system resolver, China direct by GeoIP", () => {
    expect(dnsServer(NO_TOGGLES)).toBe("dns-server = system");
    expect(resolvingRules(profile().Rule ?? [])).toEqual(["GEOIP,CN,DIRECT"]);
  });

  test("releaseDns: resolvers as plain IPs, mainland direct by name, no local lookup to pick a rule", () => {
    expect(dnsServer(RELEASE_DNS)).toBe(`dns-server = ${MAINLAND_DNS.join(", ")}`);
    const rules = profile(RELEASE_DNS).Rule ?? [];
    expect(resolvingRules(rules)).toEqual([]);
    expect(rules).toContain("GEOIP,CN,DIRECT,no-resolve");
    expect(rules).toContain("DOMAIN-SUFFIX,qq.com,DIRECT");
    expect(profile(RELEASE_DNS).Proxy).toEqual(profile().Proxy);
  });

  test("abroad: China is not direct; with releaseDns the resolvers are outside China", () => {
    const rules = profile(ABROAD).Rule ?? [];
    expect(rules.join("\n")).not.toMatch(/CN|DOMAIN-SUFFIX/);
    expect(rules.at(-1)).toBe("FINAL,节点选择");
    expect(dnsServer(ABROAD)).toBe("dns-server = system");
    expect(dnsServer(ABROAD_RELEASE_DNS)).toBe(`dns-server = ${FOREIGN_DNS.join(", ")}`);
    expect(profile(ABROAD_RELEASE_DNS).Rule).toEqual(rules);
  });
});

describe("xray", () => {
  const configs = (toggles: ProfileToggles = NO_TOGGLES) => xrayConfigs(render("xray", toggles));
  const directMatches = (config: XrayConfig) =>
    config.routing.rules
      .filter((rule) => rule.outboundTag === "direct")
      .flatMap((rule) => [...(rule.domain ?? []), ...(rule.ip ?? [])]);

  test("by default: no dns section (the client's own), China direct by GeoIP, names resolved to match it", () => {
    for (const config of configs()) {
      expect(config.dns).toBeUndefined();
      expect(config.routing.domainStrategy).toBe("IPIfNonMatch");
      expect(directMatches(config)).toEqual(["full:sub.example.com", ...PRIVATE_NETWORKS, "geoip:cn"]);
    }
  });

  test("releaseDns: resolvers as plain IPs, mainland direct by name, nothing resolved locally to pick a rule", () => {
    for (const config of configs(RELEASE_DNS)) {
      expect(config.dns?.servers).toEqual([...MAINLAND_DNS]);
      expect(config.routing.domainStrategy).toBe("AsIs");
      expect(directMatches(config)).toContain("domain:baidu.com");
      expect(directMatches(config)).toContain("domain:cn");
      expect(directMatches(config).at(-1)).toBe("geoip:cn");
    }
    expect(configs(RELEASE_DNS).map((config) => config.outbounds)).toEqual(
      configs().map((config) => config.outbounds),
    );
  });

  test("abroad: China is not direct; with releaseDns the resolvers are outside China", () => {
    for (const config of configs(ABROAD)) {
      expect(config.dns).toBeUndefined();
      expect(directMatches(config)).toEqual(["full:sub.example.com", ...PRIVATE_NETWORKS]);
    }
    for (const config of configs(ABROAD_RELEASE_DNS)) {
      expect(config.dns?.servers).toEqual([...FOREIGN_DNS]);
      expect(directMatches(config)).toEqual(["full:sub.example.com", ...PRIVATE_NETWORKS]);
    }
  });
});

test("every format is covered by a toggle test above", () => {
  const covered = new Set<Format>([
    ...LIST_FORMATS,
    "xray",
    "singbox",
    "clash",
    "mihomo",
    "stash",
    "surge",
    "surfboard",
  ]);
  expect([...FORMATS].filter((format) => !covered.has(format))).toEqual([]);
});
