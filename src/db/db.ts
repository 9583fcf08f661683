import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { noteCommit } from "./write-health.ts";

export type Db = Database;

/**
 * The data directory (created 0700) and the database file with its -wal and -shm (0600) are for
 * the owner only: the file holds the EPay key and every customer's data. chmod, unlike the create
 * mode, does not depend on the umask. SQLite gives -wal and -shm the mode of the database file.
 */
function ownerOnly(file: string): void {
  const dir = dirname(file);
  if (mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined) chmodSync(dir, 0o700);
  if (!existsSync(file)) closeSync(openSync(file, "a", 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path)) chmodOwned(path);
  }
}

/** chmod 0600, except on another user's file (an operator's CLI run): its owner's next start does it. */
function chmodOwned(path: string): void {
  try {
    chmodSync(path, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") throw error;
  }
}

/** Opens (creating if needed) the SQLite file in WAL mode with the pragmas every connection needs. */
export function openDatabase(file: string): Db {
  if (file !== ":memory:") ownerOnly(file);
  const db = new Database(file, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}

/** SQL for the smaller of two values: SQLite's two-argument MIN (PostgreSQL spells it LEAST). */
export const leastSql = (a: string, b: string) => `MIN(${a}, ${b})`;

/**
 * Runs fn inside BEGIN IMMEDIATE … COMMIT so that writers queue instead of failing half-way;
 * any throw rolls everything back. Nested calls join the outer transaction.
 */
export function tx<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = fn();
    db.exec("COMMIT");
    noteCommit(db);
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
