/** /api/permission/mypermissions and the permissions in user info, from rows put in the database. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { newId } from "../../rpc/ids.ts";
import type { PermissionGrant, UserInfo } from "../user/schema.ts";

let server: TestServer;
const DAY = 86_400_000;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function permission(name: string, desc: string): Promise<string> {
  const id = newId();
  await server.context.db.run(
    'INSERT INTO permissions (id, name, "desc", create_time) VALUES (?, ?, ?, ?)',
    id,
    name,
    desc,
    Date.now(),
  );
  return id;
}

async function grant(userId: string, permissionId: string, expireTime: number) {
  await server.context.db.run(
    "INSERT INTO user_permissions (user_id, permission_id, expire_time) VALUES (?, ?, ?)",
    userId,
    permissionId,
    expireTime,
  );
}

test("a visitor gets 1002", async () => {
  expect((await new ApiClient(server.url).call("/api/permission/mypermissions")).code).toBe(1002);
});

test("lists only the user's own unexpired grants, soonest expiry first, also in user info", async () => {
  const me = await loggedInClient(server);
  const other = await loggedInClient(server);
  const now = Date.now();
  const netflix = await permission("netflix", "奈飞解锁");
  const gpt = await permission("chatgpt", "ChatGPT 线路");
  const old = await permission("old_line", "过期线路");
  const foreign = await permission("game", "游戏加速");
  await grant(me.user.id, gpt, now + 10 * DAY);
  await grant(me.user.id, netflix, now + 2 * DAY);
  await grant(me.user.id, old, now - 1000);
  await grant(other.user.id, foreign, now + 5 * DAY);

  const answer = await me.client.call<PermissionGrant[]>("/api/permission/mypermissions");
  expect(answer.code).toBe(0);
  expect(answer.data).toEqual([
    { id: netflix, name: "netflix", desc: "奈飞解锁", expireTime: now + 2 * DAY },
    { id: gpt, name: "chatgpt", desc: "ChatGPT 线路", expireTime: now + 10 * DAY },
  ]);

  const info = await me.client.call<UserInfo>("/api/user/userinfo");
  expect(info.data.permissions).toEqual(answer.data);

  const theirs = await other.client.call<PermissionGrant[]>("/api/permission/mypermissions");
  expect(theirs.data.map((p) => p.name)).toEqual(["game"]);

  // A grant that runs out disappears without anything else happening.
  await server.context.db.run(
    "UPDATE user_permissions SET expire_time = ? WHERE user_id = ? AND permission_id = ?",
    Date.now() - 1,
    me.user.id,
    netflix,
  );
  const later = await me.client.call<PermissionGrant[]>("/api/permission/mypermissions");
  expect(later.data.map((p) => p.name)).toEqual(["chatgpt"]);
});

test("a user without grants gets an empty list", async () => {
  const { client } = await loggedInClient(server);
  const answer = await client.call<PermissionGrant[]>("/api/permission/mypermissions");
  expect(answer.code).toBe(0);
  expect(answer.data).toEqual([]);
});
