/**
 * Each background job runs on exactly one replica (issue 28): a row of `leases` per job names the
 * replica holding it until `expire_time`, both stamped by the database's clock. The holder renews
 * it every few seconds; the others try to take it as often, and win only once it has expired (or
 * was released at a clean stop). A holder that cannot renew in time stops the job by its own
 * clock before the lease can run out in the database, so two replicas never run a job at once.
 * On SQLite (one server) the same code runs and always wins.
 */
import type { AppContext } from "../context.ts";
import { type Db, nowMsSql } from "../db/db.ts";
import { storageFailure } from "../db/write-health.ts";
import { recordError } from "../modules/errors/service.ts";

/** The jobs that run under leases, as `leases.job`, `ferry replicas` and 集群状态 name them. */
export const JOB_NAMES = [
  "usdt-watcher",
  "telegram-bot",
  "trial-sweeper",
  "push-sweeper",
  "order-sweeper",
  "latency-probe",
  "scheduled-backup",
  "retention",
  "metrics-gauges",
  "webhook-sender",
  "reconcile-scan",
] as const;
export type JobName = (typeof JOB_NAMES)[number];

export interface LeaseTimings {
  /** How long a take or renewal holds the lease (the database's clock). */
  ttlMs: number;
  /** How often the holder renews. */
  renewMs: number;
  /** How often a replica not holding the job tries to take it. */
  tryMs: number;
  /**
   * Kept in hand: the holder stops the job this long before ttlMs has passed since it sent its
   * last successful renewal, leaving the job time to stop before the lease can run out.
   */
  marginMs: number;
}

/** Holder death → another replica runs the job within ttlMs + tryMs = 20 s. */
export const LEASE_TIMINGS: LeaseTimings = { ttlMs: 15_000, renewMs: 5_000, tryMs: 5_000, marginMs: 2_000 };

/**
 * Takes the job's lease for `holder`, or renews it: one atomic upsert that succeeds only when the
 * row is missing, has expired, or is already the holder's. Answers whether the holder has it now.
 */
export async function takeLease(db: Db, job: string, holder: string, ttlMs: number): Promise<boolean> {
  const now = nowMsSql(db.engine);
  const { changes } = await db.run(
    `INSERT INTO leases (job, holder, acquired_time, expire_time) VALUES (?, ?, ${now}, ${now} + ?)
       ON CONFLICT (job) DO UPDATE SET
         holder = excluded.holder,
         acquired_time = CASE WHEN leases.holder = excluded.holder AND leases.expire_time > excluded.acquired_time
                              THEN leases.acquired_time ELSE excluded.acquired_time END,
         expire_time = excluded.expire_time
       WHERE leases.holder = excluded.holder OR leases.expire_time <= excluded.acquired_time`,
    job,
    holder,
    Math.round(ttlMs),
  );
  return changes > 0;
}

/** Gives the lease up (a clean stop): the next replica to try takes it. */
export async function releaseLease(db: Db, job: string, holder: string): Promise<void> {
  await db.run("DELETE FROM leases WHERE job = ? AND holder = ?", job, holder);
}

/** A started job: stop() ends it and resolves once it has ended. */
export interface JobHandle {
  stop(): Promise<void>;
}

/** Starts a job; the signal is aborted when it must stop at once (lost lease, server stop). */
export type JobStart = (signal: AbortSignal) => JobHandle | Promise<JobHandle>;

export interface LeasedJob {
  readonly job: JobName;
  /** Whether this replica runs the job now. */
  readonly running: boolean;
  /** Resolves when the first try to take the lease has answered (and the job started if won). */
  readonly ready: Promise<void>;
  /** Stops the job (if running) and releases its lease. */
  stop(): Promise<void>;
}

/** The jobs each context runs now (see runsJob). */
const runningJobs = new WeakMap<object, Set<JobName>>();

function runningOf(ctx: object): Set<JobName> {
  let jobs = runningJobs.get(ctx);
  if (!jobs) {
    jobs = new Set();
    runningJobs.set(ctx, jobs);
  }
  return jobs;
}

/** Whether this process runs `job` for this context now (metrics-gauges: whether /metrics reports the database-wide gauges). */
export function runsJob(ctx: object, job: JobName): boolean {
  return runningJobs.get(ctx)?.has(job) ?? false;
}

/**
 * Runs `job` on this replica while it holds the job's lease: tries to take it now and then every
 * tryMs; once won, starts the job and renews every renewMs. The job is stopped at once (its signal
 * aborted, then its stop() awaited) when a renewal finds another holder, when no renewal has
 * succeeded by the local deadline (sent time of the last successful one + ttlMs − marginMs, by
 * this process's monotonic clock: the database stamped the lease no earlier than it was sent), and
 * at stop(), which also releases the lease.
 */
export function runLeasedJob(
  ctx: AppContext,
  replica: { id: string },
  job: JobName,
  start: JobStart,
  timings: Partial<LeaseTimings> = {},
): LeasedJob {
  const { ttlMs, renewMs, tryMs, marginMs } = { ...LEASE_TIMINGS, ...timings };
  let stopped = false;
  let current: { abort: AbortController; handle: Promise<JobHandle | null> } | null = null;
  let ending: Promise<void> = Promise.resolve();
  let deadline: ReturnType<typeof setTimeout> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let attempt: Promise<void> | null = null;

  function begin() {
    const abort = new AbortController();
    const handle = (async () => {
      try {
        return await start(abort.signal);
      } catch (error) {
        await recordError(ctx.db, `${job} start`, error);
        return null;
      }
    })();
    const started = { abort, handle };
    current = started;
    runningOf(ctx).add(job);
    // A job that failed to start is not running: the next renewal starts it again.
    void handle.then((ran) => {
      if (!ran && current === started) {
        current = null;
        runningOf(ctx).delete(job);
      }
    });
  }

  /** Stops the running job at once; resolves when it has stopped. */
  function end(): Promise<void> {
    clearTimeout(deadline);
    const ended = current;
    if (!ended) return ending;
    current = null;
    runningOf(ctx).delete(job);
    ended.abort.abort();
    ending = (async () => {
      try {
        await (await ended.handle)?.stop();
      } catch (error) {
        await recordError(ctx.db, `${job} stop`, error);
      }
    })();
    return ending;
  }

  async function tryOnce(): Promise<void> {
    const sentAt = performance.now();
    let held: boolean;
    try {
      held = await takeLease(ctx.db, job, replica.id, ttlMs);
    } catch (error) {
      // A running job goes on until its deadline. A database away (or out of space) is told by
      // the requests that fail and /healthz; anything else is unexpected.
      if (!stopped && !storageFailure(error)) await recordError(ctx.db, `lease ${job}`, error);
      return;
    }
    if (stopped) return;
    const until = sentAt + ttlMs - marginMs;
    if (!held || until <= performance.now()) {
      await end();
      return;
    }
    clearTimeout(deadline);
    deadline = setTimeout(() => void end(), until - performance.now());
    deadline.unref?.();
    if (current) return;
    // A job stopped a moment ago finishes stopping before it starts again.
    await ending;
    if (!stopped && !current && performance.now() < until) begin();
  }

  async function tick(): Promise<void> {
    if (stopped) return;
    const began = performance.now();
    attempt = tryOnce();
    await attempt;
    attempt = null;
    if (stopped) return;
    const every = current ? renewMs : tryMs;
    timer = setTimeout(() => void tick(), Math.max(0, every - (performance.now() - began)));
    timer.unref?.();
  }

  const ready = tick();
  return {
    job,
    get running() {
      return current !== null;
    },
    ready,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await end();
      // A take still in flight would hold the lease again after the release; it is short.
      if (attempt) await Promise.race([attempt, Bun.sleep(1_000)]);
      try {
        await releaseLease(ctx.db, job, replica.id);
      } catch {
        // The database is away: the lease runs out by itself within ttlMs.
      }
    },
  };
}
