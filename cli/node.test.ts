/**
 * `ferry node status|upgrade|install-cmd` as real processes against the data directory of a
 * running panel: status reflects the node's calls to the node API, install-cmd prints what the back
 * office shows, and upgrade reaches the agent's real control server on 127.0.0.1 and swaps its
 * executable (or says why not, in one line).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { formatInstant } from "../src/lib/time.ts";
import type { Agent } from "../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import { startControlServer } from "../src/node-program/control.ts";
import { type ApiClient, loggedInClient, type TestServer } from "../tests/harness.ts";
import { serveAgentBinary } from "../tests/nodes.ts";
import { expectHelp, expectOneLineError, type FerryIn, ferry, startWithCli } from "./test-helpers.ts";

const NEW_EXE = "#!/bin/sh\necho 'ferry new'\n";
const NEW_SHA = new Bun.CryptoHasher("sha256").update(NEW_EXE).digest("hex");

let server: TestServer;
let cli: FerryIn;
let admin: ApiClient;
let dir: string;
let served: string;
let restoreAgent: () => void;

beforeAll(async () => {
  ({ server, cli } = await startWithCli());
  admin = (await loggedInClient(server, { role: "admin" })).client;
  // The panel (this process) and the CLI (a child) hand out the same executable.
  ({ dir, file: served, restore: restoreAgent } = serveAgentBinary("ferry-cli-node-", NEW_EXE));
});
afterAll(async () => {
  restoreAgent?.();
  await server?.close();
});

let count = 0;
async function addNode(ctrlPort = 888, serverType = "ubuntu_x86"): Promise<AgentRow> {
  count += 1;
  const id = (
    await cli.json<Agent>([
      "node",
      "add",
      "--name",
      `命令行 ${count}`,
      "--type",
      "v2ray",
      "--ip",
      "127.0.0.1",
      "--ctrl-port",
      String(ctrlPort),
      "--server-type",
      serverType,
    ])
  )._id;
  return (await findAgentRow(server.context, id)) as AgentRow;
}

const withAgentEnv = (args: string[]) => ferry(cli.withData(args), { FERRY_AGENT_BINARY: served });

test("the node commands have --help", async () => {
  await expectHelp([
    [["node"], ["status", "anomalies", "upgrade", "install-cmd"]],
    [
      ["node", "status"],
      ["--data", "--json"],
    ],
    [
      ["node", "anomalies"],
      ["<id>", "--data", "--json"],
    ],
    [
      ["node", "upgrade"],
      ["<id>", "--panel", "SHA-256", "--json"],
    ],
    [
      ["node", "install-cmd"],
      ["<id>", "--panel", "token"],
    ],
  ]);
});

describe("ferry node status", () => {
  test("not connected until the node calls in; then 正常 with its version, update count and last call", async () => {
    const node = await addNode();
    const before = (await cli.json<{ _id: string; status: boolean }[]>(["node", "status"])).find(
      (n) => n._id === node.id,
    );
    expect(before).toMatchObject({ status: false, agent_version: "", updateConfigTimes: 0, lastSeenTime: 0 });

    const called = Date.now();
    const config = await fetch(
      `${server.url}/api/v1/server/UniProxy/config?node_type=ferry&node_id=${node.node_no}&token=${node.api_token}`,
      { headers: { "user-agent": "ferry-agent/0.1.7" } },
    );
    expect(config.status).toBe(200);

    const after = (await cli.json<{ _id: string; lastSeenTime: number }[]>(["node", "status"])).find(
      (n) => n._id === node.id,
    );
    expect(after).toMatchObject({
      _id: node.id,
      name: node.name,
      nodeNo: node.node_no,
      status: true,
      agent_version: "0.1.7",
      updateConfigTimes: 1,
      onlineUsers: 0,
    });
    expect(after?.lastSeenTime).toBeGreaterThanOrEqual(called);

    const text = await cli.ok(["node", "status"]);
    const lines = text.trimEnd().split("\n");
    expect(lines[0]?.split(/\s{2,}/)).toEqual([
      "name",
      "node no",
      "status",
      "version",
      "updates",
      "last seen",
      "online users",
      "anomalies (30 d)",
    ]);
    const row = lines.find((line) => line.startsWith(`${node.name} `));
    expect(row?.split(/\s{2,}/)).toEqual([
      node.name,
      String(node.node_no),
      "正常",
      "0.1.7",
      "1",
      formatInstant(after?.lastSeenTime ?? 0, await server.context.settings.get("timezone")),
      "0",
      "0",
    ]);
  });
});

describe("ferry node anomalies", () => {
  test("a push for a user the node was not given: counted in status, listed per user and day", async () => {
    const node = await addNode();
    const { user } = await loggedInClient(server);
    const push = await fetch(
      `${server.url}/api/v1/server/UniProxy/push?node_type=ferry&node_id=${node.node_no}&token=${node.api_token}`,
      { method: "POST", body: JSON.stringify({ [user.node_uid]: [10, 20] }) },
    );
    expect(push.status).toBe(200);
    const status = (await cli.json<{ _id: string; anomalies: number }[]>(["node", "status"])).find(
      (n) => n._id === node.id,
    );
    expect(status?.anomalies).toBe(1);
    const rows = await cli.json<unknown[]>(["node", "anomalies", node.id]);
    expect(rows).toEqual([
      expect.objectContaining({
        userNo: user.node_uid,
        email: user.email,
        reason: "not_admitted",
        upload: 10,
      }),
    ]);
    const text = await cli.ok(["node", "anomalies", node.id]);
    expect(text).toContain(user.email);
    expect(text).toContain("not on its user list");
    expectOneLineError(
      await ferry(cli.withData(["node", "anomalies", "0123456789abcdef01234567"])),
      "no node 0123456789abcdef01234567",
    );
  });
});

describe("ferry node install-cmd", () => {
  test("prints what 获取更新命令 shows, with --panel or the setting panel_url", async () => {
    const node = await addNode(888, "alpine_reality");
    const printed = await cli.ok(["node", "install-cmd", node.id, "--panel", "https://panel.example.com/"]);
    expect(printed).toBe(
      "curl -fsSL 'https://panel.example.com/node/install.sh?server_type=alpine_reality' | sh -s -- " +
        `--panel 'https://panel.example.com' --node-id ${node.node_no} --token ${node.api_token}\n`,
    );

    await server.context.settings.update({ panel_url: server.url });
    try {
      const fromSetting = await cli.ok(["node", "install-cmd", node.id]);
      const shown = await admin.call<{ cmd: string }>("/api/admin/agents/manual_update_agent", {
        agentid: node.id,
      });
      expect(fromSetting).toBe(`${shown.data.cmd}\n`);
      expect(fromSetting).toContain(`--panel '${server.url}'`);
    } finally {
      await server.context.settings.update({ panel_url: "" });
    }
  });

  test("refuses in one line without a panel URL, with a bad one, and for an unknown node", async () => {
    const node = await addNode();
    expectOneLineError(
      await ferry(cli.withData(["node", "install-cmd", node.id])),
      "no panel URL: pass --panel https://your-panel or set the setting panel_url",
    );
    expectOneLineError(
      await ferry(cli.withData(["node", "install-cmd", node.id, "--panel", "http://x/'; rm -rf /"])),
      /面板地址格式错误/,
    );
    expectOneLineError(
      await ferry(cli.withData(["node", "install-cmd", "0123456789abcdef01234567", "--panel", server.url])),
      "no node 0123456789abcdef01234567",
    );
  });
});

describe("ferry node upgrade", () => {
  test("the node's agent swaps its executable for this one", async () => {
    const exe = join(dir, "ferry-on-node");
    writeFileSync(exe, "#!/bin/sh\necho old\n", { mode: 0o755 });
    const node = await addNode();
    const upgradedTo: string[] = [];
    const control = startControlServer({
      host: "127.0.0.1",
      port: 0,
      token: node.api_token,
      panelUrl: server.url,
      exe,
      agent: {
        sync: async () => ({ users: 0 }),
        status: () => ({ version: "0.0.1", users: 0, core: "running", pendingReports: 0, lastPushTime: 0 }),
        upgraded: (version) => upgradedTo.push(version),
      },
    });
    try {
      await server.context.db.run("UPDATE agents SET ctrl_port = ? WHERE id = ?", control.port, node.id);
      const run = await withAgentEnv(["node", "upgrade", node.id, "--panel", server.url]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      expect(run.stdout).toBe(`upgraded ${node.name} to ${pkg.version} (sha256 ${NEW_SHA})\n`);
      expect(readFileSync(exe, "utf8")).toBe(NEW_EXE);
      await Bun.sleep(100);
      expect(upgradedTo).toEqual([pkg.version]);
    } finally {
      await control.stop();
    }
  });

  test("says why in one line: no panel URL, a node that does not answer", async () => {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port as number;
    await probe.stop(true);
    const node = await addNode(port);
    expectOneLineError(
      await withAgentEnv(["node", "upgrade", node.id]),
      "no panel URL: pass --panel https://your-panel or set the setting panel_url",
    );
    expectOneLineError(
      await withAgentEnv(["node", "upgrade", node.id, "--panel", server.url]),
      `error: 升级失败: 节点无法连接（127.0.0.1:${port}）`,
    );
  });
});
