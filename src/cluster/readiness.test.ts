/**
 * Issue 28 item 4: `/readyz` for a load balancer answers 200 `ready` only while the database
 * answers with the schema this build migrated it to; `/healthz` stays the liveness answer. The
 * database going away is in tests/pg-outage.test.ts and src/cluster/replicas.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { startTestServer, type TestServer } from "../../tests/harness.ts";
import { testClusterUrl, testDatabaseOf } from "../../tests/pg.ts";
import { migrations } from "../embedded.ts";
import { readiness } from "./readiness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const latest = migrations.at(-1)?.version ?? 0;

async function get(path: string): Promise<[number, string, string | null]> {
  const response = await fetch(`${server.url}${path}`);
  return [response.status, await response.text(), response.headers.get("cache-control")];
}

test("a started server is ready, and alive", async () => {
  expect(await get("/readyz")).toEqual([200, "ready", "no-store"]);
  expect((await get("/healthz")).slice(0, 2)).toEqual([200, "ok"]);
});

test("a database another build has migrated further: not ready, saying both versions", async () => {
  const db = server.context.db;
  await db.run(
    "INSERT INTO schema_migrations (version, name, applied_time) VALUES (?, 'future', 1)",
    latest + 1,
  );
  try {
    expect(await get("/readyz")).toEqual([
      503,
      `database schema version ${latest + 1}, this build's ${latest}`,
      "no-store",
    ]);
    // Still alive: a liveness probe must not restart it for that.
    expect((await get("/healthz"))[0]).toBe(200);
  } finally {
    await db.run("DELETE FROM schema_migrations WHERE version = ?", latest + 1);
  }
  expect((await get("/readyz")).slice(0, 2)).toEqual([200, "ready"]);
});

test.skipIf(!testClusterUrl())("a database that does not answer within the timeout: not ready", async () => {
  // Another connection holds schema_migrations locked: the readiness query waits on it.
  const sql = new SQL({ url: testDatabaseOf(server.dataDir) as string, max: 1 });
  const locked = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const holding = sql.begin(async (connection) => {
    await connection`LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE`;
    locked.resolve();
    await release.promise;
  });
  await locked.promise;
  try {
    const started = performance.now();
    const answer = await readiness(server.context.db, latest, 300);
    expect([answer.status, await answer.text()]).toEqual([503, "database unreachable"]);
    expect(performance.now() - started).toBeLessThan(3_000);
  } finally {
    release.resolve();
    await holding;
    await sql.close();
  }
  expect((await readiness(server.context.db, latest, 300)).status).toBe(200);
});
