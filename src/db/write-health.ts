/**
 * Whether the database can be written (issue 26 §26). When the disk fills, every request that
 * writes fails the same way; what an operator needs then is not a stack per request but one line
 * naming the cause, a count (`ferry_db_write_failures_total` on /metrics) and /healthz saying that
 * writes fail. recordError (modules/errors) reports every unexpected error here — envelope calls,
 * node pushes and pulls, periodic jobs — and `tx` reports each commit that went through.
 */
/** A database handle (src/db/db.ts); any object will do as a key here, which keeps this file below db.ts. */
type Db = object;

/**
 * What a storage failure means, by its code: SQLite's (SQLITE_FULL, …), the system's (ENOSPC, …),
 * Bun's PostgreSQL client's (ERR_POSTGRES_CONNECTION_CLOSED, …) or a PostgreSQL SQLSTATE (53100, …).
 */
const MEANINGS: [pattern: RegExp, meaning: string][] = [
  [/^(SQLITE_FULL|ENOSPC|EDQUOT|53100)$/, "disk full"],
  [/^(SQLITE_IOERR(_\w+)?|EIO|58030)$/, "I/O error"],
  [/^(SQLITE_READONLY(_\w+)?|EROFS|25006)$/, "read-only storage"],
  [/^(ERR_POSTGRES_CONNECTION_\w+|ECONNREFUSED|ECONNRESET|08\w{3}|57P0[123])$/, "database unreachable"],
];

export interface StorageFailure {
  /** SQLITE_FULL, SQLITE_IOERR_WRITE, ENOSPC, … */
  code: string;
  /** disk full, I/O error, read-only storage */
  meaning: string;
}

/** The storage failure an error is, or null for any other error. */
export function storageFailure(error: unknown): StorageFailure | null {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  // A PostgreSQL server error carries its SQLSTATE in errno (code is ERR_POSTGRES_SERVER_ERROR).
  for (const candidate of [errno, code]) {
    if (typeof candidate !== "string") continue;
    const found = MEANINGS.find(([pattern]) => pattern.test(candidate));
    if (found) return { code: candidate, meaning: found[1] };
  }
  return null;
}

/** A cause is told on stderr at most once in this time; the failures in between are counted in the next line. */
export const TELL_INTERVAL_MS = 60_000;

export interface WritesFailing {
  code: string;
  meaning: string;
  /** The first failure since writes last went through (epoch ms). */
  since: number;
  /** Failures since then. */
  failures: number;
}

class WriteHealth {
  /** Failures by cause since the process started (for /metrics). */
  readonly totals = new Map<string, number>();
  failing: WritesFailing | null = null;
  private readonly told = new Map<string, { at: number; untold: number }>();

  /** `source`: where it happened (a call path, "node push", a job's name); `message`: SQLite's or the system's. */
  failed(failure: StorageFailure, source: string, message: string, now: number): void {
    this.totals.set(failure.code, (this.totals.get(failure.code) ?? 0) + 1);
    const since = this.failing?.since ?? now;
    const failures = (this.failing?.failures ?? 0) + 1;
    this.failing = { ...failure, since, failures };
    this.tell(failure.code, now, (untold) => {
      const more = untold > 0 ? ` (${untold} more since the last line)` : "";
      return `error: database writes failing: ${failure.code} (${failure.meaning}) in ${source}: ${message}${more}`;
    });
  }

  committed(now: number): void {
    const failing = this.failing;
    if (!failing) return;
    this.failing = null;
    this.tell("recovered", now, () => `database writes go through again (${failing.failures} failed before)`);
  }

  /** Prints `line()` unless this key was told within TELL_INTERVAL_MS; counts the ones held back. */
  private tell(key: string, now: number, line: (untold: number) => string): void {
    const last = this.told.get(key);
    if (last && now - last.at < TELL_INTERVAL_MS) {
      last.untold += 1;
      return;
    }
    console.error(line(last?.untold ?? 0));
    this.told.set(key, { at: now, untold: 0 });
  }
}

const healths = new WeakMap<Db, WriteHealth>();

function healthOf(db: Db): WriteHealth {
  let health = healths.get(db);
  if (!health) {
    health = new WriteHealth();
    healths.set(db, health);
  }
  return health;
}

/**
 * Counts `error` as a failed write when it is a storage failure (and tells stderr, at most once a
 * minute per cause); answers whether it was one. `source` says where it happened.
 */
export function noteWriteFailure(db: Db, source: string, error: unknown, now = Date.now()): boolean {
  const failure = storageFailure(error);
  if (!failure) return false;
  healthOf(db).failed(failure, source, error instanceof Error ? error.message : String(error), now);
  return true;
}

/** A transaction committed: writes go through (again). Costs one WeakMap lookup while all is well. */
export function noteCommit(db: Db): void {
  const health = healths.get(db);
  if (health?.failing) health.committed(Date.now());
}

/** Whether the latest write failed for lack of storage (until one goes through again), or null. */
export function writesFailing(db: Db): WritesFailing | null {
  return healths.get(db)?.failing ?? null;
}

/** Failed writes by cause since the process started. */
export function writeFailureCounts(db: Db): ReadonlyMap<string, number> {
  return healths.get(db)?.totals ?? new Map();
}
