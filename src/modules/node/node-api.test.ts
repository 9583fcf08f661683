/**
 * The UniProxy node API over real HTTP (node-protocol.md §1, issue 5): per-node token auth,
 * ETag / 304, the ferry and UniProxy config shapes, which users a node admits, push charged once
 * per report id, alive / alivelist, and the node's status, version and update count.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { tx } from "../../db/db.ts";
import { GB, MB } from "../../lib/traffic.ts";
import { newId } from "../../rpc/ids.ts";
import { agentInput } from "../agent/schema.ts";
import { type AgentRow, findAgentRow, listAgents, saveAgent } from "../agent/service.ts";
import { changeTraffic } from "../ledger/service.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { findUserById, type UserRow } from "../user/service.ts";
import type { NodeUser } from "./service.ts";

let server: TestServer;
let node: AgentRow;
let otherNode: AgentRow;

function makeNode(name: string, ip: string): AgentRow {
  const ctx = server.context;
  const agent = saveAgent(
    ctx,
    agentInput.parse({
      name,
      country: { code: "JP" },
      type: "v2ray",
      ip,
      host: "jp.example.com",
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
    }),
  );
  return findAgentRow(ctx, agent._id) as AgentRow;
}

beforeAll(async () => {
  server = await startTestServer();
  const ctx = server.context;
  ctx.settings.update({ trafficStasticDuration: 30, updateV2rayDuration: 20 });
  node = makeNode("东京 01", "203.0.113.20");
  otherNode = makeNode("东京 02", "203.0.113.21");
  for (const protocol of ["vmesh_tcp", "vmesh_ws"]) {
    saveLine(ctx, lineInput.parse({ name: protocol, agentID: node.id, protocol, bridge: "none", scale: 2 }));
  }
});
afterAll(async () => {
  await server?.close();
});

function apiUrl(action: string, params: Record<string, string | number> = {}, row = node): string {
  const query = new URLSearchParams({
    token: row.api_token,
    node_id: String(row.node_no),
    node_type: "ferry",
    ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
  });
  return `${server.url}/api/v1/server/UniProxy/${action}?${query}`;
}

const agentFetch = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { "user-agent": "ferry-agent/9.9.9", ...(init.headers ?? {}) } });

function push(body: unknown, headers: Record<string, string> = {}, params: Record<string, string> = {}) {
  return agentFetch(apiUrl("push", params), {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

async function customer(traffic: number): Promise<UserRow> {
  const { user } = await loggedInClient(server);
  tx(server.context.db, () =>
    changeTraffic(server.context.db, {
      userId: user.id,
      type: "buy",
      desc: "测试",
      traffic,
      now: Date.now(),
      timeZone: "Asia/Shanghai",
    }),
  );
  return findUserById(server.context, user.id) as UserRow;
}

async function userList(row = node): Promise<NodeUser[]> {
  const response = await agentFetch(apiUrl("user", {}, row));
  expect(response.status).toBe(200);
  return ((await response.json()) as { users: NodeUser[] }).users;
}

describe("authentication", () => {
  test("a missing token or node id is 422, a wrong token 403, another node's token 403", async () => {
    const base = `${server.url}/api/v1/server/UniProxy/config`;
    expect((await fetch(`${base}?node_id=${node.node_no}&node_type=ferry`)).status).toBe(422);
    expect((await fetch(`${base}?token=${node.api_token}&node_type=ferry`)).status).toBe(422);
    const wrong = await fetch(`${base}?token=${"0".repeat(64)}&node_id=${node.node_no}&node_type=ferry`);
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual({ message: "token is error" });
    const crossed = await fetch(
      `${base}?token=${otherNode.api_token}&node_id=${node.node_no}&node_type=ferry`,
    );
    expect(crossed.status).toBe(403);
  });

  test("an unknown node_type is 400; the node's _id works as node_id too", async () => {
    expect((await fetch(apiUrl("config", { node_type: "wireguard" }))).status).toBe(400);
    const byId = await fetch(apiUrl("config", { node_id: node.id }));
    expect(byId.status).toBe(200);
  });
});

describe("config", () => {
  test("ferry: the whole node with its secrets, inbounds and intervals; ETag then 304", async () => {
    const response = await agentFetch(apiUrl("config"));
    expect(response.status).toBe(200);
    const etag = response.headers.get("etag") ?? "";
    const body = await response.text();
    expect(etag).toBe(`"${new Bun.CryptoHasher("sha1").update(body).digest("hex")}"`);
    const config = JSON.parse(body);
    expect(config).toMatchObject({
      protocol: "ferry",
      node_id: node.node_no,
      ctrl_port: 888,
      node: { type: "v2ray", port: 10000, ws_path: node.ws_path, ss_server_key: node.ss_server_key },
      inbounds: ["vmesh_tcp", "vmesh_ws"],
      base_config: { push_interval: 30, pull_interval: 20 },
    });
    const again = await agentFetch(apiUrl("config"), { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  test("vmess / v2ray: Xboard's shape for the node's VMess inbound; shadowsocks on a node without it is 400", async () => {
    const vmess = await (await fetch(apiUrl("config", { node_type: "v2ray" }))).json();
    expect(vmess).toEqual({
      protocol: "vmess",
      listen_ip: "0.0.0.0",
      server_port: 10000,
      base_config: { push_interval: 30, pull_interval: 20 },
      network: "tcp",
      networkSettings: null,
      tls: 0,
      multiplex: null,
    });
    const ss = await fetch(apiUrl("config", { node_type: "shadowsocks" }));
    expect(ss.status).toBe(400);
  });
});

describe("user", () => {
  test("admits users with traffic who can see a line; not disabled, exhausted or other nodes' users", async () => {
    const paying = await customer(GB);
    const broke = await customer(0);
    const disabled = await customer(GB);
    server.context.db.query("UPDATE users SET disabled = 1 WHERE id = ?").run(disabled.id);
    const ids = (await userList()).map((user) => user.id);
    expect(ids).toContain(paying.node_uid);
    expect(ids).not.toContain(broke.node_uid);
    expect(ids).not.toContain(disabled.node_uid);
    const entry = (await userList()).find((user) => user.id === paying.node_uid);
    expect(entry).toEqual({
      id: paying.node_uid,
      uuid: paying.proxy_secret,
      speed_limit: null,
      device_limit: null,
    });
    // otherNode has no lines: nobody may use it
    expect(await userList(otherNode)).toEqual([]);
  });

  test("a user with only a running time package and quota left today is admitted", async () => {
    const { user } = await loggedInClient(server);
    const ctx = server.context;
    tx(ctx.db, () =>
      changeTraffic(ctx.db, {
        userId: user.id,
        type: "buy",
        desc: "包天",
        vipExpireTime: Date.now() + 86_400_000,
        dailyLimit: 10 * GB,
        now: Date.now(),
        timeZone: "Asia/Shanghai",
      }),
    );
    expect((await userList()).map((entry) => entry.id)).toContain(user.node_uid);
  });

  test("the list's ETag changes when a user resets the subscription; the same list gets 304", async () => {
    const { client, user } = await loggedInClient(server);
    tx(server.context.db, () =>
      changeTraffic(server.context.db, {
        userId: user.id,
        type: "buy",
        desc: "测试",
        traffic: GB,
        now: Date.now(),
        timeZone: "Asia/Shanghai",
      }),
    );
    const first = await agentFetch(apiUrl("user"));
    const etag = first.headers.get("etag") ?? "";
    expect((await agentFetch(apiUrl("user"), { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await client.call("/api/user/reset_userkey")).code).toBe(0);
    const changed = await agentFetch(apiUrl("user"), { headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    const fresh = findUserById(server.context, user.id) as UserRow;
    const listed = ((await changed.json()) as { users: { id: number; uuid: string }[] }).users;
    expect(listed.find((entry) => entry.id === user.node_uid)?.uuid).toBe(fresh.proxy_secret);
    expect(fresh.proxy_secret).not.toBe(user.proxy_secret);
  });
});

describe("push", () => {
  test("charges once per X-Request-Id at the inbound's line scale", async () => {
    const user = await customer(GB);
    const reportId = newId();
    const body = { [user.node_uid]: [0, 10 * MB] };
    const first = await push(body, { "x-request-id": reportId }, { inbound: "vmesh_ws" });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ data: true, duplicate: false, users: 1, charged: 20 * MB });
    const resent = await push(body, { "x-request-id": reportId }, { inbound: "vmesh_ws" });
    expect(await resent.json()).toMatchObject({ data: true, duplicate: true });
    expect((findUserById(server.context, user.id) as UserRow).traffic).toBe(GB - 20 * MB);
  });

  test("a body that is not an object is 400 and charges nothing", async () => {
    const response = await push([1, 2]);
    expect(response.status).toBe(400);
    const text = await agentFetch(apiUrl("push"), { method: "POST", body: "not json" });
    expect(text.status).toBe(400);
  });
});

describe("alive and alivelist", () => {
  test("counts distinct IPs per user across nodes; a node's new report replaces its old one", async () => {
    const alive = (row: AgentRow, body: unknown) =>
      fetch(apiUrl("alive", {}, row), { method: "POST", body: JSON.stringify(body) });
    expect((await alive(node, { 4242: ["198.51.100.1", "198.51.100.2:5555"] })).status).toBe(200);
    await alive(otherNode, { 4242: ["198.51.100.2", "[2001:db8::1]:443"] });
    const list = async () =>
      ((await (await fetch(apiUrl("alivelist"))).json()) as { alive: Record<string, number> }).alive;
    expect((await list())["4242"]).toBe(3);
    await alive(node, { 4242: [] });
    expect((await list())["4242"]).toBe(2);
  });
});

describe("node status", () => {
  test("a node that calls is normal with its version and update count; one never heard from is not", async () => {
    const fresh = makeNode("大阪 01", "203.0.113.30");
    let agents = listAgents(server.context);
    expect(agents.find((agent) => agent._id === fresh.id)?.status).toBe(false);
    const before = agents.find((agent) => agent._id === node.id)?.updateConfigTimes ?? 0;
    await userList();
    agents = listAgents(server.context);
    const seen = agents.find((agent) => agent._id === node.id);
    expect(seen).toMatchObject({ status: true, agent_version: "9.9.9", updateConfigTimes: before + 1 });
    // three missed pull intervals (3 × 20 s) later it shows as error
    const later = listAgents(server.context, Date.now() + 61_000).find((agent) => agent._id === node.id);
    expect(later?.status).toBe(false);
  });
});
