import { Database } from "bun:sqlite";
import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Migration } from "../db/migrate.ts";
import { runningServerPid } from "./pid-file.ts";

/** Why a restore was refused; the CLI prints the message as its one line. */
export class RestoreRefused extends Error {
  override name = "RestoreRefused";
}

/** Checks that `file` is an intact Ferry database this build can run; answers its schema version. */
export function checkBackup(file: string, migrations: Migration[]): number {
  if (!existsSync(file)) throw new RestoreRefused(`no such file: ${file}`);
  let db: Database;
  try {
    db = new Database(file, { readonly: true });
  } catch (error) {
    throw new RestoreRefused(`${file} cannot be opened: ${(error as Error).message}`);
  }
  try {
    const problems = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    const verdict = problems.map((row) => row.integrity_check).join("; ");
    if (verdict !== "ok") throw new RestoreRefused(`${file} fails the integrity check: ${verdict}`);
    const hasMigrations = db
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get();
    if (!hasMigrations) throw new RestoreRefused(`${file} is not a Ferry database (no schema_migrations)`);
    const version =
      db.query<{ v: number | null }, []>("SELECT MAX(version) AS v FROM schema_migrations").get()?.v ?? 0;
    const known = migrations.at(-1)?.version ?? 0;
    if (version > known) {
      throw new RestoreRefused(
        `${file} has schema version ${version}, newer than this ferry build knows (${known}); restore it with a newer ferry`,
      );
    }
    return version;
  } catch (error) {
    if (error instanceof RestoreRefused) throw error;
    throw new RestoreRefused(`${file} is not a readable SQLite database: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

/** "2026-11-25T10-41-07Z": a file-name-safe UTC time. */
const fileTime = (now: number) =>
  new Date(now)
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");

/**
 * Replaces `<data>/ferry.db` with a checked backup. Refused while a server holds the directory
 * (its pid file names a live process). The old database, if any, is kept as
 * `ferry.db.bak-<time>` together with its -wal, so nothing it held is lost; the backup is copied
 * in under a temporary name and renamed, so a cut-short copy never becomes ferry.db.
 */
export function restoreDatabase(
  file: string,
  dataDir: string,
  migrations: Migration[],
  now = Date.now(),
): { version: number; kept: string | null } {
  const version = checkBackup(file, migrations);
  const pid = runningServerPid(dataDir);
  if (pid !== null) {
    throw new RestoreRefused(
      `a ferry server (pid ${pid}) is running on ${dataDir}; stop it first ` +
        `(if none is, pid ${pid} is another program: delete ${dataDir}/ferry.pid)`,
    );
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const target = join(dataDir, "ferry.db");
  const incoming = `${target}.restoring`;
  copyFileSync(file, incoming);
  chmodSync(incoming, 0o600);
  let kept: string | null = null;
  if (existsSync(target)) {
    kept = `${target}.bak-${fileTime(now)}`;
    renameSync(target, kept);
    if (existsSync(`${target}-wal`)) renameSync(`${target}-wal`, `${kept}-wal`);
  }
  // A -wal or -shm left from the old database would be read as part of the new one.
  rmSync(`${target}-wal`, { force: true });
  rmSync(`${target}-shm`, { force: true });
  renameSync(incoming, target);
  return { version, kept };
}
