import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loggedInClient, startTestServer, type TestServer } from "../../tests/harness.ts";
import { openSqlite, tx } from "./db.ts";
import { CROSS_PROCESS_STALENESS_MS, ReadCache, refreshDataVersion } from "./read-cache.ts";

const dir = mkdtempSync(join(tmpdir(), "ferry-cache-"));
const file = join(dir, "cache.db");
const db = openSqlite(file);
await db.exec("CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT NOT NULL)");
await db.exec("INSERT INTO items VALUES ('a', 'first')");
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => {
  void db.close();
  rmSync(dir, { recursive: true, force: true });
});

function counting() {
  const cache = new ReadCache<{ name: string }>(db);
  let loads = 0;
  const read = () =>
    cache.get("a", async () => {
      loads += 1;
      return await db.get<{ name: string }>("SELECT name FROM items WHERE id = 'a'");
    });
  return { read, loads: () => loads };
}

test("a value is loaded once and served until this connection writes anything", async () => {
  const { read, loads } = counting();
  expect((await read())?.name).toBe("first");
  expect((await read())?.name).toBe("first");
  expect(loads()).toBe(1);
  await db.run("UPDATE items SET name = 'second' WHERE id = 'a'");
  expect((await read())?.name).toBe("second");
  expect(loads()).toBe(2);
  expect(Object.isFrozen(await read())).toBe(true);
});

test("entries too old to be answered are swept out: the cache holds about the keys read within maxAgeMs", async () => {
  const cache = new ReadCache<{ name: string }>(db, 50_000, 1_000);
  const start = Date.now();
  // 100,000 customers, 400 a second (each read once): over 250 s, never a commit in between.
  for (let i = 0; i < 100_000; i += 1)
    await cache.get(`user-${i}`, async () => ({ name: `n${i}` }), start + i * 2.5);
  expect(cache.size).toBeLessThanOrEqual(2_000);
  // What is fresh is still answered without a load.
  const last = start + 99_999 * 2.5;
  expect(await cache.get("user-99999", async () => ({ name: "reloaded" }), last)).toEqual({ name: "n99999" });
});

test("another process's commit is seen once the data version is refreshed", async () => {
  const { read } = counting();
  await db.run("UPDATE items SET name = 'mine' WHERE id = 'a'");
  expect((await read())?.name).toBe("mine");
  const other = openSqlite(file);
  other.raw.query("UPDATE items SET name = 'theirs' WHERE id = 'a'").run();
  await other.close();
  await Bun.sleep(CROSS_PROCESS_STALENESS_MS + 5);
  refreshDataVersion(db);
  expect((await read())?.name).toBe("theirs");
});

test("the data version is read again after any statement of this connection, never assumed (issue 31)", async () => {
  const { read, loads } = counting();
  await read();
  await read();
  expect(loads()).toBe(1);
  await tx(db, async () => {
    await db.run("UPDATE items SET name = 'by-tx' WHERE id = 'a'");
  });
  expect((await read())?.name).toBe("by-tx");
  await db.exec("UPDATE items SET name = 'by-exec' WHERE id = 'a'");
  expect((await read())?.name).toBe("by-exec");
  // Another connection's commit, found by a plain read of this one (no refresh probe).
  const other = openSqlite(file);
  other.raw.query("UPDATE items SET name = 'found' WHERE id = 'a'").run();
  await other.close();
  await db.get("SELECT 1 FROM items LIMIT 1");
  expect((await read())?.name).toBe("found");
  expect(loads()).toBe(4);
});

test("inside a write transaction reads bypass the cache and see the uncommitted row", async () => {
  const { read, loads } = counting();
  await read();
  await tx(db, async () => {
    await db.run("UPDATE items SET name = 'in-tx' WHERE id = 'a'");
    expect((await read())?.name).toBe("in-tx");
  });
  expect(loads()).toBe(2);
});

test("disabling an account or ending its sessions takes effect on the very next request", async () => {
  server = await startTestServer();
  const { client, user } = await loggedInClient(server);
  expect((await client.call("/api/user/userinfo")).code).toBe(0);
  await server.context.db.run("UPDATE users SET disabled = 1 WHERE id = ?", user.id);
  expect((await client.call("/api/user/userinfo")).code).toBe(1002);
  await server.context.db.run("UPDATE users SET disabled = 0 WHERE id = ?", user.id);
  expect((await client.call("/api/user/userinfo")).code).toBe(0);
  await server.context.db.run("DELETE FROM sessions WHERE user_id = ?", user.id);
  expect((await client.call("/api/user/userinfo")).code).toBe(1002);
});

test("a permission granted or revoked shows in the next userinfo", async () => {
  server = await startTestServer();
  const { client, user } = await loggedInClient(server);
  const permissions = async () =>
    (await client.call<{ permissions: { name: string }[] }>("/api/user/userinfo")).data.permissions;
  expect(await permissions()).toEqual([]);
  const db = server.context.db;
  await db.run("INSERT INTO permissions (id, name, \"desc\", create_time) VALUES ('p1', '4K专线', '', 0)");
  await db.run("INSERT INTO user_permissions VALUES (?, 'p1', ?)", user.id, Date.now() + 86_400_000);
  expect((await permissions()).map((p) => p.name)).toEqual(["4K专线"]);
  await db.run("DELETE FROM user_permissions WHERE user_id = ?", user.id);
  expect(await permissions()).toEqual([]);
});
