/**
 * Issue 28: the lease of each background job, on the test server's real database (SQLite, or
 * PostgreSQL in its pass). The table's take, renew and release; then the supervisor runLeasedJob
 * with short timings: it starts a job only once the lease is won, a second replica's waits, the
 * job moves on a clean stop, stops at once when its lease is taken away, and stops by its own
 * local deadline, before the lease can run out, when it cannot renew.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { SQL } from "bun";
import { startTestServer, type TestServer } from "../../tests/harness.ts";
import { testDatabaseOf } from "../../tests/pg.ts";
import { nowMsSql } from "../db/db.ts";
import { type JobName, type LeaseTimings, releaseLease, runLeasedJob, runsJob, takeLease } from "./leases.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const db = () => server.context.db;
const lease = async (job: string) =>
  await db().get<{ holder: string; acquired_time: number; expire_time: number }>(
    "SELECT holder, acquired_time, expire_time FROM leases WHERE job = ?",
    job,
  );
const dbNow = async () =>
  (await db().get<{ now: number }>(`SELECT ${nowMsSql(db().engine)} AS now`))?.now as number;

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

describe("the leases table", () => {
  test("take, renew, a second holder refused while valid, taken over once expired, released", async () => {
    const before = await dbNow();
    expect(await takeLease(db(), "test-a", "replica-1", 60_000)).toBe(true);
    const taken = await lease("test-a");
    expect(taken?.holder).toBe("replica-1");
    expect(taken?.acquired_time).toBeGreaterThanOrEqual(before);
    expect((taken?.expire_time ?? 0) - (taken?.acquired_time ?? 0)).toBe(60_000);

    await Bun.sleep(5);
    expect(await takeLease(db(), "test-a", "replica-1", 60_000)).toBe(true);
    const renewed = await lease("test-a");
    expect(renewed?.acquired_time).toBe(taken?.acquired_time as number);
    expect(renewed?.expire_time).toBeGreaterThan(taken?.expire_time as number);

    expect(await takeLease(db(), "test-a", "replica-2", 60_000)).toBe(false);
    expect(await lease("test-a")).toEqual(renewed);

    // Expired (set back in the database): the other replica takes it, from now on.
    await db().run("UPDATE leases SET expire_time = ? WHERE job = 'test-a'", (await dbNow()) - 1);
    expect(await takeLease(db(), "test-a", "replica-2", 60_000)).toBe(true);
    const takenOver = await lease("test-a");
    expect(takenOver?.holder).toBe("replica-2");
    expect(takenOver?.acquired_time).toBeGreaterThan(taken?.acquired_time as number);
    expect(await takeLease(db(), "test-a", "replica-1", 60_000)).toBe(false);

    // Only the holder can release it; then anyone takes it at once.
    await releaseLease(db(), "test-a", "replica-1");
    expect((await lease("test-a"))?.holder).toBe("replica-2");
    await releaseLease(db(), "test-a", "replica-2");
    expect(await lease("test-a")).toBeNull();
    expect(await takeLease(db(), "test-a", "replica-1", 60_000)).toBe(true);
  });

  test("a short lease runs out by the database's clock", async () => {
    expect(await takeLease(db(), "test-b", "replica-1", 150)).toBe(true);
    expect(await takeLease(db(), "test-b", "replica-2", 150)).toBe(false);
    await Bun.sleep(200);
    expect(await takeLease(db(), "test-b", "replica-2", 150)).toBe(true);
  });

  test("of many replicas trying at once, exactly one takes the lease", async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => takeLease(db(), "test-c", `replica-${i}`, 60_000)),
    );
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect((await lease("test-c"))?.holder).toBe(`replica-${answers.indexOf(true)}`);
  });
});

/** A job that records what happens to it: started, aborted, stopped. */
function recordingJob() {
  const log: string[] = [];
  let signal: AbortSignal | null = null;
  const start = (given: AbortSignal) => {
    signal = given;
    log.push("start");
    given.addEventListener("abort", () => log.push("abort"));
    return {
      async stop() {
        log.push("stop");
      },
    };
  };
  return { log, start, signal: () => signal };
}

const FAST: LeaseTimings = { ttlMs: 1_200, renewMs: 100, tryMs: 100, marginMs: 300 };
/** Names of test jobs: the server's own jobs keep their leases. */
const testJob = (name: string) => `test-${name}` as JobName;

describe("runLeasedJob", () => {
  test("the job starts only on the replica that won the lease, and moves to the other at a clean stop", async () => {
    const first = recordingJob();
    const second = recordingJob();
    const ctxA = { ...server.context };
    const ctxB = { ...server.context };
    const a = runLeasedJob(ctxA, { id: "replica-a" }, testJob("move"), first.start, FAST);
    await a.ready;
    const b = runLeasedJob(ctxB, { id: "replica-b" }, testJob("move"), second.start, FAST);
    await b.ready;
    expect([a.running, b.running]).toEqual([true, false]);
    expect(runsJob(ctxA, testJob("move"))).toBe(true);
    expect(runsJob(ctxB, testJob("move"))).toBe(false);
    expect(first.log).toEqual(["start"]);
    // Renewals keep it there.
    await Bun.sleep(FAST.ttlMs + 3 * FAST.renewMs);
    expect([a.running, b.running]).toEqual([true, false]);
    expect(second.log).toEqual([]);

    await a.stop();
    expect(first.log).toEqual(["start", "abort", "stop"]);
    expect(first.signal()?.aborted).toBe(true);
    // Released: the other takes it at its next try, long before the lease would have run out.
    const stoppedAt = performance.now();
    await until(() => b.running);
    expect(performance.now() - stoppedAt).toBeLessThan(FAST.ttlMs);
    expect(second.log).toEqual(["start"]);
    expect((await lease("test-move"))?.holder).toBe("replica-b");
    await b.stop();
    expect(await lease("test-move")).toBeNull();
  });

  test("a job whose lease another replica took is stopped at the holder's next renewal", async () => {
    const job = recordingJob();
    const ctx = { ...server.context };
    const supervisor = runLeasedJob(ctx, { id: "replica-a" }, testJob("lost"), job.start, FAST);
    await supervisor.ready;
    expect(supervisor.running).toBe(true);
    // Taken away in the database (as by a replica that saw it expire while this one was stalled).
    await db().run(
      "UPDATE leases SET holder = 'replica-z', expire_time = ? WHERE job = ?",
      Date.now() + 60_000,
      testJob("lost"),
    );
    await until(() => !supervisor.running, 5 * FAST.renewMs + 1_000);
    expect(job.log).toEqual(["start", "abort", "stop"]);
    // It keeps trying, and does not start the job while the other holds it.
    await Bun.sleep(3 * FAST.tryMs);
    expect(job.log).toEqual(["start", "abort", "stop"]);
    await supervisor.stop();
    expect((await lease(testJob("lost")))?.holder).toBe("replica-z");
  });

  test("a job that fails to start goes to the error log and is started again at the next renewal", async () => {
    let tries = 0;
    const ctx = { ...server.context };
    const supervisor = runLeasedJob(
      ctx,
      { id: "replica-a" },
      testJob("failing"),
      () => {
        tries += 1;
        if (tries === 1) throw new Error("the first start fails");
        return { async stop() {} };
      },
      FAST,
    );
    await until(() => tries >= 2 && supervisor.running);
    await supervisor.stop();
    const logged = await db().all<{ name: string; msg: string }>(
      "SELECT name, msg FROM error_logs WHERE name = 'test-failing start'",
    );
    expect(logged).toEqual([{ name: "test-failing start", msg: "the first start fails" }]);
  });
});

/**
 * Renewals that cannot go through: on PostgreSQL a transaction of the test's own holds the lease
 * row locked, so every renewal hangs (a stalled database, as seen from the holder); on SQLite the
 * server's connection refuses writes (a blocked SQLite writer would block the whole process).
 */
async function stallRenewals(job: string): Promise<{ expireTime: number; resume(): Promise<void> }> {
  const url = testDatabaseOf(server.dataDir);
  if (!url) {
    await db().exec("PRAGMA query_only = ON");
    const row = await lease(job);
    return {
      expireTime: row?.expire_time as number,
      resume: async () => await db().exec("PRAGMA query_only = OFF"),
    };
  }
  const sql = new SQL({ url, max: 1 });
  const held = Promise.withResolvers<number>();
  const release = Promise.withResolvers<void>();
  const transaction = sql.begin(async (connection) => {
    const [row] = await connection`SELECT expire_time FROM leases WHERE job = ${job} FOR UPDATE`;
    held.resolve(Number(row.expire_time));
    await release.promise;
  });
  const expireTime = await held.promise;
  return {
    expireTime,
    resume: async () => {
      release.resolve();
      await transaction;
      await sql.close();
    },
  };
}

test("a holder that cannot renew stops its job by its own deadline, before another replica can take it", async () => {
  const job = recordingJob();
  const abortedAt: number[] = [];
  const ctxA = { ...server.context };
  const ctxB = { ...server.context };
  const holder = runLeasedJob(
    ctxA,
    { id: "replica-a" },
    testJob("stall"),
    (signal) => {
      signal.addEventListener("abort", () => abortedAt.push(Date.now()));
      return job.start(signal);
    },
    FAST,
  );
  await holder.ready;
  expect(holder.running).toBe(true);
  const stderr = spyOn(console, "error").mockImplementation(() => {});
  const stall = await stallRenewals("test-stall");
  let other: ReturnType<typeof runLeasedJob> | null = null;
  try {
    // Another replica starts trying now: it cannot win while the lease is valid.
    other = runLeasedJob(ctxB, { id: "replica-b" }, testJob("stall"), () => ({ async stop() {} }), FAST);
    await until(() => !holder.running, FAST.ttlMs + 2_000);
    expect(job.log).toEqual(["start", "abort", "stop"]);
    // Stopped before the lease ran out in the database (one machine: the same clock), and the
    // other replica was not running it meanwhile.
    expect(abortedAt[0]).toBeLessThan(stall.expireTime);
    expect(other.running).toBe(false);
  } finally {
    await stall.resume();
    stderr.mockRestore();
  }
  // Once the database answers again the lease is renewed or taken over: one of them runs the job.
  await until(() => holder.running !== (other?.running ?? false), 3 * FAST.ttlMs);
  await other?.stop();
  await holder.stop();
});
