import { Database } from "bun:sqlite";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
} from "node:fs";
import { basename, join } from "node:path";
import type { Migration } from "../db/migrate.ts";
import { runningServerPid } from "./pid-file.ts";

/** Why a restore was refused; the CLI prints the message as its one line. */
export class RestoreRefused extends Error {
  override name = "RestoreRefused";
}

const SQLITE_MAGIC = "SQLite format 3\0";

/**
 * Why `file` cannot be a whole SQLite database, read from its 100-byte header before SQLite opens
 * it, or null. A copy cut short is told as such: VACUUM INTO killed mid-way leaves a hot
 * `-journal` beside a file whose first page is still zeros (SQLite would answer "attempt to write
 * a readonly database"), and a file copy cut short is smaller than its header says.
 */
function unfinishedCopy(file: string): string | null {
  const takeNew = "a copy cut short; take a new backup";
  if (existsSync(`${file}-journal`)) {
    return `${file} is incomplete (${basename(file)}-journal lies beside it: ${takeNew})`;
  }
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const header = Buffer.alloc(100);
    const read = readSync(fd, header, 0, 100, 0);
    if (size === 0) return `${file} is empty`;
    if (header.subarray(0, read).every((byte) => byte === 0)) {
      return `${file} is incomplete (its first page was never written: ${takeNew})`;
    }
    if (read < 100 || header.toString("latin1", 0, 16) !== SQLITE_MAGIC) {
      return `${file} is not a readable SQLite database (no SQLite header)`;
    }
    const pageSize = header.readUInt16BE(16) === 1 ? 65_536 : header.readUInt16BE(16);
    // The page count in the header counts only when its "valid for" number matches the change counter.
    const pages = header.readUInt32BE(24) === header.readUInt32BE(92) ? header.readUInt32BE(28) : 0;
    if (pages * pageSize > size) {
      return `${file} is incomplete (${size} of the ${pages * pageSize} bytes its header names: ${takeNew})`;
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Checks that `file` is an intact Ferry database this build can run; answers its schema version. */
export function checkBackup(file: string, migrations: Migration[]): number {
  if (!existsSync(file)) throw new RestoreRefused(`no such file: ${file}`);
  const unfinished = unfinishedCopy(file);
  if (unfinished) throw new RestoreRefused(unfinished);
  let db: Database;
  try {
    db = new Database(file, { readonly: true });
  } catch (error) {
    throw new RestoreRefused(`${file} cannot be opened: ${(error as Error).message}`);
  }
  try {
    const problems = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    // One line, as every refusal is: a problem can span lines ("*** in database main ***\nTree …").
    const verdict = problems.map((row) => row.integrity_check.replace(/\s*\n\s*/g, " ")).join("; ");
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
export const fileTime = (now: number) =>
  new Date(now)
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");

/** Refuses while a server holds the data directory (its pid file names a live process). */
export function refuseWhileServing(dataDir: string): void {
  const pid = runningServerPid(dataDir);
  if (pid !== null) {
    throw new RestoreRefused(
      `a ferry server (pid ${pid}) is running on ${dataDir}; stop it first ` +
        `(if none is, pid ${pid} is another program: delete ${dataDir}/ferry.pid)`,
    );
  }
}

/** A checked backup copied into the data directory as `ferry.db.restoring`, ready to replace ferry.db. */
export interface PreparedRestore {
  dataDir: string;
  version: number;
  incoming: string;
}

/**
 * The first half of a restore: refused at once while a server runs on the directory (before the
 * integrity check, which takes seconds on a big backup), then the backup is checked and copied in
 * under a temporary name.
 */
export function prepareRestore(file: string, dataDir: string, migrations: Migration[]): PreparedRestore {
  refuseWhileServing(dataDir);
  const version = checkBackup(file, migrations);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const incoming = join(dataDir, "ferry.db.restoring");
  copyFileSync(file, incoming);
  chmodSync(incoming, 0o600);
  return { dataDir, version, incoming };
}

/**
 * The second half: looks for a server again (one may have started during the check and the copy),
 * then replaces ferry.db. The old database, if any, is kept as `ferry.db.bak-<time>` together with
 * its -wal, so nothing it held is lost; the copy is renamed in, so a cut-short copy never becomes
 * ferry.db.
 */
export function finishRestore(
  prepared: PreparedRestore,
  now = Date.now(),
): { version: number; kept: string | null } {
  const { dataDir, version, incoming } = prepared;
  try {
    refuseWhileServing(dataDir);
  } catch (error) {
    rmSync(incoming, { force: true });
    throw error;
  }
  const target = join(dataDir, "ferry.db");
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

/** Replaces `<data>/ferry.db` with a checked backup: prepareRestore, then finishRestore. */
export function restoreDatabase(
  file: string,
  dataDir: string,
  migrations: Migration[],
  now = Date.now(),
): { version: number; kept: string | null } {
  return finishRestore(prepareRestore(file, dataDir, migrations), now);
}
