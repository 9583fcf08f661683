import { type Db, withAdvisoryLock } from "./db.ts";

export interface Migration {
  version: number;
  name: string;
  /** SQLite's text, and PostgreSQL's unless a `.pg.sql` twin gives its own. */
  sql: string;
  pgSql?: string;
}

export interface MigrationState {
  version: number;
  name: string;
  appliedTime: number | null;
}

export class DatabaseTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `database schema version ${databaseVersion} is newer than this ferry build knows (${knownVersion}); ` +
        "run a newer ferry or restore a backup made by this version",
    );
    this.name = "DatabaseTooNewError";
  }
}

const FILE_NAME = /^(\d{3,})_([a-z0-9_]+)(\.pg)?\.sql$/;

/**
 * Turns `migrations/NNN_name.sql` files (with an optional PostgreSQL twin `NNN_name.pg.sql`) into
 * ordered migrations; rejects gaps, duplicates and a twin without its file.
 */
export function parseMigrationFiles(files: { file: string; sql: string }[]): Migration[] {
  const byVersion = new Map<number, Migration>();
  const twins: { version: number; name: string; sql: string; file: string }[] = [];
  for (const { file, sql } of files) {
    const match = FILE_NAME.exec(file);
    if (!match?.[1] || !match[2]) throw new Error(`migration file name must look like 001_name.sql: ${file}`);
    const version = Number(match[1]);
    if (match[3]) {
      twins.push({ version, name: match[2], sql, file });
      continue;
    }
    if (byVersion.has(version)) throw new Error(`migration ${version} is missing or duplicated`);
    byVersion.set(version, { version, name: match[2], sql });
  }
  for (const twin of twins) {
    const migration = byVersion.get(twin.version);
    if (migration?.name !== twin.name) throw new Error(`PostgreSQL twin without its migration: ${twin.file}`);
    migration.pgSql = twin.sql;
  }
  const migrations = [...byVersion.values()].sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migration ${index + 1} is missing or duplicated`);
  });
  return migrations;
}

/** The key of PostgreSQL's advisory lock that lets one process at a time migrate. */
export const MIGRATION_LOCK = 0x6665727279; // "ferry"

async function ensureTable(db: Db) {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_time BIGINT NOT NULL
  )`);
}

async function appliedVersions(db: Db): Promise<Map<number, number>> {
  await ensureTable(db);
  const rows = await db.all<{ version: number; applied_time: number }>(
    "SELECT version, applied_time FROM schema_migrations",
  );
  return new Map(rows.map((row) => [row.version, row.applied_time]));
}

export async function migrationStatus(db: Db, migrations: Migration[]): Promise<MigrationState[]> {
  const applied = await appliedVersions(db);
  return migrations.map((m) => ({
    version: m.version,
    name: m.name,
    appliedTime: applied.get(m.version) ?? null,
  }));
}

/**
 * Applies every pending migration in order, each inside its own transaction. Returns the versions
 * applied. On PostgreSQL the whole run holds an advisory lock, so of several replicas starting at
 * once on one database one migrates and the others wait, then find the work done (a lock taken
 * inside each SERIALIZABLE transaction would come after its snapshot, and a waiter would apply a
 * migration again).
 */
export async function migrate(db: Db, migrations: Migration[]): Promise<number[]> {
  return await withAdvisoryLock(db, MIGRATION_LOCK, () => applyPending(db, migrations));
}

async function applyPending(db: Db, migrations: Migration[]): Promise<number[]> {
  const known = migrations.at(-1)?.version ?? 0;
  const done: number[] = [];
  for (const migration of migrations) {
    const applied = await db.tx(async () => {
      const versions = await appliedVersions(db);
      const newest = Math.max(0, ...versions.keys());
      if (newest > known) throw new DatabaseTooNewError(newest, known);
      if (versions.has(migration.version)) return false;
      try {
        await db.exec(db.engine === "postgres" ? (migration.pgSql ?? migration.sql) : migration.sql);
      } catch (error) {
        throw new Error(
          `migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`,
        );
      }
      await db.run(
        "INSERT INTO schema_migrations (version, name, applied_time) VALUES (?, ?, ?)",
        migration.version,
        migration.name,
        Date.now(),
      );
      return true;
    });
    if (applied) done.push(migration.version);
  }
  return done;
}
