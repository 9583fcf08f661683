/**
 * Surge, Surfboard, Quantumult X and Loon (subscription-formats.md §4.7–§4.9, §4.11): golden files
 * for the fixture, and every proxy line read back the way the app's `Name = type, …` /
 * `type=host:port, key=value, …` syntax reads it, then compared with the proxy it came from.
 *
 * The golden files are in ./golden (qx.txt is the DECODED base64 body). After an intended change
 * to the output, regenerate them with
 *   UPDATE_GOLDEN=1 bun test src/subscription/formats/text-formats.test.ts
 * and read the diff before committing.
 */
import { describe, expect, test } from "bun:test";
import type { ProxyEntry, RenderInput } from "../model.ts";
import { Notice } from "../service.ts";
import {
  FIXTURE_PROXIES,
  FIXTURE_URL,
  FIXTURE_UUID,
  fixtureInput,
  noticeInput,
  sections,
} from "../test-fixture.ts";
import { expectGolden } from "./expect-golden.ts";
import { renderLoon } from "./loon.ts";
import { renderQx } from "./qx.ts";
import { renderSurfboard, renderSurge } from "./surge.ts";

/** `a, b, k=v, "quoted", …`: positional values and options; quotes are removed from both. */
function splitFields(text: string): { positional: string[]; options: Record<string, string> } {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (const field of text.split(", ")) {
    const option = /^([a-z0-9-]+)=(.*)$/i.exec(field);
    if (option && !field.startsWith('"')) options[option[1] as string] = unquote(option[2] as string);
    else positional.push(unquote(field));
  }
  return { positional, options };
}

const unquote = (value: string) => value.replace(/^"(.*)"$/, "$1");

/** `Name = type, host, port, …` (Surge, Surfboard, Loon). */
function parseNamedLine(line: string) {
  const at = line.indexOf(" = ");
  expect(at).toBeGreaterThan(0);
  return { name: line.slice(0, at), ...splitFields(line.slice(at + 3)) };
}

// ---- Surge and Surfboard -------------------------------------------------------------------

function expectSurgeProxy(line: string, proxy: ProxyEntry) {
  const { name, positional, options } = parseNamedLine(line);
  expect(name).toBe(proxy.name);
  expect(positional).toEqual([proxy.type === "ss" ? "ss" : proxy.type, proxy.server, String(proxy.port)]);
  switch (proxy.type) {
    case "vmess": {
      const expected: Record<string, string> = { username: FIXTURE_UUID, "vmess-aead": "true" };
      if (proxy.tls) Object.assign(expected, { tls: "true", sni: proxy.sni });
      if (proxy.network === "ws")
        Object.assign(expected, {
          ws: "true",
          "ws-path": proxy.wsPath,
          "ws-headers": `Host:${proxy.wsHost}`,
        });
      return expect(options).toEqual(expected);
    }
    case "ss":
      return expect(options).toEqual({
        "encrypt-method": proxy.method,
        password: proxy.password,
        "udp-relay": "true",
      });
    case "hysteria2": {
      const expected: Record<string, string> = {
        password: FIXTURE_UUID,
        "salamander-password": proxy.obfsPassword,
      };
      if (proxy.sni) expected.sni = proxy.sni;
      if (proxy.insecure) expected["skip-cert-verify"] = "true";
      return expect(options).toEqual(expected);
    }
    case "vless":
      throw new Error("Surge profiles must not carry VLESS");
  }
}

const SURGE_FORMATS = [
  { format: "surge", render: renderSurge, golden: "surge.conf" },
  { format: "surfboard", render: renderSurfboard, golden: "surfboard.conf" },
] as const;

for (const { format, render, golden } of SURGE_FORMATS) {
  describe(format, () => {
    const input = fixtureInput(format);
    const rendered = render(input);
    const profile = sections(rendered.body);

    test("golden file; text named <site>.conf", () => {
      expectGolden(golden, rendered.body);
      expect(rendered.contentType).toStartWith("text/plain");
      expect(rendered.filename).toBe("飞渡.conf");
    });

    test("the first line makes it a managed profile that updates from this URL twice a day", () => {
      expect(rendered.body.split("\n")[0]).toBe(
        `#!MANAGED-CONFIG ${FIXTURE_URL} interval=43200 strict=false`,
      );
      expect(profile.General).toContain("dns-server = system");
    });

    test("every proxy line reads back as its proxy; no Reality, and Hysteria2 only for Surge", () => {
      const lines = profile.Proxy ?? [];
      expect(lines).toHaveLength(input.proxies.length);
      for (const [index, proxy] of input.proxies.entries()) expectSurgeProxy(lines[index] as string, proxy);
      expect(input.proxies.some((proxy) => proxy.type === "vless")).toBe(false);
      expect(input.proxies.some((proxy) => proxy.type === "hysteria2")).toBe(format === "surge");
      expect(input.proxies.some((proxy) => proxy.type === "ss" && proxy.method.startsWith("2022-"))).toBe(
        true,
      );
    });

    test("a select group over an url-test group, both with every proxy; rules end in the select group", () => {
      const names = input.proxies.map((proxy) => proxy.name);
      const groups = (profile["Proxy Group"] ?? []).map(parseNamedLine);
      expect(groups).toHaveLength(2);
      const [select, auto] = groups as [ReturnType<typeof parseNamedLine>, ReturnType<typeof parseNamedLine>];
      expect(select.positional).toEqual(["select", auto.name, ...names]);
      expect(auto.positional).toEqual(["url-test", ...names]);
      expect(auto.options).toEqual({ url: "http://www.gstatic.com/generate_204", interval: "600" });

      const rules = profile.Rule ?? [];
      expect(rules[0]).toBe("DOMAIN,sub.example.com,DIRECT");
      expect(rules).toContain("GEOIP,CN,DIRECT");
      expect(rules.at(-1)).toBe(`FINAL,${select.name}`);
    });

    test("a subscription server reached by IP gets an IP rule (a DOMAIN rule would never match)", () => {
      const rules = sections(render({ ...input, host: "198.51.100.7" }).body).Rule ?? [];
      expect(rules[0]).toBe("IP-CIDR,198.51.100.7/32,DIRECT,no-resolve");
    });

    test("a notice: a valid profile whose only proxy is the notice, in both groups", () => {
      const notice = sections(render(noticeInput(Notice.noTraffic)).body);
      expect(notice.Proxy).toHaveLength(1);
      expect(parseNamedLine(notice.Proxy?.[0] as string)).toMatchObject({
        name: Notice.noTraffic,
        positional: ["ss", "127.0.0.1", "1"],
      });
      const groups = (notice["Proxy Group"] ?? []).map(parseNamedLine);
      expect(groups).toHaveLength(2);
      const [select, auto] = groups as [ReturnType<typeof parseNamedLine>, ReturnType<typeof parseNamedLine>];
      expect(select.positional).toEqual(["select", auto.name, Notice.noTraffic]);
      expect(auto.positional).toEqual(["url-test", Notice.noTraffic]);
      expect(notice.Rule?.at(-1)).toBe(`FINAL,${select.name}`);
    });
  });
}

// ---- Quantumult X --------------------------------------------------------------------------

/** `type=host:port, key=value, …, tag=name`. */
function parseQxLine(line: string) {
  const fields = line.split(", ");
  const [type, address = ""] = (fields[0] as string).split("=");
  const { host, port } = /^(?<host>.+):(?<port>\d+)$/.exec(address)?.groups ?? {};
  const options = Object.fromEntries(fields.slice(1).map((field) => field.split(/=(.*)/s).slice(0, 2)));
  return { type, host, port: Number(port), options };
}

function expectQxProxy(line: string, proxy: ProxyEntry) {
  expect(line).toEndWith(`, tag=${proxy.name}`);
  const parsed = parseQxLine(line);
  expect(parsed.host).toBe(proxy.server);
  expect(parsed.port).toBe(proxy.port);
  switch (proxy.type) {
    case "vmess": {
      expect(parsed.type).toBe("vmess");
      const expected: Record<string, string> = {
        method: "chacha20-poly1305",
        password: FIXTURE_UUID,
        aead: "true",
        "fast-open": "false",
        "udp-relay": "false",
        tag: proxy.name,
      };
      if (proxy.network === "ws")
        Object.assign(expected, {
          obfs: proxy.tls ? "wss" : "ws",
          "obfs-host": proxy.wsHost,
          "obfs-uri": proxy.wsPath,
        });
      if (proxy.tls) Object.assign(expected, { "tls-host": proxy.sni, "tls-verification": "true" });
      return expect(parsed.options).toEqual(expected);
    }
    case "vless":
      expect(parsed.type).toBe("vless");
      return expect(parsed.options).toEqual({
        method: "none",
        password: FIXTURE_UUID,
        obfs: "over-tls",
        "tls-host": proxy.sni,
        "reality-base64-pubkey": proxy.publicKey,
        "reality-hex-shortid": proxy.shortId,
        "vless-flow": "xtls-rprx-vision",
        "udp-relay": "true",
        tag: proxy.name,
      });
    case "ss":
      expect(parsed.type).toBe("shadowsocks");
      return expect(parsed.options).toEqual({
        method: proxy.method,
        password: proxy.password,
        "udp-relay": "true",
        tag: proxy.name,
      });
    case "hysteria2":
      throw new Error("Quantumult X has no Hysteria2");
  }
}

describe("Quantumult X", () => {
  const input = fixtureInput("qx");
  const rendered = renderQx(input);
  const text = Buffer.from(rendered.body, "base64").toString("utf8");
  const lines = text.trimEnd().split("\n");

  test("golden file (decoded); the body is its base64", () => {
    expectGolden("qx.txt", text);
    expect(rendered.body).toBe(Buffer.from(text).toString("base64"));
    expect(rendered.contentType).toStartWith("text/plain");
  });

  test("every server_local line reads back as its proxy; Reality included, no Hysteria2", () => {
    expect(lines).toHaveLength(input.proxies.length);
    for (const [index, proxy] of input.proxies.entries()) expectQxProxy(lines[index] as string, proxy);
    expect(input.proxies.some((proxy) => proxy.type === "vless")).toBe(true);
    expect(input.proxies.some((proxy) => proxy.type === "hysteria2")).toBe(false);
  });

  test("a notice: one shadowsocks line tagged with it", () => {
    const notice = Buffer.from(renderQx(noticeInput(Notice.noLines)).body, "base64").toString("utf8");
    expect(notice.trimEnd().split("\n")).toEqual([
      `shadowsocks=127.0.0.1:1, method=aes-256-gcm, password=0, udp-relay=true, tag=${Notice.noLines}`,
    ]);
  });
});

// ---- Loon ----------------------------------------------------------------------------------

function expectLoonProxy(line: string, proxy: ProxyEntry) {
  const { name, positional, options } = parseNamedLine(line);
  expect(name).toBe(proxy.name);
  switch (proxy.type) {
    case "vmess": {
      expect(positional).toEqual(["vmess", proxy.server, String(proxy.port), "auto", FIXTURE_UUID]);
      const expected: Record<string, string> = {
        transport: proxy.network,
        "over-tls": String(proxy.tls),
        alterId: "0",
        udp: "true",
      };
      if (proxy.network === "ws") Object.assign(expected, { path: proxy.wsPath, host: proxy.wsHost });
      if (proxy.tls) Object.assign(expected, { "tls-name": proxy.sni, "skip-cert-verify": "false" });
      return expect(options).toEqual(expected);
    }
    case "ss":
      expect(positional).toEqual([
        "Shadowsocks",
        proxy.server,
        String(proxy.port),
        proxy.method,
        proxy.password,
      ]);
      return expect(options).toEqual({ udp: "true" });
    case "vless":
      expect(positional).toEqual(["VLESS", proxy.server, String(proxy.port), FIXTURE_UUID]);
      return expect(options).toEqual({
        transport: "tcp",
        "over-tls": "true",
        "tls-name": proxy.sni,
        flow: "xtls-rprx-vision",
        "public-key": proxy.publicKey,
        "short-id": proxy.shortId,
        udp: "true",
      });
    case "hysteria2": {
      expect(positional).toEqual(["Hysteria2", proxy.server, String(proxy.port), FIXTURE_UUID]);
      const expected: Record<string, string> = { "salamander-password": proxy.obfsPassword, udp: "true" };
      if (proxy.sni) expected["tls-name"] = proxy.sni;
      if (proxy.insecure) expected["skip-cert-verify"] = "true";
      return expect(options).toEqual(expected);
    }
  }
}

describe("Loon", () => {
  const input: RenderInput = fixtureInput("loon");
  const rendered = renderLoon(input);

  test("golden file; plain lines, not base64", () => {
    expectGolden("loon.txt", rendered.body);
    expect(rendered.body.startsWith(`${input.proxies[0]?.name} = `)).toBe(true);
    expect(rendered.contentType).toStartWith("text/plain");
  });

  test("every line reads back as its proxy; all four protocols", () => {
    const lines = rendered.body.trimEnd().split("\n");
    expect(input.proxies).toEqual(FIXTURE_PROXIES);
    expect(lines).toHaveLength(input.proxies.length);
    for (const [index, proxy] of input.proxies.entries()) expectLoonProxy(lines[index] as string, proxy);
  });

  test("a notice: one Shadowsocks line named after it", () => {
    expect(renderLoon(noticeInput(Notice.disabled)).body).toBe(
      `${Notice.disabled} = Shadowsocks, 127.0.0.1, 1, aes-256-gcm, "0", udp=true\n`,
    );
  });
});
