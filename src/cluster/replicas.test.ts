/**
 * Issue 28 items 2 and 5: two replicas (two `startServer`) on one PostgreSQL database, with short
 * lease timings. Every background job runs on exactly one of them; the database-wide gauges come
 * from one /metrics; when the holder is cut off from the database (a relay that holds its bytes:
 * no renewal, no heartbeat, nothing released) its jobs stop by its own deadlines and the other
 * replica takes them, never running one at the same time; a clean stop hands them over at once.
 * PostgreSQL only (SQLite is one server on one machine), but for the last test: on SQLite, a server
 * restarted after a crash takes over its dead predecessor's leases at once.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase, testClusterUrl } from "../../tests/pg.ts";
import { startTcpRelay, type TcpRelay } from "../../tests/tcp-relay.ts";
import { openSqlite } from "../db/db.ts";
import { type RunningServer, startServer } from "../server.ts";
import { JOB_NAMES, type LeaseTimings, runsJob } from "./leases.ts";
import { listReplicas } from "./replica.ts";

const FAST: LeaseTimings = { ttlMs: 2_000, renewMs: 150, tryMs: 150, marginMs: 500 };

let root: string;
let database: TestDatabase;
let relay: TcpRelay;
let first: RunningServer;
let second: RunningServer;

async function replicaOn(url: string, name: string): Promise<RunningServer> {
  return await startServer({
    dataDir: join(root, name),
    databaseUrl: url,
    host: "127.0.0.1",
    port: 0,
    leases: FAST,
    heartbeatMs: 150,
  });
}

const jobsOf = (server: RunningServer) => JOB_NAMES.filter((job) => runsJob(server.context, job));

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

/** Watches both replicas every few ms; answers the jobs ever seen running on both at once. */
function watchOverlap() {
  const both = new Set<string>();
  const timer = setInterval(() => {
    for (const job of JOB_NAMES)
      if (runsJob(first.context, job) && runsJob(second.context, job)) both.add(job);
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return [...both];
    },
  };
}

async function scrape(server: RunningServer): Promise<string> {
  return await (await fetch(`${server.url}/metrics`)).text();
}

describe.skipIf(!testClusterUrl())("two replicas on one PostgreSQL database", () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "ferry-replicas-"));
    database = (await createTestDatabase()) as TestDatabase;
    const target = new URL(database.url);
    relay = startTcpRelay({ hostname: target.hostname, port: Number(target.port) });
    const relayed = new URL(database.url);
    relayed.port = String(relay.port);
    // The first replica reaches the database through the relay, so the test can cut it off.
    first = await replicaOn(relayed.toString(), "first");
    second = await replicaOn(database.url, "second");
  });
  afterAll(async () => {
    relay?.thaw();
    await second?.stop();
    await first?.stop();
    relay?.stop();
    await database?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test("each job runs on exactly one replica, and the lists say which", async () => {
    expect(jobsOf(first)).toEqual([...JOB_NAMES]);
    expect(jobsOf(second)).toEqual([]);
    // Renewals keep them there, past several lease lifetimes.
    const overlap = watchOverlap();
    await Bun.sleep(2 * FAST.ttlMs);
    expect(overlap.stop()).toEqual([]);
    expect(jobsOf(first)).toEqual([...JOB_NAMES]);
    expect(jobsOf(second)).toEqual([]);

    const replicas = await listReplicas(second.context.db);
    expect(replicas.map((r) => [r.id, r.port, r.offline, r.leases])).toEqual([
      [first.replica.id, first.port, false, [...JOB_NAMES].sort()],
      [second.replica.id, second.port, false, []],
    ]);
  });

  test("only the holder of metrics-gauges reports the database-wide gauges; both report their own counters", async () => {
    const [holder, other] = await Promise.all([scrape(first), scrape(second)]);
    for (const family of [
      "ferry_nodes",
      "ferry_online_users",
      "ferry_database_bytes",
      "ferry_error_log_events",
    ]) {
      expect(holder).toContain(`# TYPE ${family} gauge`);
      expect(other).not.toContain(`# TYPE ${family} `);
    }
    for (const text of [holder, other]) expect(text).toContain("# TYPE ferry_heap_used_bytes gauge");
  });

  test("a replica cut off from the database stops its jobs by its deadlines; the other takes them, never both at once", async () => {
    const stderr = spyOn(console, "error").mockImplementation(() => {});
    const overlap = watchOverlap();
    const cutAt = performance.now();
    relay.freeze();
    try {
      await until(() => jobsOf(second).length === JOB_NAMES.length, FAST.ttlMs + 10 * FAST.tryMs + 2_000);
      // Taken once the leases ran out: no sooner than the deadline the holder kept.
      expect(performance.now() - cutAt).toBeGreaterThan(FAST.ttlMs - FAST.marginMs - FAST.renewMs);
      expect(jobsOf(first)).toEqual([]);
      // The cut-off replica is no longer ready for the load balancer.
      const ready = await fetch(`${first.url}/readyz`);
      expect([ready.status, await ready.text()]).toEqual([503, "database unreachable"]);
      expect((await fetch(`${second.url}/readyz`)).status).toBe(200);
    } finally {
      relay.thaw();
    }
    // Back in touch: its late renewals find the other holder, and it starts nothing.
    await Bun.sleep(4 * FAST.renewMs);
    expect(jobsOf(first)).toEqual([]);
    expect(jobsOf(second)).toEqual([...JOB_NAMES]);
    expect(overlap.stop()).toEqual([]);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    stderr.mockRestore();
  });

  test("a clean stop releases the leases: the other replica takes every job at its next try", async () => {
    const overlap = watchOverlap();
    const stoppedAt = performance.now();
    const stopped = second;
    await stopped.stop();
    await until(() => jobsOf(first).length === JOB_NAMES.length, FAST.ttlMs);
    // Well before the released leases would have run out.
    expect(performance.now() - stoppedAt).toBeLessThan(FAST.ttlMs);
    expect(overlap.stop()).toEqual([]);
    const replicas = await listReplicas(first.context.db);
    expect(replicas.map((r) => [r.id, r.leases])).toEqual([[first.replica.id, [...JOB_NAMES].sort()]]);
    // afterAll stops the second replica again: nothing happens.
    second = await replicaOn(database.url, "second-again");
    expect(jobsOf(second)).toEqual([]);
  });
});

test.skipIf(testClusterUrl() !== null)(
  "SQLite: a server started again after a crash takes its jobs at once, not after the dead one's leases",
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ferry-restart-"));
    try {
      await (await startServer({ dataDir, port: 0 })).stop();
      // What a killed server leaves: its row and its leases, valid for a while yet.
      const exited = Bun.spawn(["true"]);
      await exited.exited;
      const db = openSqlite(join(dataDir, "ferry.db"));
      const now = Date.now();
      await db.run(
        `INSERT INTO replicas (id, host, port, pid, version, started_time, last_seen)
           VALUES ('killed-replica', ?, 3000, ?, '0.0.1', ?, ?)`,
        hostname(),
        exited.pid,
        now - 60_000,
        now,
      );
      for (const job of JOB_NAMES) {
        await db.run(
          "INSERT INTO leases (job, holder, acquired_time, expire_time) VALUES (?, 'killed-replica', ?, ?)",
          job,
          now - 60_000,
          now + 60_000,
        );
      }
      await db.close();
      const server = await startServer({ dataDir, port: 0 });
      try {
        expect(jobsOf(server)).toEqual([...JOB_NAMES]);
        expect((await listReplicas(server.context.db)).map((r) => r.id)).toEqual([server.replica.id]);
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);
