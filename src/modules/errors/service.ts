/**
 * The error log (seed 001 §2.12), bounded because strangers can provoke errors (issue 11,
 * finding 13): the same error again (same name and message) is counted on its row (count,
 * lastTime); each source (name) adds at most PER_SOURCE_PER_WINDOW new rows an hour and all
 * sources together TOTAL_PER_WINDOW, beyond which errors are only counted on an overflow row;
 * texts are cut; rows not seen for ERROR_DAYS expire. A client that went away is no error at all.
 *
 * The source is a name the code chooses, from a set the code bounds (issue 26, C7): a route as
 * registered (`GET /api/subscript/:client/:userId/:userkey`), an envelope call's path, a job's name
 * (`usdt watcher`, `query epay`). Never a value from a request: each made-up path would be a
 * source with a budget of its own, and 300 of them would use up the total that real errors need.
 *
 * A write that failed for lack of storage (disk full) is also counted and told on stderr once a
 * minute per cause (db/write-health.ts), never with its stack.
 */
import { countRepeat, expireOncePerWindow, logWindowStart, oneCapAtATime } from "../../db/counted-log.ts";
import { type Db, tx } from "../../db/db.ts";
import { noteWriteFailure } from "../../db/write-health.ts";
import { cutUtf8 } from "../../lib/text.ts";
import { DAY_MS } from "../../lib/time.ts";
import { sha256Hex } from "../../rpc/ids.ts";
import { recordAudit } from "../audit/service.ts";

export interface ErrorRecord {
  _id: number;
  /** The first time it happened. */
  createTime: number;
  name: string;
  msg: string;
  stack: string;
  /** How many times it happened. */
  count: number;
  /** The latest time it happened. */
  lastTime: number;
}

const MSG_MAX_BYTES = 2048;
const STACK_MAX_BYTES = 8000;
const NAME_MAX_BYTES = 200;
export const PER_SOURCE_PER_WINDOW = 30;
export const TOTAL_PER_WINDOW = 300;
export const ERROR_DAYS = 30;

/**
 * A request body cut off because the client went away (a closed tab, an aborted upload) rejects
 * with an AbortError; the server only aborts its own fetches on purpose (the USDT watcher's stop).
 */
function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

async function expireOldErrors(db: Db, now: number): Promise<void> {
  await expireOncePerWindow(
    db,
    "error_logs",
    now,
    async () => await db.run("DELETE FROM error_logs WHERE last_time < ?", now - ERROR_DAYS * DAY_MS),
  );
}

async function insertError(
  db: Db,
  row: { name: string; msg: string; stack: string },
  fingerprint: string,
  now: number,
) {
  await db.run(
    `INSERT INTO error_logs (create_time, last_time, name, msg, stack, fingerprint, repeat_count)
     VALUES (?1, ?1, ?2, ?3, ?4, ?5, 1)
     ON CONFLICT (fingerprint) DO UPDATE SET repeat_count = error_logs.repeat_count + 1, last_time = excluded.last_time`,
    now,
    row.name,
    row.msg,
    row.stack,
    fingerprint,
  );
}

/** Where a new error goes over a cap this window: the overflow row's name, or null when it fits. */
async function overflowSource(db: Db, name: string, since: number): Promise<string | null> {
  const total = await db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM error_logs WHERE create_time >= ?",
    since,
  );
  if ((total?.n ?? 0) >= TOTAL_PER_WINDOW) return "error_logs";
  const fromSource = await db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM error_logs WHERE name = ? AND create_time >= ?",
    name,
    since,
  );
  return (fromSource?.n ?? 0) >= PER_SOURCE_PER_WINDOW ? name : null;
}

/** Records an unexpected error. Never throws: a failing error log must not hide the first error. */
export async function recordError(db: Db, name: string, error: unknown, now = Date.now()): Promise<void> {
  if (isAbort(error)) return;
  const err = error instanceof Error ? error : new Error(String(error));
  const storage = noteWriteFailure(db, name, err, now);
  try {
    await expireOldErrors(db, now);
    const row = {
      name: cutUtf8(name, NAME_MAX_BYTES),
      msg: cutUtf8(err.message || err.name, MSG_MAX_BYTES),
      stack: cutUtf8(err.stack ?? "", STACK_MAX_BYTES),
    };
    const fingerprint = sha256Hex(`${row.name}\n${row.msg}`);
    if (await countRepeat(db, "error_logs", fingerprint, now)) return;
    await oneCapAtATime(db, "error_logs", async () => {
      const windowStart = logWindowStart(now);
      const source = await overflowSource(db, row.name, windowStart);
      if (source === null) return await insertError(db, row, fingerprint, now);
      const overflow = sha256Hex(`overflow\n${source}\n${windowStart}`);
      if (await countRepeat(db, "error_logs", overflow, now)) return;
      const msg = `本小时错误过多，之后的只计数（次数见 count），最先超出的一条：${row.msg}`;
      await insertError(
        db,
        { name: source, msg: cutUtf8(msg, MSG_MAX_BYTES), stack: row.stack },
        overflow,
        now,
      );
    });
  } catch (logError) {
    // Out of space the error log cannot be written either; the write-failure line has told it.
    if (storage || noteWriteFailure(db, "error log", logError, now)) return;
    console.error("error log write failed", logError, "while recording", err);
  }
}

/** Error records seen in the last `days` days, latest first. */
export async function listErrors(db: Db, days: number, now = Date.now()): Promise<ErrorRecord[]> {
  return await db.all<ErrorRecord>(
    `SELECT id AS _id, create_time AS "createTime", name, msg, stack, repeat_count AS count, last_time AS "lastTime"
       FROM error_logs WHERE last_time >= ? ORDER BY last_time DESC, id DESC LIMIT 1000`,
    now - days * DAY_MS,
  );
}

export async function clearErrors(db: Db): Promise<number> {
  return await tx(db, async () => {
    const cleared = (await db.run("DELETE FROM error_logs")).changes;
    await recordAudit(db, { action: "errors.clear", diff: { errors: { old: cleared, new: 0 } } });
    return cleared;
  });
}
