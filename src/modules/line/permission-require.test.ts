/**
 * Issue 18 §6: an agent line's permissionRequire speaks the seed's "none" (seed 001 §3
 * "permissionRequire, or none") on the wire: "none" and "" are both accepted for a line anyone may
 * see, and "none" is what comes back; a permission id round-trips and can be taken off again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ApiClient, loggedInClient, startWithAdmin, type TestServer } from "../../../tests/harness.ts";
import { V2RAY_NODE } from "../../../tests/nodes.ts";
import { GB } from "../../lib/traffic.ts";
import { subscriptionProxies } from "../../subscription/service.ts";
import type { Agent } from "../node-record/schema.ts";
import type { PermissionItem } from "../permission/schema.ts";
import type { UserRow } from "../user/row.ts";
import { findUserById } from "../user/service.ts";
import { type AgentLine, NO_PERMISSION } from "./schema.ts";

let server: TestServer;
let admin: ApiClient;
let agent: Agent;
let customer: UserRow;

beforeAll(async () => {
  ({ server, admin } = await startWithAdmin());
  agent = await ok<Agent>("/api/admin/agents/update", {
    ...V2RAY_NODE,
    name: "香港",
    country: { code: "HK" },
    ip: "203.0.113.9",
    host: "hk.example.com",
  });
  const made = await loggedInClient(server);
  await server.context.db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", 10 * GB, made.user.id);
  customer = made.user;
});
afterAll(async () => {
  await server?.close();
});

async function ok<T>(path: string, payload: unknown): Promise<T> {
  const answer = await admin.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

const saveLine = (fields: Record<string, unknown>) =>
  ok<AgentLine>("/api/admin/agent_line/update", {
    agentID: agent._id,
    protocol: "vmesh_tcp",
    bridge: "none",
    ...fields,
  });

/** Whether the customer's subscription lists the line (its proxies are named after it). */
const customerSees = async (name: string) =>
  (
    await subscriptionProxies(
      server.context,
      (await findUserById(server.context, customer.id)) as UserRow,
      "v2ray",
    )
  ).proxies.some((proxy) => proxy.name.startsWith(name));

test('"none" and "" both save a line without a permission, answered as "none" and seen by every customer', async () => {
  const spelledNone = await saveLine({ name: "无权限线路", permissionRequire: "none" });
  const spelledEmpty = await saveLine({ name: "空权限线路", permissionRequire: "" });
  const left = await saveLine({ name: "未填权限线路" });
  expect([spelledNone, spelledEmpty, left].map((line) => line.permissionRequire)).toEqual([
    NO_PERMISSION,
    NO_PERMISSION,
    NO_PERMISSION,
  ]);
  expect(NO_PERMISSION).toBe("none");
  const listed = await ok<AgentLine[]>("/api/admin/agent_line/list", { agentID: agent._id });
  expect(listed.find((line) => line._id === spelledNone._id)?.permissionRequire).toBe("none");
  expect([
    await customerSees("无权限线路"),
    await customerSees("空权限线路"),
    await customerSees("未填权限线路"),
  ]).toEqual([true, true, true]);
});

test('a permission id round-trips and hides the line; saving "none" again takes the requirement off', async () => {
  const permission = await ok<PermissionItem>("/api/admin/permissions/update", { name: "4K专线", desc: "" });
  const line = await saveLine({ name: "专线", permissionRequire: permission._id });
  expect(line.permissionRequire).toBe(permission._id);
  expect(await customerSees("专线")).toBe(false);
  const opened = await saveLine({ _id: line._id, name: "专线", permissionRequire: "none" });
  expect(opened.permissionRequire).toBe("none");
  expect(await customerSees("专线")).toBe(true);
});

test("any other word is refused (1000) and nothing is saved", async () => {
  const before = await ok<AgentLine[]>("/api/admin/agent_line/list", { agentID: agent._id });
  for (const value of ["None", "null", "nothing"]) {
    const answer = await admin.call("/api/admin/agent_line/update", {
      name: "坏权限",
      agentID: agent._id,
      protocol: "vmesh_tcp",
      bridge: "none",
      permissionRequire: value,
    });
    expect({ value, code: answer.code }).toEqual({ value, code: 1000 });
  }
  expect(await ok<AgentLine[]>("/api/admin/agent_line/list", { agentID: agent._id })).toEqual(before);
});
