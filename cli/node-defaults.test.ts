/**
 * `ferry node add` with only a name, a type and an IP fills every port as the back office's form
 * does (newNodeDefaults: seed 001 §2.3.1 plus Ferry's own ports), and `ferry node status|list|show`
 * tell a node that never called the panel (未连接) from one that stopped calling (异常), as the
 * back office's badge does. Real processes against a fresh data directory (and, on the PostgreSQL
 * run, a fresh database).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/db.ts";
import { type Agent, NODE_TYPES, newNodeDefaults } from "../src/modules/node-record/schema.ts";
import { createTestDatabase, registerTestDatabase, type TestDatabase, testDatabaseOf } from "../tests/pg.ts";
import { type FerryIn, ferryIn } from "./test-helpers.ts";

let dataDir: string;
let database: TestDatabase | null;
let cli: FerryIn;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "ferry-node-defaults-"));
  database = await createTestDatabase();
  if (database) registerTestDatabase(dataDir, database.url);
  cli = ferryIn(dataDir);
});
afterAll(async () => {
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const added: Record<string, Agent> = {};

test("node add with name, type and IP: every port and the install flavour are the form's defaults", async () => {
  for (const type of NODE_TYPES) {
    const args = ["node", "add", "--name", `默认 ${type}`, "--type", type, "--ip", "203.0.113.5"];
    if (type === "reality") args.push("--host", "www.example.com");
    const node = await cli.json<Agent>(args);
    const { ctrl_port, zz_port, port, public_port, serverType } = node;
    expect({ type, ports: { ctrl_port, zz_port, port, public_port, serverType } }).toEqual({
      type,
      ports: newNodeDefaults(type),
    });
    added[type] = node;
  }
  // --port alone moves the public port with it (no port mapping).
  const moved = await cli.json<Agent>(
    ["node", "add", "--name", "改端口", "--type", "reality", "--ip", "203.0.113.6"].concat([
      "--host",
      "www.example.com",
      "--port",
      "8443",
    ]),
  );
  expect([moved.port, moved.public_port, moved.zz_port]).toEqual([8443, 8443, 443]);
});

test("status, list and show: 未连接 until a node's first call, 异常 once it stopped calling", async () => {
  const v2ray = added.v2ray as Agent;
  const statusRow = async () =>
    (await cli.ok(["node", "status"])).split("\n").find((line) => line.startsWith(`${v2ray.name} `));
  expect((await statusRow())?.split(/\s{2,}/).slice(2, 3)).toEqual(["未连接"]);
  expect(await cli.ok(["node", "list"])).toContain(`${v2ray.name}  v2ray`);
  expect((await cli.ok(["node", "list"])).split("\n").find((l) => l.includes(v2ray._id))).toEndWith("未连接");
  expect(await cli.ok(["node", "show", v2ray._id])).toMatch(/^status\s+未连接$/m);

  // A node last heard from long ago (a day after the epoch) has stopped: 异常.
  const db = await openDatabase({ url: testDatabaseOf(dataDir), file: join(dataDir, "ferry.db") });
  await db.run("UPDATE agents SET last_seen_time = ? WHERE id = ?", 86_400_000, v2ray._id);
  await db.close();
  expect((await statusRow())?.split(/\s{2,}/).slice(2, 3)).toEqual(["异常"]);
  expect(await cli.ok(["node", "show", v2ray._id])).toMatch(/^status\s+异常$/m);
});
