import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { AppContext } from "../context.ts";
import type { Db } from "../db/db.ts";
import { businessDateTime } from "../lib/time.ts";
import { startPeriodic } from "../modules/errors/periodic.ts";

/** A consistent copy of a live database (VACUUM INTO works beside a running server), owner-only. */
export function backupDatabase(db: Db, file: string): void {
  db.query("VACUUM INTO ?").run(file);
  // The copy holds what the database holds (the EPay key, password hashes): owner only.
  chmodSync(file, 0o600);
}

export const backupsDir = (dataDir: string) => join(dataDir, "backups");
const SCHEDULED_NAME = /^ferry-\d{4}-\d{2}-\d{2}\.db$/;
export const scheduledBackupName = (day: string) => `ferry-${day}.db`;

/**
 * The scheduled backup's round (settings `backup_hour`, `backup_keep`): from that hour of the
 * business day on, once a day, `<data>/backups/ferry-YYYY-MM-DD.db`, keeping the newest
 * `backup_keep`. Answers the file written, or null when nothing was due.
 */
export function runScheduledBackup(ctx: AppContext, dataDir: string, now = Date.now()): string | null {
  const { backup_hour: hour, backup_keep: keep, timezone } = ctx.settings.all();
  if (hour < 0) return null;
  const [day = "", time = ""] = businessDateTime(now, timezone).split(" ");
  if (Number(time.slice(0, 2)) < hour) return null;
  const dir = backupsDir(dataDir);
  const file = join(dir, scheduledBackupName(day));
  if (existsSync(file)) return null;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Written under another name first: a copy cut short never passes for that day's backup.
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  backupDatabase(ctx.db, partial);
  renameSync(partial, file);
  pruneBackups(dir, keep);
  return file;
}

/** Deletes the oldest scheduled backups beyond `keep` (names sort by day); other files are left alone. */
function pruneBackups(dir: string, keep: number): void {
  const scheduled = readdirSync(dir)
    .filter((name) => SCHEDULED_NAME.test(name))
    .sort();
  for (const name of scheduled.slice(0, Math.max(0, scheduled.length - keep))) rmSync(join(dir, name));
}

export const BACKUP_CHECK_INTERVAL_MS = 5 * 60_000;

/** The server's backup job: checks every few minutes whether the day's backup is due. */
export function startScheduledBackups(
  ctx: AppContext,
  dataDir: string,
  intervalMs = BACKUP_CHECK_INTERVAL_MS,
  clock: () => number = Date.now,
) {
  return startPeriodic(ctx, "scheduled backup", intervalMs, () => runScheduledBackup(ctx, dataDir, clock()));
}
