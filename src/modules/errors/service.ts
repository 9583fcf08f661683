import type { Db } from "../../db/db.ts";

export interface ErrorRecord {
  _id: number;
  createTime: number;
  name: string;
  msg: string;
  stack: string;
}

const MAX_TEXT = 8000;

/** Records an unexpected error. Never throws: a failing error log must not hide the first error. */
export function recordError(db: Db, name: string, error: unknown): void {
  const err = error instanceof Error ? error : new Error(String(error));
  try {
    db.query("INSERT INTO error_logs (create_time, name, msg, stack) VALUES (?, ?, ?, ?)").run(
      Date.now(),
      name.slice(0, 200),
      (err.message || err.name).slice(0, MAX_TEXT),
      (err.stack ?? "").slice(0, MAX_TEXT),
    );
  } catch (logError) {
    console.error("error log write failed", logError, "while recording", err);
  }
}

/** Error records of the last `days` days, newest first. */
export function listErrors(db: Db, days: number, now = Date.now()): ErrorRecord[] {
  return db
    .query<ErrorRecord, [number]>(
      "SELECT id AS _id, create_time AS createTime, name, msg, stack FROM error_logs WHERE create_time >= ? ORDER BY id DESC LIMIT 1000",
    )
    .all(now - days * 86_400_000);
}

export function clearErrors(db: Db): number {
  return db.query("DELETE FROM error_logs").run().changes;
}
