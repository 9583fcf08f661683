/**
 * Share-URI subscriptions (subscription-formats.md §4.1, §4.2, §4.10): golden files for the
 * fixture, and every link parsed back the way a client reads it, by parsers written here from the
 * specs (not the production builders), then compared with the proxy it came from.
 *
 * The golden files in ./golden hold the DECODED text of each base64 body, so they read as lists
 * of links. After an intended change to the output, regenerate them with
 *   UPDATE_GOLDEN=1 bun test src/subscription/formats/uri.test.ts
 * and read the diff before committing.
 */
import { describe, expect, test } from "bun:test";
import { GB } from "../../lib/traffic.ts";
import type {
  Hysteria2Proxy,
  ProxyEntry,
  RenderInput,
  ShadowsocksProxy,
  VlessRealityProxy,
  VmessProxy,
} from "../model.ts";
import { Notice } from "../service.ts";
import { FIXTURE_PROXIES, FIXTURE_UUID, fixtureInput, noticeInput } from "../test-fixture.ts";
import { expectGolden } from "./expect-golden.ts";
import {
  NO_MODE_MATCH,
  renderQuantumult,
  renderShadowrocket,
  renderSsr,
  renderV2ray,
  ssUri,
  vlessUri,
} from "./uri.ts";

/** Decodes a base64 body, first checking it is standard base64 with padding. */
function decodeBody(body: string): string {
  expect(body).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
  expect(body.length % 4).toBe(0);
  return Buffer.from(body, "base64").toString("utf8");
}

function linesOf(text: string): string[] {
  expect(text.endsWith("\n")).toBe(true);
  return text.slice(0, -1).split("\n");
}

/** base64url without padding: only the URL-safe alphabet. */
function fromBase64url(text: string): string {
  expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
  return Buffer.from(text, "base64url").toString("utf8");
}

const of = <T extends ProxyEntry["type"]>(type: T) =>
  FIXTURE_PROXIES.filter((proxy): proxy is Extract<ProxyEntry, { type: T }> => proxy.type === type);

// ---- independent parsers -------------------------------------------------------------------

function parseVmess(uri: string): Record<string, string> {
  expect(uri.startsWith("vmess://")).toBe(true);
  return JSON.parse(Buffer.from(uri.slice("vmess://".length), "base64").toString("utf8"));
}

/** SIP002: `ss://userinfo@host:port#tag`; userinfo is base64url or percent-encoded `method:password`. */
function parseSs(uri: string) {
  const match = /^ss:\/\/([^@]+)@(.+):(\d+)#(.*)$/.exec(uri);
  if (!match) throw new Error(`not a SIP002 link: ${uri}`);
  const [, userinfo, host, port, tag] = match as unknown as [string, string, string, string, string];
  const plain = userinfo.includes(":");
  const decoded = plain ? userinfo : fromBase64url(userinfo);
  const colon = decoded.indexOf(":");
  const method = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  return {
    plain,
    method: plain ? decodeURIComponent(method) : method,
    password: plain ? decodeURIComponent(password) : password,
    host: host.replace(/^\[(.*)\]$/, "$1"),
    port: Number(port),
    name: decodeURIComponent(tag),
  };
}

/** SSRQR: base64url(host:port:protocol:method:obfs:B(password)/?obfsparam=…&remarks=B(…)&group=B(…)). */
function parseSsr(uri: string) {
  expect(uri.startsWith("ssr://")).toBe(true);
  const decoded = fromBase64url(uri.slice("ssr://".length));
  const [main = "", query = ""] = decoded.split("/?");
  const parts = main.split(":");
  expect(parts).toHaveLength(6);
  const [host, port, protocol, method, obfs, password] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const params = new URLSearchParams(query);
  const param = (key: string) => {
    const value = params.get(key);
    expect(value).not.toBeNull();
    return value === "" ? "" : fromBase64url(value as string);
  };
  return {
    host,
    port: Number(port),
    protocol,
    method,
    obfs,
    password: fromBase64url(password),
    obfsparam: param("obfsparam"),
    protoparam: param("protoparam"),
    remarks: param("remarks"),
    group: param("group"),
  };
}

/** Shadowrocket's legacy `vmess|vless://base64(auto:uuid@host:port)?query`. */
function parseShadowrocketLegacy(uri: string) {
  const match = /^(vmess|vless):\/\/([^?]+)\?(.*)$/.exec(uri);
  if (!match) throw new Error(`not a Shadowrocket legacy link: ${uri}`);
  const [, scheme, userinfo, query] = match as unknown as [string, string, string, string];
  const inner = /^auto:([0-9a-f-]+)@(.+):(\d+)$/.exec(Buffer.from(userinfo, "base64").toString("utf8"));
  if (!inner) throw new Error(`bad userinfo in ${uri}`);
  return {
    scheme,
    uuid: inner[1],
    host: inner[2],
    port: Number(inner[3]),
    params: Object.fromEntries(new URLSearchParams(query)),
  };
}

function expectVmessMatches(json: Record<string, string>, proxy: VmessProxy) {
  expect(json).toEqual({
    v: "2",
    ps: proxy.name,
    add: proxy.server,
    port: String(proxy.port),
    id: FIXTURE_UUID,
    aid: "0",
    scy: "auto",
    net: proxy.network,
    type: "none",
    host: proxy.network === "ws" ? proxy.wsHost : "",
    path: proxy.network === "ws" ? proxy.wsPath : "",
    tls: proxy.tls ? "tls" : "",
    sni: proxy.tls ? proxy.sni : "",
    alpn: "",
    fp: "",
  });
}

function expectVlessMatches(uri: string, proxy: VlessRealityProxy) {
  const url = new URL(uri);
  expect(url.protocol).toBe("vless:");
  expect(url.username).toBe(FIXTURE_UUID);
  expect(url.hostname).toBe(proxy.server);
  expect(Number(url.port)).toBe(proxy.port);
  expect(decodeURIComponent(url.hash.slice(1))).toBe(proxy.name);
  expect(Object.fromEntries(url.searchParams)).toEqual({
    encryption: "none",
    type: "tcp",
    headerType: "none",
    security: "reality",
    sni: proxy.sni,
    fp: "chrome",
    pbk: proxy.publicKey,
    sid: proxy.shortId,
    flow: "xtls-rprx-vision",
  });
}

function expectSsMatches(uri: string, proxy: ShadowsocksProxy) {
  const parsed = parseSs(uri);
  // SIP002: 2022 keys must not be base64-wrapped; classic AEAD userinfo is base64url.
  expect(parsed.plain).toBe(proxy.method.startsWith("2022-"));
  expect(parsed).toMatchObject({
    method: proxy.method,
    password: proxy.password,
    host: proxy.server,
    port: proxy.port,
    name: proxy.name,
  });
}

function expectHysteria2Matches(uri: string, proxy: Hysteria2Proxy) {
  const url = new URL(uri);
  expect(url.protocol).toBe("hysteria2:");
  expect(decodeURIComponent(url.username)).toBe(FIXTURE_UUID);
  expect(url.hostname).toBe(proxy.server);
  expect(Number(url.port)).toBe(proxy.port);
  expect(decodeURIComponent(url.hash.slice(1))).toBe(proxy.name);
  const params = url.searchParams;
  expect(params.get("sni")).toBe(proxy.sni === "" ? null : proxy.sni);
  expect(params.get("insecure")).toBe(proxy.insecure ? "1" : "0");
  expect(params.get("obfs")).toBe("salamander");
  expect(params.get("obfs-password")).toBe(proxy.obfsPassword);
}

// ---- v2ray ---------------------------------------------------------------------------------

describe("v2ray (v2rayN, v2rayNG, V2Box, Streisand)", () => {
  const input = fixtureInput("v2ray");
  const rendered = renderV2ray(input);
  const text = decodeBody(rendered.body);
  const lines = linesOf(text);

  test("golden file; the body is its base64; plain text, named after the site", () => {
    expectGolden("v2ray.txt", text);
    expect(rendered.body).toBe(Buffer.from(text).toString("base64"));
    expect(rendered.contentType).toStartWith("text/plain");
    expect(rendered.filename).toBe("飞渡");
  });

  test("one link per proxy, in order, and never ssr:// (v2rayN has no SSR)", () => {
    expect(lines).toHaveLength(input.proxies.length);
    expect(input.proxies.length).toBe(FIXTURE_PROXIES.length);
    for (const line of lines) expect(line).not.toStartWith("ssr://");
    // compat lines are there, as plain Shadowsocks
    expect(input.proxies.some((proxy) => proxy.type === "ss" && proxy.ssr)).toBe(true);
  });

  test("every link parses back to the proxy it came from", () => {
    input.proxies.forEach((proxy, index) => {
      const line = lines[index] as string;
      if (proxy.type === "vmess") expectVmessMatches(parseVmess(line), proxy);
      else if (proxy.type === "vless") expectVlessMatches(line, proxy);
      else if (proxy.type === "ss") expectSsMatches(line, proxy);
      else expectHysteria2Matches(line, proxy);
    });
  });

  test("the fixture covers every kind: tcp, ws, ws+tls, relays, 2022, Reality, Hysteria2 with and without SNI", () => {
    const vmess = of("vmess");
    expect(vmess.some((proxy) => proxy.network === "tcp")).toBe(true);
    expect(vmess.some((proxy) => proxy.network === "ws" && !proxy.tls)).toBe(true);
    expect(vmess.some((proxy) => proxy.tls)).toBe(true);
    expect(of("ss").map((proxy) => proxy.method)).toContain("2022-blake3-aes-128-gcm");
    expect(of("vless").length).toBeGreaterThan(0);
    expect(of("hysteria2").map((proxy) => proxy.insecure)).toEqual([false, true]);
  });

  test("hysteria2 without a domain: no sni, insecure=1", () => {
    const line = lines.find((uri) => uri.startsWith("hysteria2://") && uri.includes("insecure=1")) as string;
    expect(new URL(line).searchParams.has("sni")).toBe(false);
  });

  test("base64=0 or base64=false gives the plain list; anything else stays base64", () => {
    for (const value of ["0", "false", "FALSE"]) {
      expect(renderV2ray(fixtureInput("v2ray", `base64=${value}`)).body).toBe(text);
    }
    expect(renderV2ray(fixtureInput("v2ray", "base64=1")).body).toBe(rendered.body);
  });

  test("mode= keeps only the listed protocols and ignores unknown ones", () => {
    const only = (query: string) =>
      linesOf(decodeBody(renderV2ray(fixtureInput("v2ray", query)).body)).map((uri) => uri.split("://")[0]);
    expect(new Set(only("mode=vless,hysteria2"))).toEqual(new Set(["vless", "hysteria2"]));
    expect(only("mode=vless,hysteria2")).toHaveLength(of("vless").length + of("hysteria2").length);
    expect(only("mode=ss, trojan")).toEqual(of("ss").map(() => "ss"));
    expect(only("mode=trojan")).toHaveLength(FIXTURE_PROXIES.length);
    expect(only("mode=")).toHaveLength(FIXTURE_PROXIES.length);
  });

  test("mode= that leaves nothing gives one notice entry; a notice file is left alone", () => {
    const vmessOnly: RenderInput = { ...fixtureInput("v2ray", "mode=vless"), proxies: of("vmess") };
    const [line] = linesOf(decodeBody(renderV2ray(vmessOnly).body));
    expect(parseSs(line as string).name).toBe(NO_MODE_MATCH);

    const notice = { ...noticeInput(Notice.noTraffic), query: new URLSearchParams("mode=vmess") };
    const lines = linesOf(decodeBody(renderV2ray(notice).body));
    expect(lines).toHaveLength(1);
    expect(parseSs(lines[0] as string)).toMatchObject({ name: Notice.noTraffic, host: "127.0.0.1", port: 1 });
  });

  test("a notice renders one valid entry named after it", () => {
    const lines = linesOf(decodeBody(renderV2ray(noticeInput(Notice.noLines)).body));
    expect(lines).toHaveLength(1);
    expect(parseSs(lines[0] as string).name).toBe(Notice.noLines);
  });

  test("IPv6 servers are bracketed so the link still parses", () => {
    const reality = of("vless")[0] as VlessRealityProxy;
    const v6 = { ...reality, server: "2001:db8::1" };
    expect(new URL(vlessUri(v6)).hostname).toBe("[2001:db8::1]");
    const ss = { ...(of("ss")[0] as ShadowsocksProxy), server: "2001:db8::1" };
    expect(parseSs(ssUri(ss))).toMatchObject({ host: "2001:db8::1", port: ss.port });
  });
});

// ---- Shadowrocket ---------------------------------------------------------------------------

describe("Shadowrocket", () => {
  const input = fixtureInput("shadowrocket");
  const rendered = renderShadowrocket(input);
  const text = decodeBody(rendered.body);
  const [status, ...links] = linesOf(text);

  test("golden file; the body is its base64", () => {
    expectGolden("shadowrocket.txt", text);
    expect(rendered.body).toBe(Buffer.from(text).toString("base64"));
    expect(rendered.contentType).toStartWith("text/plain");
  });

  test("the STATUS line shows upload, download, total in GB and the expiry day in China", () => {
    // fixture: 0 up, 5 GB down, 105 GB total, expires 2027-01-01 00:00 in Shanghai
    expect(status).toBe("STATUS=🚀↑:0.00GB,↓:5.00GB,TOT:105.00GB💡Expires:2027-01-01");
    const usage = { upload: 1.2 * GB, download: 30.5 * GB, total: 200 * GB, expire: 1_798_732_800 + 3600 };
    const [line] = linesOf(decodeBody(renderShadowrocket({ ...input, usage }).body));
    // 2026-12-31 17:00 UTC is already 2027-01-01 01:00 in Shanghai
    expect(line).toBe("STATUS=🚀↑:1.20GB,↓:30.50GB,TOT:200.00GB💡Expires:2027-01-01");
    const never = { ...usage, expire: 0 };
    const [noExpiry] = linesOf(decodeBody(renderShadowrocket({ ...input, usage: never }).body));
    expect(noExpiry).toEndWith("💡Expires:N/A");
  });

  test("every proxy in Shadowrocket's forms, parsed back", () => {
    expect(links).toHaveLength(input.proxies.length);
    for (const [index, proxy] of input.proxies.entries()) {
      const line = links[index] as string;
      if (proxy.type === "ss") {
        expectSsMatches(line, proxy);
        continue;
      }
      if (proxy.type === "hysteria2") {
        expectHysteria2Matches(line, proxy);
        const params = new URL(line).searchParams;
        expect(params.get("peer")).toBe(proxy.sni === "" ? null : proxy.sni);
        continue;
      }
      const parsed = parseShadowrocketLegacy(line);
      expect(parsed).toMatchObject({
        scheme: proxy.type,
        uuid: FIXTURE_UUID,
        host: proxy.server,
        port: proxy.port,
      });
      expect(parsed.params.remark).toBe(proxy.name);
      if (proxy.type === "vmess") {
        expect(parsed.params.alterId).toBe("0");
        expect(parsed.params.tls).toBe(proxy.tls ? "1" : undefined);
        expect(parsed.params.peer).toBe(proxy.tls ? proxy.sni : undefined);
        if (proxy.network === "ws") {
          expect(parsed.params).toMatchObject({
            obfs: "websocket",
            path: proxy.wsPath,
            obfsParam: proxy.wsHost,
          });
        } else {
          expect(parsed.params.obfs).toBeUndefined();
        }
      } else {
        expect(parsed.params).toMatchObject({
          tls: "1",
          xtls: "2",
          sni: proxy.sni,
          pbk: proxy.publicKey,
          sid: proxy.shortId,
          fp: "chrome",
        });
      }
    }
  });

  test("compat lines go as Shadowsocks, not ssr://", () => {
    expect(links.some((line) => line.startsWith("ssr://"))).toBe(false);
    const compat = input.proxies.filter((proxy) => proxy.type === "ss" && proxy.ssr);
    expect(compat.length).toBeGreaterThan(0);
  });

  test("a notice: the STATUS line and the notice entry", () => {
    const lines = linesOf(decodeBody(renderShadowrocket(noticeInput(Notice.disabled)).body));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toStartWith("STATUS=");
    expect(parseSs(lines[1] as string).name).toBe(Notice.disabled);
  });
});

// ---- SSR -----------------------------------------------------------------------------------

describe("SSR list", () => {
  const input = fixtureInput("ssr");
  const rendered = renderSsr(input);
  const text = decodeBody(rendered.body);
  const lines = linesOf(text);

  test("golden file; the body is its base64", () => {
    expectGolden("ssr.txt", text);
    expect(rendered.body).toBe(Buffer.from(text).toString("base64"));
  });

  test("only compat lines, each decoding back to host, port, method, password and name", () => {
    const compat = FIXTURE_PROXIES.filter(
      (proxy): proxy is ShadowsocksProxy => proxy.type === "ss" && proxy.ssr,
    );
    expect(input.proxies).toEqual(compat);
    expect(lines).toHaveLength(compat.length);
    compat.forEach((proxy, index) => {
      expect(parseSsr(lines[index] as string)).toEqual({
        host: proxy.server,
        port: proxy.port,
        protocol: "origin",
        method: proxy.method,
        obfs: "plain",
        password: proxy.password,
        obfsparam: "",
        protoparam: "",
        remarks: proxy.name,
        group: "飞渡",
      });
    });
  });

  test("base64=0 gives the plain list", () => {
    expect(renderSsr(fixtureInput("ssr", "base64=0")).body).toBe(text);
  });

  test("a notice decodes to one entry named after it", () => {
    const lines = linesOf(decodeBody(renderSsr(noticeInput(Notice.noTraffic)).body));
    expect(lines).toHaveLength(1);
    expect(parseSsr(lines[0] as string)).toMatchObject({
      remarks: Notice.noTraffic,
      host: "127.0.0.1",
      port: 1,
    });
  });
});

// ---- old Quantumult ------------------------------------------------------------------------

/** Quantumult's `vmess://base64url("<name> = vmess, host, port, cipher, "uuid", key=value, …")`. */
function parseQuantumultVmess(uri: string) {
  expect(uri.startsWith("vmess://")).toBe(true);
  const line = fromBase64url(uri.slice("vmess://".length));
  const [name, rest = ""] = line.split(" = ");
  const [type, host, port, cipher, uuid, ...options] = rest.split(", ");
  return {
    name,
    type,
    host,
    port: Number(port),
    cipher,
    uuid,
    options: Object.fromEntries(options.map((option) => option.split(/=(.*)/s).slice(0, 2))),
  };
}

describe("Quantumult (old)", () => {
  const input = fixtureInput("quantumult");
  const rendered = renderQuantumult(input);
  const text = decodeBody(rendered.body);
  const lines = linesOf(text);

  test("golden file; the body is its base64", () => {
    expectGolden("quantumult.txt", text);
    expect(rendered.body).toBe(Buffer.from(text).toString("base64"));
  });

  test("VMess in Quantumult's own form and classic Shadowsocks as SIP002; nothing it cannot read", () => {
    expect(input.proxies.every((proxy) => proxy.type === "vmess" || proxy.type === "ss")).toBe(true);
    expect(input.proxies.some((proxy) => proxy.type === "ss" && proxy.method.startsWith("2022-"))).toBe(
      false,
    );
    expect(lines).toHaveLength(input.proxies.length);
    for (const [index, proxy] of input.proxies.entries()) {
      const line = lines[index] as string;
      if (proxy.type === "ss") {
        expectSsMatches(line, proxy);
        continue;
      }
      if (proxy.type !== "vmess") throw new Error(`unexpected ${proxy.type}`);
      const parsed = parseQuantumultVmess(line);
      expect(parsed).toMatchObject({
        name: proxy.name,
        type: "vmess",
        host: proxy.server,
        port: proxy.port,
        cipher: "chacha20-ietf-poly1305",
        uuid: `"${FIXTURE_UUID}"`,
      });
      const expected: Record<string, string> = {
        group: "飞渡",
        "over-tls": String(proxy.tls),
        certificate: "1",
      };
      if (proxy.tls) expected["tls-host"] = proxy.sni;
      if (proxy.network === "ws") {
        expected.obfs = "ws";
        expected["obfs-path"] = `"${proxy.wsPath}"`;
        expected["obfs-header"] = `"Host: ${proxy.wsHost}"`;
      }
      expect(parsed.options).toEqual(expected);
    }
  });

  test("a notice decodes to one entry named after it", () => {
    const lines = linesOf(decodeBody(renderQuantumult(noticeInput(Notice.noLines)).body));
    expect(lines).toHaveLength(1);
    expect(parseSs(lines[0] as string).name).toBe(Notice.noLines);
  });
});
