/**
 * "Upgrade node" end to end on 127.0.0.1: the back office's upgrade_agentserver call reaches the
 * agent's real control server (src/node-program/control.ts) on the node's ctrl_port, the agent
 * downloads the panel's executable with the node's token and swaps its file when the SHA-256
 * matches; a tampered download, a node that is not there, a node with another token and a panel
 * without an executable each leave the file as it was and say why. Then the same with the whole
 * agent, `ferry node run --exe <file>` over Debian's v2ray: it swaps the file and exits 75 for its
 * service manager, or refuses a tampered download and keeps running. Also clear_updatetimes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../../package.json" with { type: "json" };
import { type ApiClient, startWithAdmin, type TestServer } from "../../../tests/harness.ts";
import { serveAgentBinary, V2RAY_NODE } from "../../../tests/nodes.ts";
import { freePort, skipWithoutV2ray, V2RAY } from "../../../tests/v2ray.ts";
import { type ControlServer, EXIT_UPGRADED, startControlServer } from "../../node-program/control.ts";
import type { Agent } from "../node-record/schema.ts";
import { type AgentRow, findAgentRow } from "../node-record/service.ts";
import { NO_AGENT_BINARY } from "./install.ts";

const OLD_EXE = "#!/bin/sh\necho 'ferry 0.0.9'\n";
const NEW_EXE = "#!/bin/sh\necho 'ferry 0.1.0'\n";

let server: TestServer;
let admin: ApiClient;
let dir: string;
let served: string;
let restoreAgent: () => void;

beforeAll(async () => {
  ({ server, admin } = await startWithAdmin());
  ({ dir, file: served, restore: restoreAgent } = serveAgentBinary("ferry-upgrade-", NEW_EXE));
});
afterAll(async () => {
  restoreAgent?.();
  await server?.close();
});

interface Node {
  agent: Agent;
  row: AgentRow;
  exe: string;
  control: ControlServer;
  upgradedTo: string[];
}

let count = 0;

/** A node on 127.0.0.1 whose agent runs the real control server on its ctrl_port. */
async function nodeWithAgent(options: { token?: string } = {}): Promise<Node> {
  count += 1;
  const exe = join(dir, `ferry-${count}`);
  writeFileSync(exe, OLD_EXE, { mode: 0o755 });
  const upgradedTo: string[] = [];
  // The node is saved first (it makes the token); the control server then takes a free port.
  const draft = await ok<Agent>("/api/admin/agents/update", nodeForm(`升级 ${count}`, 1));
  const row = (await findAgentRow(server.context, draft._id)) as AgentRow;
  const control = startControlServer({
    host: "127.0.0.1",
    port: 0,
    token: options.token ?? row.api_token,
    panelUrl: server.url,
    exe,
    agent: {
      sync: async () => ({ users: 0 }),
      status: () => ({ version: "0.0.9", users: 0, core: "running", pendingReports: 0, lastPushTime: 0 }),
      upgraded: (version) => upgradedTo.push(version),
    },
  });
  const agent = await ok<Agent>("/api/admin/agents/update", {
    ...nodeForm(draft.name, control.port),
    _id: draft._id,
  });
  return {
    agent,
    row: (await findAgentRow(server.context, draft._id)) as AgentRow,
    exe,
    control,
    upgradedTo,
  };
}

function nodeForm(name: string, ctrlPort: number) {
  return { ...V2RAY_NODE, name, ip: "127.0.0.1", ctrl_port: ctrlPort };
}

/**
 * Points the panel's address for nodes at a proxy that flips the last byte of every download (nodes
 * reach the panel through this address); `stop()` clears the address and stops the proxy.
 */
async function tamperedPanel() {
  const tamperer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const bytes = new Uint8Array(
        await (await fetch(`${server.url}${url.pathname}${url.search}`)).arrayBuffer(),
      );
      bytes.set([(bytes.at(-1) ?? 0) ^ 1], bytes.length - 1);
      return new Response(bytes);
    },
  });
  await server.context.settings.update({ panel_url: `http://127.0.0.1:${tamperer.port}` });
  return {
    async stop() {
      await server.context.settings.update({ panel_url: "" });
      await tamperer.stop(true);
    },
  };
}

async function ok<T>(path: string, payload: unknown = {}): Promise<T> {
  const answer = await admin.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

/** The seed's upgrade call sends the whole node. */
const upgrade = (agent: Agent) => admin.call("/api/admin/agents/upgrade_agentserver", agent);

describe("upgrade_agentserver", () => {
  test("the agent swaps its executable for the panel's and is told to restart", async () => {
    const node = await nodeWithAgent();
    try {
      const answer = await upgrade(node.agent);
      const sha256 = new Bun.CryptoHasher("sha256").update(NEW_EXE).digest("hex");
      expect(answer).toEqual({ code: 0, data: { version: pkg.version, sha256 }, msg: "ok" });
      expect(readFileSync(node.exe, "utf8")).toBe(NEW_EXE);
      await Bun.sleep(100); // the agent restarts just after answering
      expect(node.upgradedTo).toEqual([pkg.version]);
    } finally {
      await node.control.stop();
    }
  });

  test("a download tampered with on the way is refused by the agent; its file stays", async () => {
    const node = await nodeWithAgent();
    const tamperer = await tamperedPanel();
    try {
      expect(await upgrade(node.agent)).toEqual({ code: 1000, data: null, msg: "sha256 mismatch" });
      expect(readFileSync(node.exe, "utf8")).toBe(OLD_EXE);
      expect(node.upgradedTo).toEqual([]);
    } finally {
      await tamperer.stop();
      await node.control.stop();
    }
  });

  test("a node that does not answer: 节点无法连接 with its address", async () => {
    const node = await nodeWithAgent();
    await node.control.stop();
    expect(await upgrade(node.agent)).toEqual({
      code: 1000,
      data: null,
      msg: `节点无法连接（127.0.0.1:${node.control.port}）`,
    });
    expect(readFileSync(node.exe, "utf8")).toBe(OLD_EXE);
  });

  test("an agent holding another token refuses the panel", async () => {
    const node = await nodeWithAgent({ token: "a-token-the-panel-does-not-know" });
    try {
      expect(await upgrade(node.agent)).toEqual({ code: 1000, data: null, msg: "节点拒绝了面板的令牌" });
      expect(readFileSync(node.exe, "utf8")).toBe(OLD_EXE);
    } finally {
      await node.control.stop();
    }
  });

  test("something else listening on the control port is named as such", async () => {
    const node = await nodeWithAgent();
    await node.control.stop();
    const other = Bun.serve({
      hostname: "127.0.0.1",
      port: node.control.port,
      fetch: () => new Response("hi"),
    });
    try {
      expect(await upgrade(node.agent)).toEqual({
        code: 1000,
        data: null,
        msg: "节点控制端口上不是 ferry 节点程序（HTTP 200）",
      });
    } finally {
      await other.stop(true);
    }
  });

  test("a panel without an executable to hand out says so before calling the node", async () => {
    const node = await nodeWithAgent();
    delete process.env.FERRY_AGENT_BINARY;
    try {
      expect(await upgrade(node.agent)).toEqual({ code: 1000, data: null, msg: NO_AGENT_BINARY });
      expect(readFileSync(node.exe, "utf8")).toBe(OLD_EXE);
    } finally {
      process.env.FERRY_AGENT_BINARY = served;
      await node.control.stop();
    }
  });

  test("an unknown node is 1004 and a payload without an id 1000", async () => {
    expect(
      await admin.call("/api/admin/agents/upgrade_agentserver", { id: "0123456789abcdef01234567" }),
    ).toEqual({ code: 1004, data: null, msg: "节点不存在" });
    expect(await admin.call("/api/admin/agents/upgrade_agentserver", {})).toEqual({
      code: 1000,
      data: null,
      msg: "参数错误 缺少节点 id",
    });
  });
});

/** `ferry node run` for a node on 127.0.0.1, until its control port answers. */
async function runAgent(row: AgentRow, exe: string) {
  const dataDir = mkdtempSync(join(dir, "agent-data-"));
  const apiPort = await freePort();
  const agent = Bun.spawn(
    [
      process.execPath,
      "src/main.ts",
      "node",
      "run",
      ...["--panel", server.url, "--node-id", String(row.node_no), "--token", row.api_token],
      ...["--data-dir", dataDir, "--core", "v2ray", "--core-bin", V2RAY, "--api-port", String(apiPort)],
      ...["--listen", "127.0.0.1", "--ctrl-host", "127.0.0.1", "--exe", exe],
    ],
    { cwd: join(import.meta.dir, "../../.."), stdout: "pipe", stderr: "pipe" },
  );
  const status = `http://127.0.0.1:${row.ctrl_port}/status`;
  const until = Date.now() + 20_000;
  while (Date.now() < until && agent.exitCode === null) {
    const answer = await fetch(status, { headers: { authorization: `Bearer ${row.api_token}` } }).catch(
      () => null,
    );
    if (answer?.status === 200) return agent;
    await Bun.sleep(100);
  }
  agent.kill();
  throw new Error(`the agent did not open its control port: ${await new Response(agent.stderr).text()}`);
}

describe.skipIf(skipWithoutV2ray("upgrade.test.ts"))("with the whole agent (ferry node run)", () => {
  async function agentNode() {
    const exe = join(dir, `ferry-run-${++count}`);
    writeFileSync(exe, OLD_EXE, { mode: 0o755 });
    const agent = await ok<Agent>("/api/admin/agents/update", nodeForm(`整机 ${count}`, await freePort()));
    const row = (await findAgentRow(server.context, agent._id)) as AgentRow;
    return { agent, row, exe, process: await runAgent(row, exe) };
  }

  test("the agent swaps its executable and exits 75 for the service manager to start the new one", async () => {
    const node = await agentNode();
    try {
      expect((await upgrade(node.agent)).code).toBe(0);
      expect(await node.process.exited).toBe(EXIT_UPGRADED);
      expect(readFileSync(node.exe, "utf8")).toBe(NEW_EXE);
    } finally {
      node.process.kill();
    }
  });

  test("a tampered download: the file stays and the agent keeps serving", async () => {
    const node = await agentNode();
    const tamperer = await tamperedPanel();
    try {
      expect(await upgrade(node.agent)).toEqual({ code: 1000, data: null, msg: "sha256 mismatch" });
      expect(readFileSync(node.exe, "utf8")).toBe(OLD_EXE);
      const status = await fetch(`http://127.0.0.1:${node.row.ctrl_port}/status`, {
        headers: { authorization: `Bearer ${node.row.api_token}` },
      });
      expect(status.status).toBe(200);
      expect(node.process.exitCode).toBeNull();
    } finally {
      await tamperer.stop();
      node.process.kill();
      await node.process.exited;
    }
  });
});

describe("clear_updatetimes", () => {
  test("the update counts the node API recorded go back to 0", async () => {
    const node = await nodeWithAgent();
    await node.control.stop();
    const config = await fetch(
      `${server.url}/api/v1/server/UniProxy/config?node_type=ferry&node_id=${node.row.node_no}&token=${node.row.api_token}`,
    );
    expect(config.status).toBe(200);
    const counts = async () =>
      (await ok<Agent[]>("/api/admin/agents/list")).find((a) => a._id === node.agent._id)?.updateConfigTimes;
    expect(await counts()).toBe(1);
    expect(await ok("/api/admin/agents/clear_updatetimes")).toBeNull();
    expect(await counts()).toBe(0);
  });
});
