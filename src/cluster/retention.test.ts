/**
 * Issue 28: the retention job deletes what only mattered until a time (rate-limit windows, online
 * IPs) once it has passed, and replicas not seen for a day; it keeps everything still current.
 * Issue 30: webhook deliveries leave the delivery log a week after they were delivered or given up;
 * pending ones stay whatever their age.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../tests/harness.ts";
import { DAY_MS } from "../lib/time.ts";
import { pruneExpired, WEBHOOK_LOG_KEEP_MS } from "./retention.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

test("expired rate counters, online IPs, day-old replicas and week-old webhook deliveries go; current ones stay", async () => {
  const db = server.context.db;
  const now = Date.now();
  await db.run(
    "INSERT INTO rate_counters (bucket, count, reset_time) VALUES (?, 3, ?), (?, 1, ?)",
    "login a",
    now - 1,
    "login b",
    now + 60_000,
  );
  await db.run(
    `INSERT INTO alive_ips (user_no, agent_id, ip, expire_time)
       VALUES (1, 'node-1', '198.51.100.1', ?), (1, 'node-1', '198.51.100.2', ?)`,
    now,
    now + 60_000,
  );
  await db.run(
    `INSERT INTO replicas (id, host, port, pid, version, started_time, last_seen)
       VALUES ('gone', 'web-1', 3000, 11, '0.0.1', ?1, ?1), ('asleep', 'web-2', 3000, 12, '0.0.1', ?2, ?2)`,
    now - DAY_MS - 1,
    now - DAY_MS + 60_000,
  );
  const old = now - WEBHOOK_LOG_KEEP_MS - 1;
  const recent = now - WEBHOOK_LOG_KEEP_MS + 60_000;
  for (const [id, delivered, givenUp] of [
    ["delivered-old", old, 0],
    ["given-up-old", 0, old],
    ["delivered-recent", recent, 0],
    ["pending-old", 0, 0],
  ] as const) {
    await db.run(
      `INSERT INTO webhook_deliveries (id, event_id, webhook_id, url, type, event_time, body, next_try_time, delivered_time, given_up_time)
         VALUES (?, 'event', 'hook', 'https://hooks.example.com/', 'order.paid', ?, '{}', ?, ?, ?)`,
      id,
      old,
      old,
      delivered,
      givenUp,
    );
  }

  expect(await pruneExpired(db, now)).toEqual({
    rateCounters: 1,
    aliveIps: 1,
    replicas: 1,
    webhookDeliveries: 2,
  });
  expect(await db.all("SELECT bucket FROM rate_counters")).toEqual([{ bucket: "login b" }]);
  expect(await db.all("SELECT ip FROM alive_ips")).toEqual([{ ip: "198.51.100.2" }]);
  const replicas = await db.all<{ id: string }>("SELECT id FROM replicas ORDER BY started_time");
  expect(replicas.map((row) => row.id)).toEqual(["asleep", server.replica.id]);
  const deliveries = await db.all<{ id: string }>("SELECT id FROM webhook_deliveries ORDER BY id");
  expect(deliveries.map((row) => row.id)).toEqual(["delivered-recent", "pending-old"]);
  expect(await pruneExpired(db, now)).toEqual({
    rateCounters: 0,
    aliveIps: 0,
    replicas: 0,
    webhookDeliveries: 0,
  });
});
