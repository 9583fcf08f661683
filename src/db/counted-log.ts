/**
 * What the logs strangers can reach share (issue 11, finding 13: `error_logs`, `payment_events`):
 * a repeat is counted on the row of its fingerprint (`repeat_count`, `last_time`) instead of stored
 * again, new rows are capped per hourly window, and expired rows are deleted at most once a window.
 */
import { type Db, lockForTransaction, tx } from "./db.ts";

export type CountedLog = "error_logs" | "payment_events";

/** The window new rows are capped in, and how often expired rows are looked for. */
export const LOG_WINDOW_MS = 3_600_000;

/** The start of the window `now` falls in. */
export const logWindowStart = (now: number) => now - (now % LOG_WINDOW_MS);

/** Counts the event on the row of its fingerprint; false when there is none yet. */
export async function countRepeat(
  db: Db,
  table: CountedLog,
  fingerprint: string,
  now: number,
): Promise<boolean> {
  return (
    (
      await db.run(
        `UPDATE ${table} SET repeat_count = repeat_count + 1, last_time = ?1 WHERE fingerprint = ?2`,
        now,
        fingerprint,
      )
    ).changes > 0
  );
}

/** Per database and table: when expired rows were last deleted. */
const lastExpiry = new WeakMap<Db, Map<CountedLog, number>>();

/**
 * Runs `deleteExpired` unless it already ran for this table within the last window, in this
 * process: with several replicas each deletes once a window, and a delete repeated by another
 * replica finds nothing more to delete (harmless).
 */
export async function expireOncePerWindow(
  db: Db,
  table: CountedLog,
  now: number,
  deleteExpired: () => Promise<unknown>,
): Promise<void> {
  let tables = lastExpiry.get(db);
  if (!tables) {
    tables = new Map();
    lastExpiry.set(db, tables);
  }
  const last = tables.get(table);
  if (last !== undefined && now - last < LOG_WINDOW_MS) return;
  tables.set(table, now);
  await deleteExpired();
}

/** Per database and table: the end of the last capped insert this process started. */
const capping = new WeakMap<Db, Map<CountedLog, Promise<unknown>>>();

/**
 * Runs `capped` (a count of the window's rows against a cap, then the insert it allows) so that
 * concurrent requests cannot all count the same rows and each insert one more. On PostgreSQL, with
 * connections of several replicas, in one transaction holding the table's lock
 * (lockForTransaction); the capped inserts of this process also take turns before it, so that
 * they wait for the lock on one connection, not on every connection of the pool, except inside a
 * transaction (it may hold the lock already, and goes straight on). SQLite has one server process,
 * whose statements run one at a time; a transaction there would also count as a write that went
 * through (db/write-health.ts) whenever a small log row still fits on a full disk.
 */
export function oneCapAtATime<T>(db: Db, table: CountedLog, capped: () => Promise<T>): Promise<T> {
  if (db.engine !== "postgres") return capped();
  const locked = () =>
    tx(db, async () => {
      await lockForTransaction(db, `counted-log ${table}`);
      return await capped();
    });
  if (db.inTransaction) return locked();
  let tables = capping.get(db);
  if (!tables) {
    tables = new Map();
    capping.set(db, tables);
  }
  const turn = (tables.get(table) ?? Promise.resolve()).then(locked);
  tables.set(
    table,
    turn.catch(() => {}),
  );
  return turn;
}
