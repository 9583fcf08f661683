/**
 * The node's core config: one inbound per protocol on port + offset, every user on it with a
 * `<tag>|<userId>` e-mail, the stats API as the lab's, and what each dialect cannot serve left
 * out with a warning. The v2ray configs are also checked by Debian's real v2ray (`-test`).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LineProtocol } from "../modules/line/schema.ts";
import type { SsMethod } from "../modules/node-record/schema.ts";
import { ssServerKey } from "../modules/node-record/service.ts";
import type { ShadowsocksProxy } from "../subscription/model.ts";
import { lineProxies, type ProxyAgent } from "../subscription/proxies.ts";
import { type CoreAgent, type CoreConfig, type CoreInbound, renderCoreConfig } from "./core-config.ts";

const ALICE = { id: "a".repeat(24), uuid: "be0608f5-cdde-42f1-ac19-495976e7289f" };
const BOB = { id: "b".repeat(24), uuid: "a148238f-4e32-4696-a8ca-142a3b5bb42e" };

const V2RAY_NODE: ProxyAgent & CoreAgent = {
  type: "v2ray",
  ip: "203.0.113.9",
  host: "hk.example.com",
  port: 10000,
  public_port: 10000,
  zz_port: 20000,
  ss_method: "aes-256-gcm",
  ws_path: "/a1b2c3",
  reality_private_key: "cHJpdmF0ZS1rZXktZm9yLXRlc3RzLW9ubHktMzItYnl0ZQ",
  reality_public_key: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
  reality_short_id: "0123456789abcdef",
  hy2_obfs_password: "obfs-Pa55word",
  ss_server_key: Buffer.alloc(32, 7).toString("base64"),
};
const REALITY_NODE = { ...V2RAY_NODE, type: "reality" as const, host: "www.example.org", port: 443 };
const H2_NODE = { ...V2RAY_NODE, type: "h2" as const, port: 8443 };
const CERTIFICATE = { certificateFile: "/etc/ferry/cert.pem", keyFile: "/etc/ferry/key.pem" };

const lines = (...protocols: LineProtocol[]) => protocols.map((protocol) => ({ protocol }));
const byTag = (config: CoreConfig, tag: string) => config.inbounds.find((inbound) => inbound.tag === tag);
const tags = (config: CoreConfig) => config.inbounds.map((inbound) => inbound.tag);

describe("v2ray dialect", () => {
  const { config, warnings } = renderCoreConfig({
    agent: V2RAY_NODE,
    lines: lines("vmesh_tcp", "vmesh_ws", "vmesh_tcp", "ss", "compat", "vmesh_ws"),
    users: [ALICE],
    dialect: "v2ray",
    apiPort: 10185,
  });

  test("one inbound per protocol (compat shares ss), each on port + offset", () => {
    expect(warnings).toEqual([]);
    expect(config.inbounds.map((i) => [i.tag, i.protocol, i.port, i.listen])).toEqual([
      ["api", "dokodemo-door", 10185, "127.0.0.1"],
      ["vmesh_tcp", "vmess", 10000, "0.0.0.0"],
      ["vmesh_ws", "vmess", 10001, "0.0.0.0"],
      ["ss", "shadowsocks", 10002, "0.0.0.0"],
    ]);
  });

  test("vmess users are AEAD (alterId 0) with <tag>|<userId> e-mails; ws serves the node's path and Host", () => {
    expect(byTag(config, "vmesh_tcp")).toMatchObject({
      settings: { clients: [{ id: ALICE.uuid, alterId: 0, level: 0, email: `vmesh_tcp|${ALICE.id}` }] },
      streamSettings: { network: "tcp", security: "none" },
    });
    expect(byTag(config, "vmesh_ws")).toMatchObject({
      settings: { clients: [{ id: ALICE.uuid, alterId: 0, level: 0, email: `vmesh_ws|${ALICE.id}` }] },
      // Plain ws even for cf_cdn lines: TLS ends at the CDN.
      streamSettings: {
        network: "ws",
        security: "none",
        wsSettings: { path: "/a1b2c3", headers: { Host: "hk.example.com" } },
      },
    });
  });

  test("the single Shadowsocks user has the password the subscription gives", () => {
    const [proxy] = lineProxies(
      {
        line: { name: "SS", protocol: "ss", bridge: "none", num: 1, fix_name: 0, scale: 1, bridge_addr: "" },
        agent: V2RAY_NODE,
        entry: null,
      },
      { uuid: ALICE.uuid },
    ) as ShadowsocksProxy[];
    expect(byTag(config, "ss")?.settings).toEqual({
      method: "aes-256-gcm",
      password: proxy?.password,
      email: `ss|${ALICE.id}`,
      level: 0,
      network: "tcp,udp",
    });
  });

  test("stats, API, outbounds and routing are the lab's, with no geoip/geosite rules", () => {
    expect(config).toMatchObject({
      log: { loglevel: "warning" },
      api: { tag: "api", services: ["HandlerService", "StatsService"] },
      stats: {},
      policy: { levels: { "0": { statsUserUplink: true, statsUserDownlink: true } } },
      outbounds: [
        { tag: "direct", protocol: "freedom", settings: {} },
        { tag: "blocked", protocol: "blackhole", settings: {} },
      ],
      routing: { rules: [{ type: "field", inboundTag: ["api"], outboundTag: "api" }] },
    });
    expect(JSON.stringify(config)).not.toMatch(/geoip|geosite/);
  });

  test("the ws Host falls back to the node IP; listen and access log are options", () => {
    const rendered = renderCoreConfig({
      agent: { ...V2RAY_NODE, host: "" },
      lines: lines("vmesh_ws"),
      users: [ALICE, BOB],
      dialect: "v2ray",
      listen: "127.0.0.1",
      accessLog: "/var/log/ferry/access.log",
    }).config;
    const ws = byTag(rendered, "vmesh_ws") as CoreInbound;
    expect(ws.listen).toBe("127.0.0.1");
    expect(ws.streamSettings).toMatchObject({ wsSettings: { headers: { Host: "203.0.113.9" } } });
    expect((ws.settings.clients as unknown[]).length).toBe(2);
    expect(rendered.log).toEqual({ loglevel: "warning", access: "/var/log/ferry/access.log" });
    expect(byTag(rendered, "api")?.port).toBe(10085);
  });

  test("Shadowsocks is left out with a warning unless there is exactly one user", () => {
    for (const users of [[ALICE, BOB], []]) {
      const rendered = renderCoreConfig({
        agent: V2RAY_NODE,
        lines: lines("ss", "vmesh_tcp"),
        users,
        dialect: "v2ray",
      });
      expect(tags(rendered.config)).toEqual(["api", "vmesh_tcp"]);
      expect(rendered.warnings).toHaveLength(1);
      expect(rendered.warnings[0]).toContain(`现有 ${users.length} 个`);
    }
  });

  test("Shadowsocks with a cipher v2ray 4.34 lacks is left out with a warning", () => {
    for (const method of ["2022-blake3-aes-128-gcm", "2022-blake3-aes-256-gcm"] as SsMethod[]) {
      const rendered = renderCoreConfig({
        agent: { ...V2RAY_NODE, ss_method: method },
        lines: lines("compat"),
        users: [ALICE],
        dialect: "v2ray",
      });
      expect(tags(rendered.config)).toEqual(["api"]);
      expect(rendered.warnings).toEqual([expect.stringContaining(method)]);
    }
    for (const method of ["aes-128-gcm", "chacha20-ietf-poly1305"] as SsMethod[]) {
      const rendered = renderCoreConfig({
        agent: { ...V2RAY_NODE, ss_method: method },
        lines: lines("compat"),
        users: [ALICE],
        dialect: "v2ray",
      });
      expect(rendered.warnings).toEqual([]);
      expect(byTag(rendered.config, "ss")?.settings.method).toBe(method);
    }
  });

  test("Reality and Hysteria2 nodes get no proxy inbound, with a warning", () => {
    const reality = renderCoreConfig({
      agent: REALITY_NODE,
      lines: lines("reality"),
      users: [ALICE],
      dialect: "v2ray",
    });
    const h2 = renderCoreConfig({
      agent: H2_NODE,
      lines: lines("h2"),
      users: [ALICE],
      dialect: "v2ray",
      certificate: CERTIFICATE,
    });
    for (const rendered of [reality, h2]) {
      expect(tags(rendered.config)).toEqual(["api"]);
      expect(rendered.warnings).toHaveLength(1);
    }
  });

  test("lines the node's type cannot serve are ignored with one warning", () => {
    const rendered = renderCoreConfig({
      agent: V2RAY_NODE,
      lines: lines("vmesh_tcp", "reality", "reality"),
      users: [ALICE],
      dialect: "v2ray",
    });
    expect(tags(rendered.config)).toEqual(["api", "vmesh_tcp"]);
    expect(rendered.warnings).toEqual([expect.stringContaining("reality")]);
  });
});

describe("xray dialect", () => {
  test("Shadowsocks carries every user, each with the subscription's password", () => {
    const { config, warnings } = renderCoreConfig({
      agent: V2RAY_NODE,
      lines: lines("ss", "compat"),
      users: [ALICE, BOB],
      dialect: "xray",
    });
    expect(warnings).toEqual([]);
    expect(byTag(config, "ss")).toMatchObject({
      port: 10002,
      protocol: "shadowsocks",
      settings: {
        method: "aes-256-gcm",
        network: "tcp,udp",
        clients: [
          { method: "aes-256-gcm", password: ALICE.uuid, level: 0, email: `ss|${ALICE.id}` },
          { method: "aes-256-gcm", password: BOB.uuid, level: 0, email: `ss|${BOB.id}` },
        ],
      },
    });
  });

  test("SS-2022: the inbound holds the server key, each client its user key; joined they are the subscription's password", () => {
    for (const method of ["2022-blake3-aes-128-gcm", "2022-blake3-aes-256-gcm"] as SsMethod[]) {
      const agent = { ...V2RAY_NODE, ss_method: method };
      const { config } = renderCoreConfig({
        agent,
        lines: lines("ss"),
        users: [ALICE, BOB],
        dialect: "xray",
      });
      const settings = byTag(config, "ss")?.settings as {
        method: string;
        password: string;
        clients: { password: string; email: string }[];
      };
      expect(settings.method).toBe(method);
      expect(settings.password).toBe(ssServerKey(agent));
      expect(Buffer.from(settings.password, "base64")).toHaveLength(method.includes("128") ? 16 : 32);
      for (const [index, user] of [ALICE, BOB].entries()) {
        const [proxy] = lineProxies(
          {
            line: {
              name: "SS",
              protocol: "ss",
              bridge: "none",
              num: 1,
              fix_name: 0,
              scale: 1,
              bridge_addr: "",
            },
            agent,
            entry: null,
          },
          { uuid: user.uuid },
        ) as ShadowsocksProxy[];
        const client = settings.clients[index];
        expect(`${settings.password}:${client?.password}`).toBe(proxy?.password as string);
        expect(client?.email).toBe(`ss|${user.id}`);
      }
    }
  });

  test("VLESS Reality with the node's keys, its host as camouflage, and the Vision flow", () => {
    const { config, warnings } = renderCoreConfig({
      agent: REALITY_NODE,
      lines: lines("reality", "reality"),
      users: [ALICE, BOB],
      dialect: "xray",
    });
    expect(warnings).toEqual([]);
    expect(tags(config)).toEqual(["api", "reality"]);
    expect(byTag(config, "reality")).toEqual({
      tag: "reality",
      listen: "0.0.0.0",
      port: 443,
      protocol: "vless",
      settings: {
        decryption: "none",
        clients: [
          { id: ALICE.uuid, flow: "xtls-rprx-vision", level: 0, email: `reality|${ALICE.id}` },
          { id: BOB.uuid, flow: "xtls-rprx-vision", level: 0, email: `reality|${BOB.id}` },
        ],
      },
      streamSettings: {
        network: "tcp",
        security: "reality",
        realitySettings: {
          show: false,
          dest: "www.example.org:443",
          xver: 0,
          serverNames: ["www.example.org"],
          privateKey: REALITY_NODE.reality_private_key,
          shortIds: [REALITY_NODE.reality_short_id],
        },
      },
    });
  });

  test("Hysteria2: users authenticate with their UUID; salamander uses the node's obfs password", () => {
    const { config, warnings } = renderCoreConfig({
      agent: { ...H2_NODE, host: "sg.example.com" },
      lines: lines("h2"),
      users: [ALICE],
      dialect: "xray",
      certificate: CERTIFICATE,
    });
    expect(warnings).toEqual([]);
    expect(byTag(config, "h2")).toEqual({
      tag: "h2",
      listen: "0.0.0.0",
      port: 8443,
      protocol: "hysteria",
      settings: { version: 2, users: [{ auth: ALICE.uuid, level: 0, email: `h2|${ALICE.id}` }] },
      streamSettings: {
        network: "hysteria",
        security: "tls",
        tlsSettings: { serverName: "sg.example.com", alpn: ["h3"], certificates: [CERTIFICATE] },
        hysteriaSettings: { version: 2 },
        finalmask: { udp: [{ type: "salamander", settings: { password: "obfs-Pa55word" } }] },
      },
    });
  });

  test("Hysteria2 without certificate files is left out with a warning", () => {
    const { config, warnings } = renderCoreConfig({
      agent: H2_NODE,
      lines: lines("h2"),
      users: [ALICE],
      dialect: "xray",
    });
    expect(tags(config)).toEqual(["api"]);
    expect(warnings).toHaveLength(1);
  });
});

const V2RAY = "/usr/bin/v2ray";

describe.skipIf(!existsSync(V2RAY))("Debian's v2ray 4.34 accepts the rendered config", () => {
  test("v2ray -test says Configuration OK", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ferry-core-"));
    try {
      const { config } = renderCoreConfig({
        agent: V2RAY_NODE,
        lines: lines("vmesh_tcp", "vmesh_ws", "ss"),
        users: [ALICE],
        dialect: "v2ray",
        listen: "127.0.0.1",
      });
      const file = join(dir, "config.json");
      writeFileSync(file, JSON.stringify(config));
      const check = Bun.spawn([V2RAY, "-test", "-config", file], { stdout: "pipe", stderr: "pipe" });
      const output = (await new Response(check.stdout).text()) + (await new Response(check.stderr).text());
      expect({ exit: await check.exited, output }).toEqual({
        exit: 0,
        output: expect.stringContaining("Configuration OK"),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
