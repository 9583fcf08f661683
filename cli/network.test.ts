/**
 * `ferry node list|add|show`, `ferry line list|add` and `ferry sub url|render`, run as real
 * processes against the data directory of a running server: what the CLI adds, the back office
 * and the customer's subscription show; what `sub render` prints is what the server answers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse as parseYaml } from "yaml";
import { GB } from "../src/lib/traffic.ts";
import type { Entry } from "../src/modules/entry/schema.ts";
import type { AgentLine } from "../src/modules/line/schema.ts";
import type { Agent } from "../src/modules/node-record/schema.ts";
import { findAgentRow } from "../src/modules/node-record/service.ts";
import { newId } from "../src/rpc/ids.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, expectRefused, type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

const withData = (args: string[]) => cli.withData(args);
const ferryOk = (args: string[]) => cli.ok(args);
const ferryJson = <T>(args: string[]) => cli.json<T>(args);

async function admin() {
  return (await loggedInClient(server, { role: "admin" })).client;
}

/** A customer with traffic left, so the subscription lists lines rather than the notice. */
async function customer() {
  const made = await loggedInClient(server);
  await server.context.db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", 10 * GB, made.user.id);
  return made;
}

test("every network command has --help", async () => {
  await expectHelp([
    [[], ["node", "line", "sub"]],
    [["node"], ["list", "add", "show"]],
    [
      ["node", "list"],
      ["--data", "--json"],
    ],
    [
      ["node", "add"],
      [
        "--name",
        "--type",
        "v2ray",
        "reality",
        "--ip",
        "--host",
        "--country",
        "--ctrl-port",
        "--zz-port",
        "--port",
        "--public-port",
        "--server-type",
        "--ss-method",
        "--desc",
        "--json",
      ],
    ],
    [
      ["node", "show"],
      ["<id>", "API token", "Reality private key", "--json"],
    ],
    [["line"], ["list", "add"]],
    [
      ["line", "list"],
      ["--node", "--json"],
    ],
    [
      ["line", "add"],
      [
        "--node",
        "--name",
        "--protocol",
        "--bridge",
        "--entry",
        "--scale",
        "--num",
        "--permission",
        "--private",
        "--fix-name",
        "--no-agency",
        "--json",
      ],
    ],
    [["sub"], ["url", "render"]],
    [
      ["sub", "url"],
      ["<email>", "--client", "--host", "describe_host", "--json"],
    ],
    [
      ["sub", "render"],
      ["<email>", "--client", "--ua", "--headers", "--host", "--json"],
    ],
  ]);
});

describe("node", () => {
  test("add fills the type's defaults; list and the back office show the node", async () => {
    const hk = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "CLI 香港",
      "--type",
      "v2ray",
      "--ip",
      "203.0.113.10",
      "--host",
      "hk.example.com",
      "--country",
      "hk",
      "--desc",
      "香港 BGP",
    ]);
    expect(hk).toMatchObject({
      name: "CLI 香港",
      type: "v2ray",
      ip: "203.0.113.10",
      host: "hk.example.com",
      country: { code: "HK", name: "香港", flag: "🇭🇰" },
      ctrl_port: 888,
      port: 10000,
      public_port: 10000,
      zz_port: 20000,
      serverType: "ubuntu_x86",
      ss_method: "aes-256-gcm",
      desc: "香港 BGP",
    });
    const reality = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "CLI Reality",
      "--type",
      "reality",
      "--ip",
      "198.51.100.7",
      "--host",
      "www.example.com",
    ]);
    expect(reality).toMatchObject({
      ctrl_port: 888,
      port: 443,
      public_port: 443,
      zz_port: 443,
      serverType: "ubuntu_reality",
    });
    expect(reality.reality_public_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const h2 = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "CLI Hy2",
      "--type",
      "h2",
      "--ip",
      "198.51.100.8",
      "--port",
      "8443",
      "--ss-method",
      "2022-blake3-aes-128-gcm",
    ]);
    expect(h2).toMatchObject({ ctrl_port: 999, port: 8443, public_port: 8443, zz_port: 443 });
    expect(h2.ss_method).toBe("2022-blake3-aes-128-gcm");

    const listed = await ferryJson<Agent[]>(["node", "list"]);
    expect(listed.map((a) => a._id)).toEqual(expect.arrayContaining([hk._id, reality._id, h2._id]));
    const text = await ferryOk(["node", "list"]);
    expect(text).toContain(hk._id);
    expect(text).toContain("🇭🇰 CLI 香港");
    expect(text).toContain("203.0.113.10 (hk.example.com)");

    const backOffice = await (await admin()).call<Agent[]>("/api/admin/agents/list");
    expect(backOffice.data.find((a) => a._id === hk._id)).toEqual(hk);
  });

  test("show prints the API token and no other secret", async () => {
    const node = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "Show",
      "--type",
      "reality",
      "--ip",
      "198.51.100.9",
      "--host",
      "www.example.org",
    ]);
    await server.context.db.run("UPDATE agents SET ssh_password = 'ssh-secret-pw' WHERE id = ?", node._id);
    const row = await findAgentRow(server.context, node._id);
    if (!row) throw new Error("node not stored");

    const shown = await ferryJson<Agent & { api_token: string }>(["node", "show", node._id]);
    expect(shown).toMatchObject({ ...node, hasSshPassword: true, api_token: row.api_token });
    const text = await ferryOk(["node", "show", node._id]);
    expect(text).toContain(row.api_token);
    expect(text).toContain(row.reality_public_key);
    expect(text).toContain("www.example.org");
    for (const secret of [
      row.reality_private_key,
      row.hy2_obfs_password,
      row.ss_server_key,
      row.ssh_password,
    ]) {
      expect(JSON.stringify(shown)).not.toContain(secret);
      expect(text).not.toContain(secret);
    }
  });

  test("bad input: one-line errors and nothing created", async () => {
    const before = (await ferryJson<Agent[]>(["node", "list"])).length;
    const add = ["node", "add", "--name", "X", "--ip", "192.0.2.1"];
    await expectRefused(
      (
        [
          [[...add, "--type", "vless"], /--type.*v2ray, h2, reality/],
          [["node", "add", "--name", "X", "--ip", "192.0.2.1"], /--type/],
          [["node", "add", "--type", "v2ray", "--ip", "192.0.2.1"], /--name/],
          [[...add, "--type", "reality"], /--host: Reality 节点需要填写伪装域名/],
          [[...add, "--type", "v2ray", "--port", "70000"], /--port: 端口必须在 1-65535 之间/],
          [[...add, "--type", "v2ray", "--zz-port", "ten"], /--zz-port must be a number/],
          [[...add, "--type", "v2ray", "--country", "ZZ"], /--country/],
          [[...add, "--type", "v2ray", "--ss-method", "rc4-md5"], /--ss-method/],
          [["node", "add", "--name", "X", "--type", "v2ray", "--ip", "bad ip!"], /--ip: IP 或域名格式错误/],
          [["node", "show", "nope"], /not a node id: nope/],
          [["node", "show", newId()], /no node/],
          [["node", "show"], /id/],
        ] as [string[], RegExp][]
      ).map(([args, mentions]) => [withData(args), mentions]),
    );
    expect((await ferryJson<Agent[]>(["node", "list"])).length).toBe(before);
  });
});

describe("line", () => {
  test("add takes the node's defaults and the back office's rules; list filters by node", async () => {
    const v2ray = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "Lines",
      "--type",
      "v2ray",
      "--ip",
      "203.0.113.20",
    ]);
    const h2 = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "Hy",
      "--type",
      "h2",
      "--ip",
      "203.0.113.21",
    ]);
    const backOffice = await admin();
    const entry = (
      await backOffice.call<Entry>("/api/admin/entrys/update", { name: "入口", ipList: ["192.0.2.5"] })
    ).data;

    // h2 node: protocol h2, bridge none without asking.
    const hy = await ferryJson<AgentLine>(["line", "add", "--node", h2._id, "--name", "Hy 线路"]);
    expect(hy).toMatchObject({ agentID: h2._id, protocol: "h2", bridge: "none", num: 1, scale: 1 });
    // v2ray node with --entry: vmesh_tcp via report.
    const relayed = await ferryJson<AgentLine>([
      "line",
      "add",
      "--node",
      v2ray._id,
      "--name",
      "中转",
      "--entry",
      entry._id,
      "--scale",
      "1.5",
      "--num",
      "2",
      "--private",
      "--no-agency",
    ]);
    expect(relayed).toMatchObject({
      protocol: "vmesh_tcp",
      bridge: "report",
      entryID: entry._id,
      scale: 1.5,
      num: 2,
      public: false,
      disableForAgency: true,
      fixName: false,
    });
    const permission = newId();
    await server.context.db.run(
      "INSERT INTO permissions (id, name, \"desc\", create_time) VALUES (?, 'cli-line', '', ?)",
      permission,
      Date.now(),
    );
    const ss = await ferryJson<AgentLine>([
      "line",
      "add",
      "--node",
      v2ray._id,
      "--name",
      "SS",
      "--protocol",
      "ss",
      "--bridge",
      "none",
      "--fix-name",
      "--permission",
      permission,
    ]);
    expect(ss).toMatchObject({
      protocol: "ss",
      bridge: "none",
      entryID: "",
      fixName: true,
      permissionRequire: permission,
      public: true,
      disableForAgency: false,
    });

    const onV2ray = await ferryJson<AgentLine[]>(["line", "list", "--node", v2ray._id]);
    expect(onV2ray.map((l) => l._id)).toEqual([relayed._id, ss._id]);
    const all = await ferryJson<AgentLine[]>(["line", "list"]);
    expect(all.map((l) => l._id)).toEqual(expect.arrayContaining([relayed._id, ss._id, hy._id]));
    const text = await ferryOk(["line", "list", "--node", v2ray._id]);
    expect(text).toContain("中转  on Lines  vmesh_tcp  report via 入口  2 × 1.5x  private  no agency");
    expect(text).not.toContain(hy._id);

    const listed = await backOffice.call<AgentLine[]>("/api/admin/agent_line/list", { agentID: v2ray._id });
    expect(listed.data).toEqual(onV2ray);
  });

  test("without --entry a line is direct, on a v2ray and a Reality node alike (issue 26 D17)", async () => {
    const node = (type: string, host: string[] = []) =>
      ferryJson<Agent>([
        "node",
        "add",
        "--name",
        `D17 ${type}`,
        "--type",
        type,
        "--ip",
        "192.0.2.40",
        ...host,
      ]);
    const v2ray = await node("v2ray");
    const reality = await node("reality", ["--host", "www.example.com"]);
    const direct = await ferryJson<AgentLine>(["line", "add", "--node", v2ray._id, "--name", "D17 直连"]);
    expect(direct).toMatchObject({ protocol: "vmesh_tcp", bridge: "none", entryID: "" });
    const vless = await ferryJson<AgentLine>(["line", "add", "--node", reality._id, "--name", "D17 Reality"]);
    expect(vless).toMatchObject({ protocol: "reality", bridge: "none", entryID: "" });
    expect(await ferryOk(["line", "add", "--help"])).toMatch(/with --entry, else\s+none \(direct\)/);
  });

  test("bad input: one-line errors and nothing created", async () => {
    const v2ray = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "Bad",
      "--type",
      "v2ray",
      "--ip",
      "192.0.2.30",
    ]);
    const before = (await ferryJson<AgentLine[]>(["line", "list"])).length;
    const add = ["line", "add", "--node", v2ray._id, "--name", "L"];
    await expectRefused(
      (
        [
          [[...add, "--bridge", "report"], /--entry: 中转线路需要选择入口/],
          [
            [...add, "--bridge", "none", "--fix-name", "--num", "3"],
            /--num: 固定名字，就不要配置多个，否则会出现重名/,
          ],
          [[...add, "--bridge", "none", "--protocol", "h2"], /v2ray 节点不支持 h2 协议/],
          [[...add, "--protocol", "trojan"], /--protocol/],
          [[...add, "--bridge", "cf_cdn"], /--bridge: CDN 只能用于 VMess WebSocket 线路/],
          [[...add, "--entry", newId()], /入口不存在/],
          [[...add, "--bridge", "none", "--permission", newId()], /权限不存在/],
          [[...add, "--bridge", "none", "--scale", "-1"], /--scale: 倍率不能为负/],
          [[...add, "--bridge", "none", "--num", "many"], /--num must be a number/],
          [["line", "add", "--node", newId(), "--name", "L"], /no node/],
          [["line", "add", "--node", v2ray._id], /--name/],
          [["line", "list", "--node", "xyz"], /not a node id: xyz/],
        ] as [string[], RegExp][]
      ).map(([args, mentions]) => [withData(args), mentions]),
    );
    expect((await ferryJson<AgentLine[]>(["line", "list"])).length).toBe(before);
  });
});

describe("sub", () => {
  /** Names the lines below give proxies: "<line name>[ NN][-k] [<scale>x]". */
  const vmessNames = ["订阅 直连 [1x]", "订阅 中转-1 [2x]", "订阅 中转-2 [2x]"];
  const ssName = "订阅 SS [1x]";
  const realityName = "订阅 Reality [1x]";

  async function network() {
    const node = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "订阅节点",
      "--type",
      "v2ray",
      "--ip",
      "203.0.113.40",
      "--host",
      "sub-node.example.com",
    ]);
    const reality = await ferryJson<Agent>([
      "node",
      "add",
      "--name",
      "订阅 Reality",
      "--type",
      "reality",
      "--ip",
      "203.0.113.41",
      "--host",
      "www.example.net",
    ]);
    const entry = (
      await (
        await admin()
      ).call<Entry>("/api/admin/entrys/update", {
        name: "订阅入口",
        ipList: ["192.0.2.41", "192.0.2.42"],
      })
    ).data;
    const lines = [
      ["--node", node._id, "--name", "订阅 直连", "--bridge", "none"],
      ["--node", node._id, "--name", "订阅 中转", "--entry", entry._id, "--scale", "2"],
      ["--node", node._id, "--name", "订阅 SS", "--protocol", "ss", "--bridge", "none"],
      ["--node", reality._id, "--name", "订阅 Reality", "--bridge", "none"],
    ];
    for (const line of lines) await ferryOk(["line", "add", ...line]);
    return { node, reality };
  }

  async function fetchLink(url: string, userAgent = "ferry-test") {
    const response = await fetch(url, { headers: { "user-agent": userAgent } });
    const skip = new Set(["date", "content-length"]);
    const headers = Object.fromEntries([...response.headers].filter(([name]) => !skip.has(name)));
    return { status: response.status, headers, body: await response.text() };
  }

  interface RenderedJson {
    url: string;
    format: string;
    headers: Record<string, string>;
    body: string;
  }

  test("url prints the link the server answers; describe_host wins over --host", async () => {
    const { email, user } = await customer();
    const link = (await ferryOk(["sub", "url", email.toUpperCase(), "--host", server.url])).trim();
    expect(link).toBe(`${server.url}/api/subscript/auto/${user.id}/${user.userkey}`);
    expect((await fetch(link)).status).toBe(200);
    const clash = await ferryJson<{ email: string; client: string; url: string }>([
      "sub",
      "url",
      email,
      "--client",
      "clash",
      "--host",
      server.url,
      "--param",
      "name=我的订阅",
    ]);
    expect(clash).toEqual({
      email,
      client: "clash",
      url: `${server.url}/api/subscript/clash/${user.id}/${user.userkey}?name=${encodeURIComponent("我的订阅")}`,
    });

    await server.context.settings.update({ describe_host: "sub.example.com" });
    try {
      expect((await ferryOk(["sub", "url", email, "--client", "v2ray", "--host", server.url])).trim()).toBe(
        `https://sub.example.com/api/subscript/v2ray/${user.id}/${user.userkey}`,
      );
      expect((await ferryOk(["sub", "url", email])).trim()).toStartWith("https://sub.example.com/");
    } finally {
      await server.context.settings.update({ describe_host: "" });
    }
  });

  test("render v2ray prints the server's bytes: base64 share URIs with the lines", async () => {
    await network();
    const { email } = await customer();
    const args = ["sub", "render", email, "--client", "v2ray", "--host", server.url];
    const body = await ferryOk(args);
    const rendered = await ferryJson<RenderedJson>(args);
    expect(rendered.format).toBe("v2ray");
    expect(rendered.body).toBe(body);
    const served = await fetchLink(rendered.url);
    expect(served).toEqual({ status: 200, headers: rendered.headers, body });

    const uris = Buffer.from(body, "base64").toString("utf8").trim().split("\n");
    const vmess = uris
      .filter((uri) => uri.startsWith("vmess://"))
      .map(
        (uri) => JSON.parse(Buffer.from(uri.slice(8), "base64").toString("utf8")) as Record<string, string>,
      );
    expect(vmess.map((v) => v.ps)).toEqual(expect.arrayContaining(vmessNames));
    expect(vmess.find((v) => v.ps === "订阅 直连 [1x]")).toMatchObject({
      add: "203.0.113.40",
      port: "10000",
    });
    expect(vmess.find((v) => v.ps === "订阅 中转-2 [2x]")).toMatchObject({
      add: "192.0.2.42",
      port: "20000",
    });
    const fragments = uris.map((uri) => decodeURIComponent(uri.slice(uri.indexOf("#") + 1)));
    expect(
      uris.find((uri) => uri.startsWith("ss://") && uri.endsWith(`#${encodeURIComponent(ssName)}`)),
    ).toContain("@203.0.113.40:10002");
    expect(uris.some((uri) => uri.startsWith("vless://"))).toBe(true);
    expect(fragments).toContain(realityName);

    // --headers: the response headers, a blank line, then the same body.
    const withHeaders = await ferryOk([...args, "--headers"]);
    const [head = "", ...rest] = withHeaders.split("\n\n");
    expect(rest.join("\n\n")).toBe(body);
    expect(head).toContain("subscription-userinfo: upload=0; download=0; total=");
    expect(head).toContain("profile-update-interval: 24");
  });

  test("render clash is YAML the server serves, with the lines Clash can use", async () => {
    const { email } = await customer();
    const args = ["sub", "render", email, "--client", "clash", "--host", server.url];
    const body = await ferryOk(args);
    const rendered = await ferryJson<RenderedJson>(args);
    expect(rendered.body).toBe(body);
    const served = await fetchLink(rendered.url);
    expect(served).toEqual({ status: 200, headers: rendered.headers, body });
    expect(rendered.headers["content-type"]).toContain("yaml");

    const config = parseYaml(body) as { proxies: { name: string; type: string; server: string }[] };
    const names = config.proxies.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining([...vmessNames, ssName]));
    // Original Clash has no VLESS Reality: the line is left out rather than sent broken.
    expect(names).not.toContain(realityName);
    expect(config.proxies.find((p) => p.name === ssName)).toMatchObject({
      type: "ss",
      server: "203.0.113.40",
    });
  });

  test("render --client auto picks the format by --ua, as the server does", async () => {
    const { email } = await customer();
    const args = ["sub", "render", email, "--client", "auto", "--host", server.url];
    const meta = await ferryJson<RenderedJson>([...args, "--ua", "clash-verge/v2.0.3"]);
    expect(meta.format).toBe("mihomo");
    const served = await fetchLink(meta.url, "clash-verge/v2.0.3");
    expect(served.body).toBe(meta.body);
    const names = (parseYaml(meta.body) as { proxies: { name: string }[] }).proxies.map((p) => p.name);
    expect(names).toContain(realityName);
    expect((await ferryJson<RenderedJson>(args)).format).toBe("v2ray");
  });

  test("render sing-box in the dialect of the --ua's core or of --param version=, as the server does", async () => {
    const { email } = await customer();
    const args = ["sub", "render", email, "--client", "auto", "--host", server.url];
    const sfi = "SFI/1.11.4 (441; sing-box 1.11.4; language zh_CN)";
    const legacy = await ferryJson<RenderedJson>([...args, "--ua", sfi]);
    expect(legacy.format).toBe("singbox");
    expect((await fetchLink(legacy.url, sfi)).body).toBe(legacy.body);
    const servers = (body: string) => (JSON.parse(body) as { dns: { servers: object[] } }).dns.servers;
    expect(servers(legacy.body)).toContainEqual({ tag: "local", address: "local", detour: "direct" });
    const sfa = "SFA/1.12.8 (512; sing-box 1.12.8)";
    const current = await ferryJson<RenderedJson>([...args, "--ua", sfa]);
    expect((await fetchLink(current.url, sfa)).body).toBe(current.body);
    expect(servers(current.body)).toContainEqual({ type: "local", tag: "local" });
    const asked = await ferryJson<RenderedJson>([...args, "--ua", sfa, "--param", "version=1.11"]);
    expect(asked.body).toBe(legacy.body);
  });

  test("bad input: one-line errors", async () => {
    const { email } = await customer();
    await expectRefused(
      (
        [
          [
            ["sub", "url", "nobody@example.com", "--host", server.url],
            /no account with e-mail nobody@example\.com/,
          ],
          [["sub", "url", email], /describe_host.*--host/],
          [["sub", "url", email, "--host", `${server.url}/sub`], /not an origin/],
          [["sub", "url", email, "--host", server.url, "--client", "clashx"], /--client must be one of/],
          [["sub", "url", email, "--host", server.url, "--param", "novalue"], /--param must be key=value/],
          [["sub", "render", email, "--host", server.url], /--client/],
          [
            ["sub", "render", "nobody@example.com", "--client", "v2ray", "--host", server.url],
            /nobody@example\.com/,
          ],
          [["sub", "render", email, "--client", "v2ray"], /--host/],
          [
            ["sub", "render", email, "--client", "singbox", "--host", server.url, "--param", "version=abc"],
            /version 参数无效/,
          ],
        ] as [string[], RegExp][]
      ).map(([args, mentions]) => [withData(args), mentions]),
    );
  });
});
