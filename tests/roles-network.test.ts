/**
 * Role checks of the node back office (issue #4): every node / entry / line call refuses visitors
 * (1002) and normal, channel and yunying users (1003) without changing anything, works for admins,
 * and no answer — the admin's included — carries a node secret.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Entry } from "../src/modules/entry/schema.ts";
import type { AgentLine } from "../src/modules/line/schema.ts";
import type { Agent, PublicAgent } from "../src/modules/node-record/schema.ts";
import type { AgentRow } from "../src/modules/node-record/service.ts";
import { ApiClient, loggedInClient, startWithAdmin, type TestServer } from "./harness.ts";
import { V2RAY_NODE } from "./nodes.ts";

let server: TestServer;
let admin: ApiClient;

beforeAll(async () => ({ server, admin } = await startWithAdmin()));
afterAll(() => server?.close());

const NODE = {
  ...V2RAY_NODE,
  name: "香港 01",
  country: { code: "HK" },
  ip: "203.0.113.7",
  host: "hk.example.com",
  ssh_password: "root-secret-pw",
};

interface Fixtures {
  agent: Agent;
  entry: Entry;
  line: AgentLine;
}

async function ok<T>(client: ApiClient, path: string, payload: unknown = {}): Promise<T> {
  const answer = await client.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

async function makeFixtures(): Promise<Fixtures> {
  const agent = await ok<Agent>(admin, "/api/admin/agents/update", NODE);
  const entry = await ok<Entry>(admin, "/api/admin/entrys/update", { name: "广州入口", ip: "198.51.100.1" });
  const line = await ok<AgentLine>(admin, "/api/admin/agent_line/update", {
    name: "香港中转",
    agentID: agent._id,
    protocol: "vmesh_ws",
    bridge: "report",
    entryID: entry._id,
  });
  return { agent, entry, line };
}

const INTRUDER = "越权节点";

/** Every call of the back office with a valid payload; deletes last. */
function adminCalls(f: Fixtures): [path: string, payload: unknown][] {
  return [
    ["/api/admin/agents/list", {}],
    ["/api/admin/entrys/list", {}],
    ["/api/admin/agent_line/list", {}],
    ["/api/admin/agents/update", { ...NODE, name: INTRUDER }],
    ["/api/admin/agents/update", { ...NODE, _id: f.agent._id, name: INTRUDER }],
    ["/api/admin/entrys/update", { _id: f.entry._id, name: INTRUDER, ip: "192.0.2.1" }],
    ["/api/admin/agent_line/update", { ...f.line, name: INTRUDER }],
    ["/api/admin/agent_line/reset_hot", {}],
    ["/api/admin/agents/manual_update_agent", { agentid: f.agent._id }],
    ["/api/admin/agents/upgrade_agentserver", f.agent],
    ["/api/admin/agents/clear_updatetimes", {}],
    ["/api/admin/agent_line/delete_agent", { id: f.line._id }],
    ["/api/admin/entrys/delete", { id: f.entry._id }],
    ["/api/admin/agents/delete", { id: f.agent._id }],
  ];
}

async function snapshot() {
  return {
    agents: await ok<Agent[]>(admin, "/api/admin/agents/list"),
    entries: await ok<Entry[]>(admin, "/api/admin/entrys/list"),
    lines: await ok<AgentLine[]>(admin, "/api/admin/agent_line/list"),
  };
}

describe("refused", () => {
  const refused: [label: string, client: () => Promise<ApiClient>, code: number, msg: string][] = [
    ["a visitor", async () => new ApiClient(server.url), 1002, "登录过期，请登录"],
    ["a normal user", async () => (await loggedInClient(server)).client, 1003, "没有权限"],
    [
      "a channel user",
      async () => (await loggedInClient(server, { role: "channel" })).client,
      1003,
      "没有权限",
    ],
    [
      "a yunying user",
      async () => (await loggedInClient(server, { role: "yunying" })).client,
      1003,
      "没有权限",
    ],
  ];
  for (const [label, makeClient, code, msg] of refused) {
    test(`${label} gets ${code} from every call and changes nothing`, async () => {
      const fixtures = await makeFixtures();
      const client = await makeClient();
      const before = await snapshot();
      for (const [path, payload] of adminCalls(fixtures)) {
        expect({ path, answer: await client.call(path, payload) }).toEqual({
          path,
          answer: { code, data: null, msg },
        });
      }
      expect(await snapshot()).toEqual(before);
      expect(before.agents.map((a) => a.name)).not.toContain(INTRUDER);
    });
  }
});

/** Admin calls that get past the role check and then fail for a reason of their own (no agent to upgrade). */
const NODE_NOT_THERE = new Set(["/api/admin/agents/upgrade_agentserver"]);

describe("allowed", () => {
  test("an admin can make every call, and the deletes take the node, entry and line away", async () => {
    const fixtures = await makeFixtures();
    for (const [path, payload] of adminCalls(fixtures)) {
      if (!NODE_NOT_THERE.has(path)) {
        await ok(admin, path, payload);
        continue;
      }
      const answer = await admin.call(path, payload);
      expect({ path, code: answer.code }).toEqual({ path, code: 1000 });
    }
    const after = await snapshot();
    expect(after.agents.map((a) => a._id)).not.toContain(fixtures.agent._id);
    expect(after.entries.map((e) => e._id)).not.toContain(fixtures.entry._id);
    expect(after.lines.map((l) => l._id)).not.toContain(fixtures.line._id);
    expect(after.agents.map((a) => a.name)).toContain(INTRUDER);
  });
});

describe("node secrets stay on the server", () => {
  test("neither the admin list nor the customer node list carries a secret", async () => {
    const { agent } = await makeFixtures();
    const row = await server.context.db.get<AgentRow>("SELECT * FROM agents WHERE id = ?", agent._id);
    if (!row) throw new Error("node not stored");
    const secrets = [
      row.api_token,
      row.reality_private_key,
      row.hy2_obfs_password,
      row.ss_server_key,
      NODE.ssh_password,
    ];
    expect(secrets.every((secret) => secret.length >= 12)).toBe(true);

    const adminView = JSON.stringify(await ok<Agent[]>(admin, "/api/admin/agents/list"));
    const visitorView = JSON.stringify(
      await ok<PublicAgent[]>(new ApiClient(server.url), "/api/agent/agent_list"),
    );
    for (const secret of secrets) {
      expect(adminView).not.toContain(secret);
      expect(visitorView).not.toContain(secret);
    }
    expect(adminView).toContain(row.reality_public_key);
    expect(JSON.parse(adminView).find((a: Agent) => a._id === agent._id).hasSshPassword).toBe(true);
    // Customers see a node's name, flag and latency, not where it is.
    expect(visitorView).not.toContain(NODE.ip);
    expect(JSON.parse(visitorView)).toContainEqual({
      name: NODE.name,
      desc: "",
      country: { name: "香港", flag: "🇭🇰" },
      speed: 0,
      orderID: 0,
    });
  });

  test("saving a node without a password keeps the stored one; secrets are never taken from input", async () => {
    const { agent } = await makeFixtures();
    const read = async () =>
      await server.context.db.get<AgentRow>("SELECT * FROM agents WHERE id = ?", agent._id);
    const before = await read();
    const saved = await ok<Agent>(admin, "/api/admin/agents/update", {
      ...NODE,
      _id: agent._id,
      ssh_password: "",
      api_token: "chosen-by-attacker",
      reality_private_key: "chosen-by-attacker",
    });
    expect(saved.name).toBe(NODE.name);
    const after = await read();
    expect(after?.ssh_password).toBe(NODE.ssh_password);
    expect(after?.api_token).toBe(before?.api_token as string);
    expect(after?.reality_private_key).toBe(before?.reality_private_key as string);
  });
});
