/**
 * Checks that the PostgreSQL migrations build the same schema as the SQLite ones.
 *   bun scripts/check-pg-schema.ts [postgres://user@host:port/db]      (default: env PG_URL)
 * Applies every `migrations/NNN_name.sql` to a fresh in-memory SQLite database, and every
 * `NNN_name.pg.sql` twin (the plain file where there is none) to a scratch PostgreSQL database
 * `ferry_schema_check_<pid>` made on the given server and dropped afterwards. Then compares, table by
 * table: column names in order, types, nullability, defaults, primary keys, AUTOINCREMENT against
 * identity, unique indexes by columns, other indexes by name, foreign keys, triggers and the number
 * of CHECK constraints. Prints every difference and exits 1 on any.
 *
 * Equivalences: SQLite INTEGER is bigint, integer or smallint; TEXT text; REAL double precision;
 * BLOB bytea. A unique key on a `COLLATE NOCASE` column is a unique index on `lower(column)`.
 */
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SQL } from "bun";

const migrationsDir = resolve(import.meta.dir, "../migrations");
const MIGRATION_FILE = /^\d{3,}_[a-z0-9_]+\.sql$/;

interface Column {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  /** SQLite AUTOINCREMENT; PostgreSQL an identity column. */
  generated: boolean;
}

interface Index {
  name: string;
  unique: boolean;
  /** Key columns, or expressions such as `lower(email)`. */
  columns: string[];
  where: string | null;
  /** False for an index that only stands for a UNIQUE constraint (its name is the engine's choice). */
  named: boolean;
}

interface Table {
  columns: Column[];
  primaryKey: string[];
  indexes: Index[];
  foreignKeys: string[];
  triggers: string[];
  checks: number;
}

type Schema = Map<string, Table>;

function migrationFiles(): string[] {
  return readdirSync(migrationsDir)
    .filter((file) => MIGRATION_FILE.test(file))
    .sort();
}

function postgresFile(file: string): string {
  const twin = file.replace(/\.sql$/, ".pg.sql");
  return existsSync(join(migrationsDir, twin)) ? twin : file;
}

// ---- SQLite ----

function sqliteSchema(): Schema {
  const db = new Database(":memory:");
  db.exec("PRAGMA foreign_keys = ON");
  for (const file of migrationFiles()) db.exec(readFileSync(join(migrationsDir, file), "utf8"));
  const schema: Schema = new Map();
  const tables = db
    .query<{ name: string; sql: string }, []>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all();
  for (const { name, sql } of tables) schema.set(name, sqliteTable(db, name, sql));
  db.close();
  return schema;
}

function sqliteTable(db: Database, table: string, createSql: string): Table {
  const info = db
    .query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, [string]>(
      'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid',
    )
    .all(table);
  const autoincrement = /(\w+)\s+INTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT/i.exec(createSql)?.[1];
  const primaryKey = info
    .filter((column) => column.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((column) => column.name);
  return {
    columns: info.map((column) => ({
      name: column.name,
      type: column.type.toUpperCase(),
      // SQLite lets a non-INTEGER PRIMARY KEY column hold NULL; PostgreSQL never does. Both mean NOT NULL.
      notNull: column.notnull === 1 || column.pk > 0,
      default: normalizeDefault(column.dflt_value),
      generated: column.name === autoincrement,
    })),
    primaryKey,
    indexes: sqliteIndexes(db, table),
    foreignKeys: db
      .query<
        {
          id: number;
          seq: number;
          table: string;
          from: string;
          to: string | null;
          on_delete: string;
          on_update: string;
        },
        [string]
      >("SELECT * FROM pragma_foreign_key_list(?) ORDER BY id, seq")
      .all(table)
      .reduce<
        Map<number, { from: string[]; to: string[]; table: string; onDelete: string; onUpdate: string }>
      >((keys, row) => {
        const key = keys.get(row.id) ?? {
          from: [],
          to: [],
          table: row.table,
          onDelete: row.on_delete,
          onUpdate: row.on_update,
        };
        key.from.push(row.from);
        key.to.push(row.to ?? "?");
        return keys.set(row.id, key);
      }, new Map())
      .values()
      .map((key) => foreignKey(key.from, key.table, key.to, key.onDelete, key.onUpdate))
      .toArray()
      .sort(),
    triggers: db
      .query<{ name: string }, [string]>(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? ORDER BY name",
      )
      .all(table)
      .map((row) => row.name),
    checks: withoutComments(createSql).match(/\bCHECK\s*\(/gi)?.length ?? 0,
  };
}

function sqliteIndexes(db: Database, table: string): Index[] {
  const list = db
    .query<{ name: string; unique: number; origin: string }, [string]>(
      'SELECT name, "unique", origin FROM pragma_index_list(?)',
    )
    .all(table);
  return list
    .filter((index) => index.origin !== "pk")
    .map((index) => {
      const keys = db
        .query<{ name: string | null; coll: string; key: number }, [string]>(
          "SELECT name, coll, key FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno",
        )
        .all(index.name);
      const sql =
        db
          .query<{ sql: string | null }, [string]>(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?",
          )
          .get(index.name)?.sql ?? "";
      const where = /\bWHERE\b([\s\S]*)$/i.exec(sql)?.[1] ?? null;
      return {
        name: index.name,
        unique: index.unique === 1,
        columns: keys.map((key) =>
          key.name === null
            ? "<expression>"
            : key.coll.toUpperCase() === "NOCASE"
              ? `lower(${key.name})`
              : key.name,
        ),
        where: where === null ? null : normalizeExpression(where),
        named: index.origin === "c",
      };
    });
}

// ---- PostgreSQL ----

const DELETE_ACTIONS: Record<string, string> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

async function postgresSchema(sql: SQL): Promise<Schema> {
  for (const file of migrationFiles()) {
    const applied = postgresFile(file);
    try {
      await sql.unsafe(readFileSync(join(migrationsDir, applied), "utf8"));
    } catch (error) {
      throw new Error(`${applied}: ${(error as Error).message}`);
    }
  }
  const schema: Schema = new Map();
  const tables: { oid: number; name: string }[] = await sql`
    SELECT c.oid::int AS oid, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname`;
  for (const { oid, name } of tables) schema.set(name, await postgresTable(sql, oid));
  return schema;
}

async function postgresTable(sql: SQL, oid: number): Promise<Table> {
  const columns: { name: string; type: string; notnull: boolean; dflt: string | null; identity: string }[] =
    await sql`
      SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
             pg_get_expr(d.adbin, d.adrelid) AS dflt, a.attidentity AS identity
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = ${oid} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`;
  const primary: { name: string }[] = await sql`
    SELECT a.attname AS name FROM pg_constraint c
    CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, position)
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
    WHERE c.conrelid = ${oid} AND c.contype = 'p' ORDER BY k.position`;
  const indexes: {
    name: string;
    unique: boolean;
    columns: string[];
    where: string | null;
    constraint: boolean;
  }[] = await sql`
      SELECT ic.relname AS name, i.indisunique AS unique,
             ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnkeyatts) AS k) AS columns,
             pg_get_expr(i.indpred, i.indrelid) AS where,
             EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) AS constraint
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = ${oid} AND NOT i.indisprimary ORDER BY ic.relname`;
  const foreignKeys: { from: string[]; table: string; to: string[]; ondelete: string; onupdate: string }[] =
    await sql`
      SELECT ARRAY(SELECT attname FROM unnest(c.conkey) WITH ORDINALITY k(n, p)
                   JOIN pg_attribute ON attrelid = c.conrelid AND attnum = k.n ORDER BY k.p) AS from,
             c.confrelid::regclass::text AS table,
             ARRAY(SELECT attname FROM unnest(c.confkey) WITH ORDINALITY k(n, p)
                   JOIN pg_attribute ON attrelid = c.confrelid AND attnum = k.n ORDER BY k.p) AS to,
             c.confdeltype AS ondelete, c.confupdtype AS onupdate
      FROM pg_constraint c WHERE c.conrelid = ${oid} AND c.contype = 'f'`;
  const triggers: { name: string }[] = await sql`
    SELECT tgname AS name FROM pg_trigger WHERE tgrelid = ${oid} AND NOT tgisinternal ORDER BY tgname`;
  const [checks] =
    await sql`SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = ${oid} AND contype = 'c'`;
  return {
    columns: columns.map((column) => ({
      name: column.name,
      type: column.type,
      notNull: column.notnull,
      default: normalizeDefault(column.dflt),
      generated: column.identity !== "",
    })),
    primaryKey: primary.map((column) => column.name),
    indexes: indexes.map((index) => ({
      name: index.name,
      unique: index.unique,
      // pg_get_indexdef quotes keywords: "time".
      columns: index.columns.map((column) => column.replace(/^"(.*)"$/, "$1")),
      where: index.where === null ? null : normalizeExpression(index.where),
      // lower(column) unique indexes stand for SQLite's UNIQUE … COLLATE NOCASE constraints.
      named: !index.constraint && !(index.unique && index.columns.every((column) => /^lower\(/.test(column))),
    })),
    foreignKeys: foreignKeys
      .map((key) =>
        foreignKey(
          key.from,
          key.table.replace(/^"|"$/g, ""),
          key.to,
          DELETE_ACTIONS[key.ondelete] ?? key.ondelete,
          DELETE_ACTIONS[key.onupdate] ?? key.onupdate,
        ),
      )
      .sort(),
    triggers: triggers.map((trigger) => trigger.name),
    checks: checks.n,
  };
}

// ---- comparison ----

function foreignKey(from: string[], table: string, to: string[], onDelete: string, onUpdate: string): string {
  return `(${from.join(", ")}) → ${table} (${to.join(", ")}) ON DELETE ${onDelete} ON UPDATE ${onUpdate}`;
}

function withoutComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, "");
}

/** Drops casts, quotes around numbers and one pair of outer parentheses: `'0'::bigint` is 0. */
function normalizeDefault(value: string | null): string | null {
  if (value === null) return null;
  let text = value.trim().replace(/::[a-z ]+(\[\])?/gi, "");
  while (/^\(.*\)$/.test(text)) text = text.slice(1, -1).trim();
  return /^'-?\d+(\.\d+)?'$/.test(text) ? text.slice(1, -1) : text;
}

/** Loose form of an index predicate: no casts, parentheses, quotes around identifiers or spaces. */
function normalizeExpression(text: string): string {
  return text
    .replace(/::[a-z ]+(\[\])?/gi, "")
    .replace(/[()[\]"\s]/g, "")
    .toLowerCase()
    .replace(/=anyarray/g, "in");
}

const TYPE_MATCHES: Record<string, string[]> = {
  INTEGER: ["bigint", "integer", "smallint"],
  TEXT: ["text"],
  REAL: ["double precision"],
  BLOB: ["bytea"],
};

function indexKey(index: Index): string {
  const where = index.where === null ? "" : ` WHERE ${index.where}`;
  return `${index.unique ? "UNIQUE " : ""}(${index.columns.join(", ")})${where}`;
}

function compareLists(label: string, sqlite: string[], postgres: string[], out: string[]): void {
  const missing = sqlite.filter((item) => !postgres.includes(item));
  const extra = postgres.filter((item) => !sqlite.includes(item));
  for (const item of missing) out.push(`${label} only in SQLite: ${item}`);
  for (const item of extra) out.push(`${label} only in PostgreSQL: ${item}`);
}

function compareColumns(sqlite: Column[], postgres: Column[], out: string[]): void {
  const sqliteNames = sqlite.map((column) => column.name);
  const postgresNames = postgres.map((column) => column.name);
  if (sqliteNames.join() !== postgresNames.join()) {
    out.push(
      `columns differ:\n      SQLite:     ${sqliteNames.join(", ")}\n      PostgreSQL: ${postgresNames.join(", ")}`,
    );
  }
  for (const column of sqlite) {
    const twin = postgres.find((candidate) => candidate.name === column.name);
    if (!twin) continue;
    const where = `column ${column.name}`;
    if (!(TYPE_MATCHES[column.type] ?? [column.type.toLowerCase()]).includes(twin.type)) {
      out.push(`${where}: type ${column.type} in SQLite, ${twin.type} in PostgreSQL`);
    }
    if (column.notNull !== twin.notNull) {
      out.push(`${where}: ${column.notNull ? "NOT NULL" : "nullable"} in SQLite, not in PostgreSQL`);
    }
    if (column.default !== twin.default) {
      out.push(`${where}: default ${column.default} in SQLite, ${twin.default} in PostgreSQL`);
    }
    if (column.generated !== twin.generated) {
      out.push(
        `${where}: ${column.generated ? "AUTOINCREMENT in SQLite but no identity" : "identity in PostgreSQL only"}`,
      );
    }
  }
}

function compareIndexes(sqlite: Index[], postgres: Index[], out: string[]): void {
  const unique = (indexes: Index[]) =>
    indexes
      .filter((index) => index.unique)
      .map(indexKey)
      .sort();
  compareLists("unique key", unique(sqlite), unique(postgres), out);
  const named = (indexes: Index[]) =>
    indexes
      .filter((index) => index.named)
      .map((index) => `${index.name} ${indexKey(index)}`)
      .sort();
  compareLists("index", named(sqlite), named(postgres), out);
}

function compareTables(sqlite: Table, postgres: Table): string[] {
  const out: string[] = [];
  compareColumns(sqlite.columns, postgres.columns, out);
  if (sqlite.primaryKey.join() !== postgres.primaryKey.join()) {
    out.push(
      `primary key (${sqlite.primaryKey.join(", ")}) in SQLite, (${postgres.primaryKey.join(", ")}) in PostgreSQL`,
    );
  }
  compareIndexes(sqlite.indexes, postgres.indexes, out);
  compareLists("foreign key", sqlite.foreignKeys, postgres.foreignKeys, out);
  compareLists("trigger", sqlite.triggers, postgres.triggers, out);
  if (sqlite.checks !== postgres.checks) {
    out.push(`${sqlite.checks} CHECK constraints in SQLite, ${postgres.checks} in PostgreSQL`);
  }
  return out;
}

function compareSchemas(sqlite: Schema, postgres: Schema): string[] {
  const out: string[] = [];
  compareLists("table", [...sqlite.keys()], [...postgres.keys()], out);
  for (const [name, table] of sqlite) {
    const twin = postgres.get(name);
    if (!twin) continue;
    for (const difference of compareTables(table, twin)) out.push(`${name}: ${difference}`);
  }
  return out;
}

// ---- main ----

function scratchUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function main(): Promise<number> {
  const serverUrl = process.argv[2] ?? process.env.PG_URL;
  if (!serverUrl) {
    console.error("usage: bun scripts/check-pg-schema.ts postgres://user@host:port/db   (or set PG_URL)");
    return 2;
  }
  const sqlite = sqliteSchema();
  const database = `ferry_schema_check_${process.pid}`;
  const admin = new SQL({ url: serverUrl, max: 1 });
  await admin.unsafe(`CREATE DATABASE ${database}`);
  let postgres: Schema;
  try {
    const scratch = new SQL({ url: scratchUrl(serverUrl, database), max: 1 });
    try {
      postgres = await postgresSchema(scratch);
    } finally {
      await scratch.close();
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.close();
  }
  const differences = compareSchemas(sqlite, postgres);
  for (const difference of differences) console.log(difference);
  if (differences.length > 0) {
    console.log(`${differences.length} difference(s) between the SQLite and PostgreSQL schemas`);
    return 1;
  }
  console.log(`no differences: ${sqlite.size} tables, ${migrationFiles().length} migrations`);
  return 0;
}

process.exit(await main());
