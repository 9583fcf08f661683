import type { Db } from "./db.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
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

const FILE_NAME = /^(\d{3,})_([a-z0-9_]+)\.sql$/;

/** Turns `migrations/NNN_name.sql` files into ordered migrations; rejects gaps and duplicates. */
export function parseMigrationFiles(files: { file: string; sql: string }[]): Migration[] {
  const migrations = files.map(({ file, sql }) => {
    const match = FILE_NAME.exec(file);
    if (!match?.[1] || !match[2]) throw new Error(`migration file name must look like 001_name.sql: ${file}`);
    return { version: Number(match[1]), name: match[2], sql };
  });
  migrations.sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`migration ${index + 1} is missing or duplicated`);
  });
  return migrations;
}

function ensureTable(db: Db) {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_time INTEGER NOT NULL
  )`);
}

function appliedVersions(db: Db): Map<number, number> {
  ensureTable(db);
  const rows = db
    .query<{ version: number; applied_time: number }, []>(
      "SELECT version, applied_time FROM schema_migrations",
    )
    .all();
  return new Map(rows.map((row) => [row.version, row.applied_time]));
}

export function migrationStatus(db: Db, migrations: Migration[]): MigrationState[] {
  const applied = appliedVersions(db);
  return migrations.map((m) => ({
    version: m.version,
    name: m.name,
    appliedTime: applied.get(m.version) ?? null,
  }));
}

/** Applies every pending migration in order, each inside its own transaction. Returns the versions applied. */
export function migrate(db: Db, migrations: Migration[]): number[] {
  const applied = appliedVersions(db);
  const known = migrations.at(-1)?.version ?? 0;
  const newest = Math.max(0, ...applied.keys());
  if (newest > known) throw new DatabaseTooNewError(newest, known);
  const done: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(migration.sql);
      db.query("INSERT INTO schema_migrations (version, name, applied_time) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        Date.now(),
      );
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw new Error(`migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`);
    }
    done.push(migration.version);
  }
  return done;
}
