/**
 * The UniProxy node API over real HTTP (node-protocol.md §1, issue 5): per-node token auth,
 * ETag / 304, the ferry and UniProxy config shapes, which users a node admits, push charged once
 * per report id, alive / alivelist, and the node's status, version and update count.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { recordTraffic } from "../../../tests/traffic.ts";
import { tx } from "../../db/db.ts";
import { GB, MB } from "../../lib/traffic.ts";
import { newId } from "../../rpc/ids.ts";
import { changeTraffic } from "../ledger/service.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import type { Agent, NodeAnomaly } from "../node-record/schema.ts";
import { type AgentRow, findAgentRow, listAgents } from "../node-record/service.ts";
import type { UserRow } from "../user/row.ts";
import { findUserById } from "../user/service.ts";
import type { NodeUser } from "./service.ts";

let server: TestServer;
let node: AgentRow;
let otherNode: AgentRow;

async function makeNode(name: string, ip: string): Promise<AgentRow> {
  const ctx = server.context;
  const agent = await saveNode(server, { name, country: { code: "JP" }, ip, host: "jp.example.com" });
  return await findAgentRow(ctx, agent._id) as AgentRow;
}

beforeAll(async () => {
  server = await startTestServer();
  const ctx = server.context;
  await ctx.settings.update({ trafficStasticDuration: 30, updateV2rayDuration: 20 });
  node = await makeNode("东京 01", "203.0.113.20");
  otherNode = await makeNode("东京 02", "203.0.113.21");
  for (const protocol of ["vmesh_tcp", "vmesh_ws"]) {
    await saveLine(ctx, lineInput.parse({ name: protocol, agentID: node.id, protocol, bridge: "none", scale: 2 }));
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
  await recordTraffic(server, user.id, "buy", traffic);
  return await findUserById(server.context, user.id) as UserRow;
}

const alive = (row: AgentRow, body: unknown) =>
  agentFetch(apiUrl("alive", {}, row), { method: "POST", body: JSON.stringify(body) });

async function aliveList(): Promise<Record<string, number>> {
  return ((await (await agentFetch(apiUrl("alivelist"))).json()) as { alive: Record<string, number> }).alive;
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
    await server.context.db.run("UPDATE users SET disabled = 1 WHERE id = ?", disabled.id);
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
    await tx(ctx.db, async () =>
      await changeTraffic(ctx.db, {
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
    await recordTraffic(server, user.id, "buy", GB);
    const first = await agentFetch(apiUrl("user"));
    const etag = first.headers.get("etag") ?? "";
    expect((await agentFetch(apiUrl("user"), { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await client.call("/api/user/reset_userkey")).code).toBe(0);
    const changed = await agentFetch(apiUrl("user"), { headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    const fresh = await findUserById(server.context, user.id) as UserRow;
    const listed = ((await changed.json()) as { users: { id: number; uuid: string }[] }).users;
    expect(listed.find((entry) => entry.id === user.node_uid)?.uuid).toBe(fresh.proxy_secret);
    expect(fresh.proxy_secret).not.toBe(user.proxy_secret);
  });
});

describe("push", () => {
  test("charges once per X-Request-Id at the inbound's line scale", async () => {
    const user = await customer(GB);
    await userList(); // the node pulls its list, which admits the new customer
    const reportId = newId();
    const body = { [user.node_uid]: [0, 10 * MB] };
    const first = await push(body, { "x-request-id": reportId }, { inbound: "vmesh_ws" });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ data: true, duplicate: false, users: 1, charged: 20 * MB });
    const resent = await push(body, { "x-request-id": reportId }, { inbound: "vmesh_ws" });
    expect(await resent.json()).toMatchObject({ data: true, duplicate: true });
    expect((await findUserById(server.context, user.id) as UserRow).traffic).toBe(GB - 20 * MB);
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
    const user = await customer(GB);
    await saveLine(
      server.context,
      lineInput.parse({ name: "东京 02 TCP", agentID: otherNode.id, protocol: "vmesh_tcp", bridge: "none" }),
    );
    await userList();
    await userList(otherNode);
    const uid = user.node_uid;
    expect((await alive(node, { [uid]: ["198.51.100.1", "198.51.100.2:5555"] })).status).toBe(200);
    await alive(otherNode, { [uid]: ["198.51.100.2", "[2001:db8::1]:443"] });
    expect((await aliveList())[uid]).toBe(3);
    await alive(node, { [uid]: [] });
    expect((await aliveList())[uid]).toBe(2);
  });
});

describe("node status", () => {
  test("a node that calls is normal with its version and update count; one never heard from is not", async () => {
    const fresh = await makeNode("大阪 01", "203.0.113.30");
    let agents = await listAgents(server.context);
    expect(agents.find((agent) => agent._id === fresh.id)?.status).toBe(false);
    const before = agents.find((agent) => agent._id === node.id)?.updateConfigTimes ?? 0;
    await userList();
    agents = await listAgents(server.context);
    const seen = agents.find((agent) => agent._id === node.id);
    expect(seen).toMatchObject({ status: true, agent_version: "9.9.9", updateConfigTimes: before + 1 });
    // three missed pull intervals (3 × 20 s) later it shows as error
    const later = (await listAgents(server.context, Date.now() + 61_000)).find((agent) => agent._id === node.id);
    expect(later?.status).toBe(false);
  });
});

/** Everything a push can change: balances, the ledger, usage, report ids, line heat, node counters. */
async function chargingState() {
  const db = server.context.db;
  return {
    users: await db.all("SELECT id, traffic, spend_traffic, daily_usage, daily_usage_day FROM users JOIN balances ON user_id = id ORDER BY id"),
    records: await db.all("SELECT * FROM traffic_records ORDER BY id"),
    usage: await db.all("SELECT * FROM usage_days ORDER BY day, user_id"),
    reports: await db.all("SELECT * FROM node_reports ORDER BY agent_id, report_id"),
    heat: await db.all("SELECT id, hot FROM agent_lines ORDER BY id"),
    nodes: await db.all("SELECT id, last_push_time, online_users FROM agents ORDER BY id"),
  };
}

function pushText(body: string, row = node, headers: Record<string, string> = {}) {
  return agentFetch(apiUrl("push", {}, row), {
    method: "POST",
    body,
    headers: { "content-type": "application/json", "x-request-id": newId(), ...headers },
  });
}

/** 100 Gbit/s for the longest push interval (86 400 s): the documented per-report bound. */
const REPORT_BOUND = 12_500_000_000 * 86_400;

describe("push: malformed reports are refused whole (issue 11 §4)", () => {
  let payer: UserRow;
  let other: UserRow;

  beforeAll(async () => {
    payer = await customer(GB);
    other = await customer(GB);
    await userList();
  });

  async function expectRefused(body: string, message: RegExp) {
    const before = await chargingState();
    const response = await pushText(body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(message);
    expect(await chargingState()).toEqual(before);
  }

  test("a user id that is not the integer's own digits is refused; the valid entry beside it is not applied", async () => {
    const uid = String(payer.node_uid);
    const valid = `"${other.node_uid}":[0,1048576]`;
    const unicodeDigit = `\\u00${(0x30 + Number(uid[0])).toString(16)}${uid.slice(1)}`;
    for (const key of [
      `0${uid}`,
      `00${uid}`,
      `+${uid}`,
      `${uid}.0`,
      ` ${uid}`,
      `${uid} `,
      "-1",
      unicodeDigit,
    ]) {
      await expectRefused(`{${valid},"${key}":[0,1048576]}`, /user id/);
    }
  });

  test("the same user twice (a duplicate JSON key) is refused, not summed or overwritten", async () => {
    const uid = payer.node_uid;
    await expectRefused(
      `{"${uid}":[0,1048576],"${other.node_uid}":[0,1],"${uid}":[0,1048576]}`,
      /more than once/,
    );
  });

  test("a 2^63 byte count, a fraction, a negative, a string and a wrong-length entry are refused", async () => {
    const uid = payer.node_uid;
    const valid = `"${other.node_uid}":[0,1048576]`;
    for (const entry of [
      "[0,9223372036854775808]",
      "[0,1.5]",
      "[-1,5]",
      '[0,"1"]',
      "[1]",
      "[1,2,3]",
      "null",
    ]) {
      await expectRefused(`{${valid},"${uid}":${entry}}`, /byte/);
    }
  });

  test("more bytes than a 100 Gbit/s node moves in the longest push interval are refused, per user and per report", async () => {
    await expectRefused(`{"${payer.node_uid}":[1,${REPORT_BOUND}]}`, /at most/);
    const half = REPORT_BOUND / 2 + 1;
    await expectRefused(`{"${payer.node_uid}":[0,${half}],"${other.node_uid}":[0,${half}]}`, /at most/);
  });

  test("a body that is not a JSON object is refused", async () => {
    for (const body of ["[1,2]", "null", "not json", '"x"']) await expectRefused(body, /object|JSON/);
  });

  test("a well-formed report of the same users is then charged as usual", async () => {
    const response = await pushText(`{"${payer.node_uid}":[0,1048576]}`);
    expect(response.status).toBe(200);
    expect((await findUserById(server.context, payer.id) as UserRow).traffic).toBeLessThan(payer.traffic);
  });
});

describe("push: a node charges only the users it serves (issue 11 §5)", () => {
  let stranger: AgentRow;
  let admin: ApiClient;

  beforeAll(async () => {
    stranger = await makeNode("无线路 01", "203.0.113.40"); // no lines: it serves nobody
    admin = (await loggedInClient(server, { role: "admin" })).client;
  });

  test("a user the node was never given is not charged; the admin sees the anomaly in the list and in detail", async () => {
    const victim = await customer(10 * GB);
    await userList(); // `node` serves the victim; `stranger` does not
    expect(await userList(stranger)).toEqual([]);
    const before = await chargingState();
    const response = await pushText(`{"${victim.node_uid}":[1000,${5 * GB}],"99999999":[0,7]}`, stranger);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: true, users: 0, charged: 0 });
    const after = await chargingState();
    expect(after.users).toEqual(before.users);
    expect(after.records).toEqual(before.records);
    expect(after.usage).toEqual(before.usage);
    expect(after.heat).toEqual(before.heat);

    const list = await admin.call<Agent[]>("/api/admin/agents/list", {});
    expect(list.data?.find((agent) => agent._id === stranger.id)?.anomalies).toBe(2);
    expect(list.data?.find((agent) => agent._id === node.id)?.anomalies).toBe(0);
    const detail = await admin.call<NodeAnomaly[]>("/api/admin/agents/anomalies", { id: stranger.id });
    expect(detail.code).toBe(0);
    expect(detail.data).toEqual([
      expect.objectContaining({
        userNo: victim.node_uid,
        email: victim.email,
        reason: "not_admitted",
        upload: 1000,
        download: 5 * GB,
        reports: 1,
      }),
      expect.objectContaining({
        userNo: 99999999,
        email: "",
        reason: "unknown_user",
        download: 7,
        reports: 1,
      }),
    ]);
  });

  test("a resent report id records its anomaly once", async () => {
    const victim = await customer(GB);
    const reportId = newId();
    const body = `{"${victim.node_uid}":[0,100]}`;
    await pushText(body, stranger, { "x-request-id": reportId });
    await pushText(body, stranger, { "x-request-id": reportId });
    const detail = await admin.call<NodeAnomaly[]>("/api/admin/agents/anomalies", { id: stranger.id });
    expect(detail.data?.find((row) => row.userNo === victim.node_uid)).toMatchObject({
      reports: 1,
      download: 100,
    });
  });

  test("the anomaly calls are for admins only", async () => {
    const { client } = await loggedInClient(server);
    expect((await client.call("/api/admin/agents/anomalies", { id: stranger.id })).code).not.toBe(0);
    const { client: operator } = await loggedInClient(server, { role: "yunying" });
    expect((await operator.call("/api/admin/agents/anomalies", { id: stranger.id })).code).not.toBe(0);
  });
});

describe("alive: bounded per node and per user (issue 11 §6)", () => {
  let member: UserRow;

  beforeAll(async () => {
    member = await customer(GB);
    await userList();
  });

  async function expectAliveRefused(
    body: BodyInit,
    statuses: number[],
    headers: Record<string, string> = {},
  ) {
    const before = await aliveList();
    const response = await agentFetch(apiUrl("alive"), { method: "POST", body, headers });
    expect(statuses).toContain(response.status);
    expect(await aliveList()).toEqual(before);
  }

  test("a 20 MB alive body is refused and nothing of it is kept", async () => {
    const ips = Array.from({ length: 8 }, (_, i) => `198.51.100.${i}`);
    const entry = (uid: number) => `"${uid}":${JSON.stringify(ips)}`;
    const entries = [entry(member.node_uid)];
    for (let uid = 10_000_000, size = 0; size < 20 * 1024 * 1024; uid += 1) {
      entries.push(entry(uid));
      size += entries[entries.length - 1]?.length ?? 0;
    }
    await expectAliveRefused(`{${entries.join(",")}}`, [400, 413]);
  });

  test("the probe's report, 100 000 users × 5 IPs (under the server's 8 MB cap), is refused", async () => {
    const ips = JSON.stringify(Array.from({ length: 5 }, (_, i) => `10.0.0.${i}`));
    const entries = Array.from({ length: 100_000 }, (_, i) => `"${i + 1}":${ips}`);
    const body = `{${entries.join(",")}}`;
    expect(body.length).toBeLessThan(8 * 1024 * 1024);
    await expectAliveRefused(body, [400, 413]);
  });

  test("the same 20 MB streamed without a length is refused too", async () => {
    const chunk = new TextEncoder().encode(`"${member.node_uid}":["198.51.100.9"],`.repeat(1000));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode("{"));
        if (sent > 20 * 1024 * 1024) {
          controller.enqueue(new TextEncoder().encode(`"1":[]}`));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.length;
      },
    });
    await expectAliveRefused(stream, [400, 413]);
  });

  test("padded ids, duplicate users, more than 10 000 users and overlong IPs are refused", async () => {
    const uid = member.node_uid;
    const crowd = Array.from({ length: 10_001 }, (_, i) => `"${i + 1}":[]`);
    await expectAliveRefused(`{${crowd.join(",")}}`, [400]);
    await expectAliveRefused(`{"0${uid}":["198.51.100.1"]}`, [400]);
    await expectAliveRefused(`{"${uid}":["198.51.100.1"],"${uid}":["198.51.100.2"]}`, [400]);
    await expectAliveRefused(`{"${uid}":["${"9".repeat(100)}"]}`, [400]);
  });

  test("of one user's IPs at most 8 are kept: more than any device limit, and the report stands", async () => {
    const many = Array.from({ length: 64 }, (_, i) => `198.51.100.${i}`);
    const response = await alive(node, { [member.node_uid]: many });
    expect(response.status).toBe(200);
    expect((await aliveList())[member.node_uid]).toBe(8);
  });

  test("users the node does not serve are not kept", async () => {
    const response = await alive(node, { 77777777: ["198.51.100.1"], [member.node_uid]: ["198.51.100.1"] });
    expect(response.status).toBe(200);
    const list = await aliveList();
    expect(list["77777777"]).toBeUndefined();
    expect(list[member.node_uid]).toBe(1);
  });
});
