/**
 * Delta sync of a node's user list (issue 31 §5) over real HTTP, with the node program's own client:
 * random changes between pulls (new users, disabled, traffic spent and bought, reset uuid,
 * permissions and their expiry, agency lines, a line's permission, speed limit, a time package running out with no
 * write at all), and after each the list the node built from deltas equals the full list. A
 * process that does not hold the version, and a hostile `since`, get the full list.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setUserColumns, startTestServer, type TestServer, uniqueEmail } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { recordTraffic } from "../../../tests/traffic.ts";
import { GB } from "../../lib/traffic.ts";
import { PanelClient } from "../../node-program/panel-client.ts";
import { newId } from "../../rpc/ids.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { type AgentRow, findAgentRow } from "../node-record/service.ts";
import { transformPassword } from "../user/password.ts";
import type { UserRow } from "../user/row.ts";
import { createUser } from "../user/service.ts";
import type { NodeUser } from "./service.ts";
import { applyUserDelta, forgetSnapshots, fullList as listOf, SnapshotCache } from "./user-delta.ts";

let server: TestServer;
let node: AgentRow;
let panel: PanelClient;
let permissionId: string;
let lineId: string;
const users: UserRow[] = [];

/** Deterministic, so a failure can be replayed. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function addUser(): Promise<UserRow> {
  const user = await createUser(server.context, {
    email: uniqueEmail("sync"),
    passwordDigest: transformPassword("correct-horse-1"),
    type: "normal",
  });
  await recordTraffic(server, user.id, "buy", GB);
  await setUserColumns(server.context.db, user.id, { normal_permission: 1 });
  users.push(user);
  return user;
}

beforeAll(async () => {
  server = await startTestServer();
  const ctx = server.context;
  const agent = await saveNode(server, { name: "同步 01", country: { code: "JP" }, ip: "203.0.113.40" });
  node = (await findAgentRow(ctx, agent._id)) as AgentRow;
  const line = await saveLine(
    ctx,
    lineInput.parse({ name: "tcp", agentID: node.id, protocol: "vmesh_tcp", bridge: "none", scale: 1 }),
  );
  lineId = line._id;
  permissionId = newId();
  await ctx.db.run(
    `INSERT INTO permissions (id, name, "desc", create_time) VALUES (?, 'sync', '同步', ?)`,
    permissionId,
    Date.now(),
  );
  // The node's one line needs the permission and is closed to agencies: both move the list.
  await ctx.db.run(
    "UPDATE agent_lines SET permission_require = ?, disable_for_agency = 1 WHERE id = ?",
    permissionId,
    line._id,
  );
  for (let i = 0; i < 24; i++) await addUser();
  panel = new PanelClient({
    panel: server.url,
    nodeId: String(node.node_no),
    token: node.api_token,
    version: "9.9.9",
  });
});
afterAll(async () => {
  await server?.close();
});

/** The full list, as a UniProxy backend (no `since`) gets it. */
async function fullList(): Promise<NodeUser[]> {
  const pulled = await panel.getUsers("");
  if (!pulled.changed || !("users" in pulled.body)) throw new Error("expected the full list");
  return pulled.body.users;
}

/** A node: holds a list and its version, and pulls as the agent does. */
class SyncingNode {
  users: NodeUser[] | null = null;
  etag = "";
  deltas = 0;
  lastRemoved: number[] = [];

  async pull() {
    const pulled = await panel.getUsers(this.users ? this.etag : "");
    this.lastRemoved = [];
    if (!pulled.changed) return;
    if ("users" in pulled.body) {
      this.users = pulled.body.users;
    } else {
      const applied = applyUserDelta(this.users ?? [], pulled.body.delta);
      expect(applied).not.toBeNull();
      this.users = applied;
      this.deltas++;
      this.lastRemoved = pulled.body.delta.removed;
    }
    this.etag = pulled.etag;
  }
}

type Change = (user: UserRow, now: number) => Promise<{ expiresSoon?: boolean } | undefined>;

const set = (user: UserRow, fields: Record<string, unknown>) =>
  setUserColumns(server.context.db, user.id, fields);

const CHANGES: Record<string, Change> = {
  added: async () => void (await addUser()),
  disabled: async (user) => void (await set(user, { disabled: 1 })),
  enabled: async (user) => void (await set(user, { disabled: 0 })),
  trafficSpent: async (user) => void (await set(user, { traffic: 0 })),
  trafficBought: async (user) => void (await set(user, { traffic: GB })),
  uuidReset: async (user) => void (await set(user, { proxy_secret: crypto.randomUUID() })),
  permissionLost: async (user) => void (await set(user, { normal_permission: 0 })),
  permissionUntilSoon: async (user, now) => {
    await set(user, { normal_permission: 0 });
    await server.context.db.run(
      `INSERT INTO user_permissions (user_id, permission_id, expire_time) VALUES (?1, ?2, ?3)
       ON CONFLICT (user_id, permission_id) DO UPDATE SET expire_time = ?3`,
      user.id,
      permissionId,
      now + 250,
    );
    return { expiresSoon: true };
  },
  agency: async (user) => void (await set(user, { is_agency: 1 })),
  timePackageEndingSoon: async (user, now) => {
    await set(user, { traffic: 0, vip_expire_time: now + 250 });
    return { expiresSoon: true };
  },
  timePackage: async (user, now) => void (await set(user, { traffic: 0, vip_expire_time: now + 86_400_000 })),
  lineOpened: async () => {
    // The line's permission dropped or required again: many users come or go at once.
    const row = await server.context.db.get<{ permission_require: string | null }>(
      "SELECT permission_require FROM agent_lines WHERE id = ?",
      lineId,
    );
    await server.context.db.run(
      "UPDATE agent_lines SET permission_require = ? WHERE id = ?",
      row?.permission_require ? null : permissionId,
      lineId,
    );
    return undefined;
  },
  speedLimit: async () => {
    const current = await server.context.settings.get("vip_traffic_thred_rate_limit");
    await server.context.settings.update({ vip_traffic_thred_rate_limit: current > 0 ? 0 : 5 });
    return undefined;
  },
};

describe("delta sync of the user list", () => {
  test("random changes between pulls, a time package running out among them: the node's list always equals the full list", async () => {
    const next = random(31);
    const node = new SyncingNode();
    await node.pull();
    expect(node.users).toEqual(await fullList());
    const kinds = Object.keys(CHANGES);
    for (let round = 0; round < 14; round++) {
      let wait = false;
      for (let n = 1 + Math.floor(next() * 3); n > 0; n--) {
        const kind = kinds[Math.floor(next() * kinds.length)] as string;
        const user = users[Math.floor(next() * users.length)] as UserRow;
        const result = await CHANGES[kind]?.(user, Date.now());
        wait ||= result?.expiresSoon === true;
      }
      // Anything due to expire does so before both pulls, never between them.
      if (wait) await Bun.sleep(400);
      await node.pull();
      expect(node.users).toEqual(await fullList());
    }
    expect(node.deltas).toBeGreaterThan(5);
  });

  test("a time package ending with no write: the next pull's delta removes the user", async () => {
    const node = new SyncingNode();
    await node.pull();
    const user = users[0] as UserRow;
    await set(user, { disabled: 0, traffic: 0, is_agency: 0, normal_permission: 1 });
    await set(user, { vip_expire_time: Date.now() + 600 });
    await node.pull();
    expect(node.users?.map((entry) => entry.id)).toContain(user.node_uid);
    await Bun.sleep(700);
    await node.pull();
    expect(node.lastRemoved).toEqual([user.node_uid as number]);
    expect(node.users).toEqual(await fullList());
  });

  test("a process that does not hold the version (another replica, a restart) answers the full list", async () => {
    const node = new SyncingNode();
    await node.pull();
    await set(users[1] as UserRow, { proxy_secret: crypto.randomUUID() });
    forgetSnapshots();
    const pulled = await panel.getUsers(node.etag);
    expect(pulled.changed && "users" in pulled.body).toBe(true);
    expect(pulled.changed && "users" in pulled.body && pulled.body.users).toEqual(await fullList());
  });

  test("the same version gets 304; a hostile or unknown `since` gets the full list with its ETag", async () => {
    const node = new SyncingNode();
    await node.pull();
    const base = panel.url("user");
    const same = await fetch(`${base}&since=${node.etag.replaceAll('"', "")}`);
    expect(same.status).toBe(304);
    const full = await fullList();
    for (const since of ["f".repeat(40), "x".repeat(5000), "../../etc", ""]) {
      const response = await fetch(`${base}&since=${encodeURIComponent(since)}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("etag")).toBe(node.etag);
      expect(((await response.json()) as { users: NodeUser[] }).users).toEqual(full);
    }
  });
});

describe("the snapshots' memory is bounded", () => {
  const list = (from: number, count: number) =>
    listOf(
      Array.from({ length: count }, (_, i) => ({
        id: from + i,
        uuid: `uuid-${from + i}`,
        speed_limit: null,
        device_limit: null,
      })),
    );

  test("within the entry budget the least recently used go first; one list is kept once however many nodes hold it", () => {
    const cache = new SnapshotCache(10);
    const [a, b, c] = [list(1, 4), list(100, 4), list(200, 4)];
    cache.keep(a);
    cache.keep(b);
    cache.keep(a); // a node holding a: a is now the most recently used, and still one snapshot
    expect(cache.held).toEqual({ snapshots: 2, entries: 8 });
    cache.keep(c);
    expect(cache.held).toEqual({ snapshots: 2, entries: 8 });
    expect(cache.take(b.version)).toBeUndefined();
    expect(cache.take(a.version)).toBeDefined();
    expect(cache.take(c.version)).toBeDefined();
  });

  test("a list larger than the whole budget is never kept", () => {
    const cache = new SnapshotCache(10);
    const big = list(1, 11);
    cache.keep(big);
    expect(cache.held).toEqual({ snapshots: 0, entries: 0 });
    expect(cache.take(big.version)).toBeUndefined();
  });
});
