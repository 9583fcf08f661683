import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { AppContext } from "../context.ts";
import { type Db, type Engine, PostgresDb } from "../db/db.ts";
import { businessDateTime } from "../lib/time.ts";
import { startPeriodic } from "../modules/errors/periodic.ts";
import { sendScheduledOffbox } from "./offbox.ts";
import { dumpPostgres } from "./pg-dump.ts";

/** Where a backup is written until it is complete. */
export const partialBackupName = (file: string) => `${file}.partial`;

/**
 * A consistent copy of a live database (VACUUM INTO works beside a running server) at `file`,
 * which must not exist. The copy holds what the database holds (the EPay key, password hashes),
 * so it is owner-only from its first byte: VACUUM INTO fills an empty file it is given and keeps
 * its mode. It is written as `<file>.partial` and renamed when complete, so a copy cut short
 * (killed, disk full) never lies under the name of a backup; a failed one is removed.
 */
export async function backupDatabase(db: Db, file: string): Promise<void> {
  const partial = partialBackupName(file);
  // Left by a copy cut short earlier; its hot journal would be rolled back into the new copy.
  rmSync(partial, { force: true });
  rmSync(`${partial}-journal`, { force: true });
  closeSync(openSync(partial, "wx", 0o600));
  // The umask may have taken more than group and other away; the owner must be able to write it.
  chmodSync(partial, 0o600);
  try {
    await db.run("VACUUM INTO ?", partial);
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
    throw error;
  }
}

export const backupsDir = (dataDir: string) => join(dataDir, "backups");
const SCHEDULED_NAME = /^ferry-\d{4}-\d{2}-\d{2}\.(db|dump)$/;
/** `ferry-YYYY-MM-DD.db`, or `.dump` (a pg_dump custom-format archive) on PostgreSQL. */
export const scheduledBackupName = (day: string, engine: Engine = "sqlite") =>
  `ferry-${day}.${engine === "postgres" ? "dump" : "db"}`;

/** Who writes a scheduled backup: the replica's id and machine, recorded with the day's claim. */
export interface BackupWriter {
  id: string;
  host: string;
}

/**
 * The scheduled backup's round (settings `backup_hour`, `backup_keep`): from that hour of the
 * business day on, once a day, `<data>/backups/ferry-YYYY-MM-DD.db` (`.dump` by pg_dump on
 * PostgreSQL), keeping the newest `backup_keep`. The day is claimed in `scheduled_backups` first
 * (one insert, the first claim wins), so of several replicas, and after a failover, one writes it,
 * in its own data folder; a failed backup gives the claim back, so the next round tries again.
 * Answers the file written, or null when nothing was due.
 */
export async function runScheduledBackup(
  ctx: AppContext,
  dataDir: string,
  now = Date.now(),
  writer: BackupWriter = { id: "", host: hostname() },
  signal?: AbortSignal,
): Promise<string | null> {
  const { backup_hour: hour, backup_keep: keep, timezone } = await ctx.settings.all();
  if (hour < 0) return null;
  const [day = "", time = ""] = businessDateTime(now, timezone).split(" ");
  if (Number(time.slice(0, 2)) < hour) return null;
  const dir = backupsDir(dataDir);
  const file = join(dir, scheduledBackupName(day, ctx.db.engine));
  if (existsSync(file)) return null;
  const claimed = await ctx.db.run(
    `INSERT INTO scheduled_backups (day, replica_id, host, file, create_time) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (day) DO NOTHING`,
    day,
    writer.id,
    writer.host,
    file,
    now,
  );
  if (claimed.changes === 0) return null;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (ctx.db instanceof PostgresDb) await dumpPostgres(ctx.db.url, file, signal);
    else await backupDatabase(ctx.db, file);
  } catch (error) {
    await releaseClaim(ctx, day, writer);
    throw error;
  }
  pruneBackups(dir, keep);
  // Off-box copies (issue 30 §4): inside the day's claim, so one replica sends the day once. A lease
  // lost on the way gives the claim back: the replica that takes the job over does the day again.
  try {
    await sendScheduledOffbox(ctx, file, day, signal);
  } catch (error) {
    if (signal?.aborted) await releaseClaim(ctx, day, writer);
    throw error;
  }
  return file;
}

const releaseClaim = async (ctx: AppContext, day: string, writer: BackupWriter) =>
  await ctx.db.run("DELETE FROM scheduled_backups WHERE day = ? AND replica_id = ?", day, writer.id);

/** Deletes the oldest scheduled backups beyond `keep` (names sort by day); other files are left alone. */
function pruneBackups(dir: string, keep: number): void {
  const scheduled = readdirSync(dir)
    .filter((name) => SCHEDULED_NAME.test(name))
    .sort();
  for (const name of scheduled.slice(0, Math.max(0, scheduled.length - keep))) rmSync(join(dir, name));
}

export const BACKUP_CHECK_INTERVAL_MS = 5 * 60_000;

/** The server's backup job: checks every few minutes whether the day's backup is due. */
export async function startScheduledBackups(
  ctx: AppContext,
  dataDir: string,
  intervalMs = BACKUP_CHECK_INTERVAL_MS,
  clock: () => number = Date.now,
  writer?: BackupWriter,
) {
  return await startPeriodic(
    ctx,
    "scheduled backup",
    intervalMs,
    async (signal) => await runScheduledBackup(ctx, dataDir, clock(), writer, signal),
  );
}
