/**
 * `ferry db copy`: moves a whole Ferry database between the engines (SQLite → PostgreSQL to scale
 * out, PostgreSQL → SQLite to come back). The target is migrated first so it has the schema, then
 * every table is copied in dependency order, in batches of multi-row upserts inside transactions
 * (an upsert, because triggers and migrations create some rows themselves: a user's `balances`
 * row, the Telegram poll state). Afterwards both sides are compared: row counts per table and the
 * ledger sums (traffic, wallet, time packages) per table and per account.
 *
 * The schema (tables, primary keys, foreign keys) is read from the SQLite side, whichever it is:
 * after migrating, both sides have the same tables and columns.
 *
 * Uploaded images travel in `upload_blobs` (migration 016). From SQLite, an upload made before
 * 016 has its bytes only in `<data>/uploads/<filename>`; the copy reads that file into the
 * target's `upload_blobs`, so the images move with the database.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Db, SqliteDb, SqlValue } from "../db/db.ts";
import { openPostgres, openSqlite } from "../db/db.ts";
import { type Migration, migrate } from "../db/migrate.ts";
import { UPLOAD_NAME_PATTERN } from "../modules/file/schema.ts";
import { refuseWhileServing } from "./restore.ts";

/** Why a copy was refused; the CLI prints the message as its one line. */
export class CopyRefused extends Error {
  override name = "CopyRefused";
}

/** One side of a copy: a PostgreSQL URL or a SQLite file (with the data directory a server would hold). */
export type Endpoint =
  | { engine: "postgres"; url: string }
  | { engine: "sqlite"; file: string; dataDir: string };

/** `postgres://…`, `sqlite:<file>` or a data directory (its ferry.db). */
export function parseEndpoint(value: string): Endpoint {
  if (/^postgres(ql)?:\/\//.test(value)) return { engine: "postgres", url: value };
  if (value.startsWith("sqlite:")) {
    const file = value.slice("sqlite:".length);
    return { engine: "sqlite", file, dataDir: dirname(file) };
  }
  return { engine: "sqlite", file: `${value.replace(/\/+$/, "") || "."}/ferry.db`, dataDir: value };
}

/** Where a SQLite source keeps the images uploaded before migration 016 (`<data>/uploads`); none on PostgreSQL. */
export const legacyUploadsDir = (endpoint: Endpoint): string | undefined =>
  endpoint.engine === "sqlite" ? join(endpoint.dataDir, "uploads") : undefined;

export interface TableShape {
  name: string;
  columns: string[];
  primaryKey: string[];
  /** Tables this one's foreign keys point at (itself excluded). */
  parents: string[];
  /** Whether a column is a BLOB (uploaded images, up to 4 MB a row): copied a few rows at a time. */
  holdsBlobs: boolean;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** Tables the copy leaves alone: migrate wrote schema_migrations on the target. */
const SKIPPED = new Set(["schema_migrations"]);

/** Every table of a SQLite database with its columns, primary key and parents, parents before children. */
export async function readShapes(sqlite: SqliteDb): Promise<TableShape[]> {
  const names = await sqlite.all<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  const shapes: TableShape[] = [];
  for (const { name } of names) {
    if (SKIPPED.has(name)) continue;
    const columns = await sqlite.all<{ name: string; pk: number; type: string }>(
      "SELECT name, pk, type FROM pragma_table_info(?) ORDER BY cid",
      name,
    );
    const parents = await sqlite.all<{ table: string }>(
      'SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)',
      name,
    );
    const primaryKey = columns
      .filter((column) => column.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((column) => column.name);
    shapes.push({
      name,
      columns: columns.map((column) => column.name),
      primaryKey: primaryKey.length ? primaryKey : columns.map((column) => column.name),
      parents: parents.map((row) => row.table).filter((parent) => parent !== name),
      holdsBlobs: columns.some((column) => column.type.toUpperCase() === "BLOB"),
    });
  }
  return dependencyOrder(shapes);
}

/** Parents before children (a cycle, which Ferry's schema has none of, keeps its tables in name order). */
export function dependencyOrder(shapes: TableShape[]): TableShape[] {
  const byName = new Map(shapes.map((shape) => [shape.name, shape]));
  const ordered: TableShape[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (shape: TableShape) => {
    if (state.has(shape.name)) return;
    state.set(shape.name, "visiting");
    for (const parent of shape.parents) {
      const parentShape = byName.get(parent);
      if (parentShape) visit(parentShape);
    }
    state.set(shape.name, "done");
    ordered.push(shape);
  };
  for (const shape of shapes) visit(shape);
  return ordered;
}

/** How many rows each table holds right after the migrations (the rows they seed). */
async function seededCounts(migrations: Migration[]): Promise<Map<string, number>> {
  const fresh = openSqlite(":memory:");
  try {
    await migrate(fresh, migrations);
    const counts = new Map<string, number>();
    for (const shape of await readShapes(fresh)) counts.set(shape.name, await countRows(fresh, shape.name));
    return counts;
  } finally {
    await fresh.close();
  }
}

async function countRows(db: Db, table: string): Promise<number> {
  return (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${quote(table)}`))?.n ?? 0;
}

/** The target's tables that hold more rows than the migrations seed; none for an empty database. */
async function tablesWithRows(db: Db, tables: string[], seeded: Map<string, number>): Promise<string[]> {
  const existing = new Set(
    db.engine === "postgres"
      ? (
          await db.all<{ name: string }>(
            "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()",
          )
        ).map((row) => row.name)
      : (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map(
          (row) => row.name,
        ),
  );
  const full: string[] = [];
  for (const table of tables) {
    if (existing.has(table) && (await countRows(db, table)) > (seeded.get(table) ?? 0)) full.push(table);
  }
  return full;
}

/** Progress of one table: called after every batch and once at its end. */
export type ProgressReport = (table: string, copied: number, total: number) => void;

export interface CopyOptions {
  migrations: Migration[];
  /**
   * The source's `<data>/uploads` when the source is SQLite: uploads made before migration 016 have
   * their bytes there, not in `upload_blobs`, and the copy reads them into the target's.
   */
  legacyUploadsDir?: string;
  onProgress?: ProgressReport;
  /** Rows per INSERT (fewer for wide tables: PostgreSQL takes at most 65,535 parameters). */
  batchRows?: number;
}

const MAX_PARAMETERS = 30_000;
/** Rows per batch of a table with BLOBs: at most 4 MB each, so a batch stays within ~32 MB. */
const BLOB_BATCH_ROWS = 8;

/** A value as the target stores it: PostgreSQL's JSON arrives as text already; objects are stringified. */
function storable(value: unknown): SqlValue {
  if (value === undefined) return null;
  if (value instanceof Uint8Array || value === null || typeof value !== "object") return value as SqlValue;
  return JSON.stringify(value);
}

/** `INSERT … VALUES (…), (…) ON CONFLICT (pk) DO UPDATE`: the same text on both engines. */
function upsertSql(shape: TableShape, rows: number): string {
  const tuple = `(${shape.columns.map(() => "?").join(", ")})`;
  const rest = shape.columns.filter((column) => !shape.primaryKey.includes(column));
  const onConflict = rest.length
    ? `DO UPDATE SET ${rest.map((column) => `${quote(column)} = excluded.${quote(column)}`).join(", ")}`
    : "DO NOTHING";
  return (
    `INSERT INTO ${quote(shape.name)} (${shape.columns.map(quote).join(", ")}) VALUES ` +
    `${Array.from({ length: rows }, () => tuple).join(", ")} ` +
    `ON CONFLICT (${shape.primaryKey.map(quote).join(", ")}) ${onConflict}`
  );
}

/**
 * Reads a table in primary-key order a batch at a time: keyset paging (`(pk) > (last)`), which,
 * unlike OFFSET, costs the same for the last batch as for the first.
 */
async function* batches(db: Db, shape: TableShape, size: number): AsyncGenerator<Record<string, unknown>[]> {
  const columns = shape.columns.map(quote).join(", ");
  const key = shape.primaryKey.map(quote).join(", ");
  const first = `SELECT ${columns} FROM ${quote(shape.name)} ORDER BY ${key} LIMIT ?`;
  const next = `SELECT ${columns} FROM ${quote(shape.name)} WHERE (${key}) > (${shape.primaryKey.map(() => "?").join(", ")}) ORDER BY ${key} LIMIT ?`;
  let last: SqlValue[] | null = null;
  for (;;) {
    const rows: Record<string, unknown>[] = last
      ? await db.all(next, ...last, size)
      : await db.all(first, size);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < size) return;
    const end = rows[rows.length - 1] as Record<string, unknown>;
    last = shape.primaryKey.map((column) => storable(end[column]));
  }
}

/** Copies one table; answers the rows written. */
async function copyTable(from: Db, to: Db, shape: TableShape, options: CopyOptions & { pgReplica: boolean }) {
  const total = await countRows(from, shape.name);
  const size = Math.max(
    1,
    Math.min(
      options.batchRows ?? 1_000,
      Math.floor(MAX_PARAMETERS / shape.columns.length),
      shape.holdsBlobs ? BLOB_BATCH_ROWS : Number.POSITIVE_INFINITY,
    ),
  );
  let copied = 0;
  options.onProgress?.(shape.name, 0, total);
  for await (const rows of batches(from, shape, size)) {
    const params = rows.flatMap((row) => shape.columns.map((column) => storable(row[column])));
    await to.tx(async () => {
      // Triggers and foreign-key checks off for this transaction: the rows come from a consistent database.
      if (options.pgReplica) await to.exec("SET LOCAL session_replication_role = replica");
      await to.run(upsertSql(shape, rows.length), ...params);
    });
    copied += rows.length;
    options.onProgress?.(shape.name, copied, total);
  }
  return copied;
}

/** Whether this PostgreSQL role may switch triggers and foreign-key checks off (superuser, or granted SET). */
async function mayReplicate(db: Db): Promise<boolean> {
  try {
    await db.tx(async () => await db.exec("SET LOCAL session_replication_role = replica"));
    return true;
  } catch {
    return false;
  }
}

/**
 * Uploads of the source with no blob row whose file is in `dir` (made before migration 016 on
 * SQLite): their bytes go into the target's `upload_blobs`. Answers how many were read. An upload
 * whose file is gone stays without bytes, as it was (its download is 404 on both sides).
 */
async function copyLegacyUploads(from: Db, to: Db, dir: string): Promise<LegacyUploads> {
  const legacy = await from.all<{ filename: string }>(
    `SELECT u.filename FROM uploads u
      WHERE NOT EXISTS (SELECT 1 FROM upload_blobs b WHERE b.filename = u.filename)
      ORDER BY u.filename`,
  );
  const read: LegacyUploads = { dir, images: 0, bytes: 0 };
  for (const { filename } of legacy) {
    // Only names the server made ever become paths (the download route checks the same pattern).
    if (!UPLOAD_NAME_PATTERN.test(filename)) continue;
    const file = Bun.file(join(dir, filename));
    if (!(await file.exists())) continue;
    const bytes = await file.bytes();
    await to.run("INSERT INTO upload_blobs (filename, bytes) VALUES (?, ?)", filename, bytes);
    read.images += 1;
    read.bytes += bytes.length;
  }
  return read;
}

/**
 * PostgreSQL: the columns a sequence numbers continue after the highest value copied: identity
 * columns, and the sequences a column owns (users.node_uid and agents.node_no, migration 004).
 */
async function resetIdentities(db: Db): Promise<void> {
  const identities = await db.all<{ table_name: string; column_name: string }>(
    `SELECT t.relname AS table_name, a.attname AS column_name
       FROM pg_depend d
       JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
       JOIN pg_class t ON t.oid = d.refobjid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
      WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')`,
  );
  for (const { table_name: table, column_name: column } of identities) {
    await db.get(
      `SELECT setval(pg_get_serial_sequence(?, ?), MAX(${quote(column)})) AS v FROM ${quote(table)} HAVING MAX(${quote(column)}) IS NOT NULL`,
      quote(table),
      column,
    );
  }
}

/** Uploads made before migration 016 that a copy read from the source's folder. */
export interface LegacyUploads {
  dir: string;
  images: number;
  bytes: number;
}

export interface CopyResult {
  tables: { name: string; rows: number }[];
  /** Images read from the source's `<data>/uploads` into the target's `upload_blobs` (SQLite source). */
  legacyUploads: LegacyUploads | null;
  comparison: Comparison;
}

/**
 * Copies every table of `from` into `to` (which must be empty) and compares the two. Both are
 * migrated first, so they have the same schema; the schema is read from whichever is SQLite.
 */
export async function copyDatabase(from: Db, to: Db, options: CopyOptions): Promise<CopyResult> {
  const sqliteSide = (
    from.engine === "sqlite" ? from : to.engine === "sqlite" ? to : null
  ) as SqliteDb | null;
  if (!sqliteSide)
    throw new CopyRefused("one side of a copy must be SQLite (a data directory or sqlite:<file>)");
  const seeded = await seededCounts(options.migrations);
  const full = await tablesWithRows(to, [...seeded.keys()], seeded);
  if (full.length) {
    throw new CopyRefused(
      `the target is not empty (rows in ${full.join(", ")}); copy into a new, empty database`,
    );
  }
  await migrate(from, options.migrations);
  await migrate(to, options.migrations);
  const shapes = await readShapes(sqliteSide);
  const pgReplica = to.engine === "postgres" && (await mayReplicate(to));
  // SQLite: foreign keys are checked once at the end (PRAGMA foreign_key_check), not row by row.
  if (to.engine === "sqlite") await to.exec("PRAGMA foreign_keys = OFF");
  const tables: { name: string; rows: number }[] = [];
  let legacyUploads: LegacyUploads | null = null;
  try {
    for (const shape of shapes) {
      tables.push({ name: shape.name, rows: await copyTable(from, to, shape, { ...options, pgReplica }) });
    }
    if (options.legacyUploadsDir && from.engine === "sqlite") {
      legacyUploads = await copyLegacyUploads(from, to, options.legacyUploadsDir);
      const blobs = tables.find((table) => table.name === "upload_blobs");
      if (blobs) blobs.rows += legacyUploads.images;
    }
  } finally {
    if (to.engine === "sqlite") await to.exec("PRAGMA foreign_keys = ON");
  }
  if (to.engine === "postgres") await resetIdentities(to);
  if (to.engine === "sqlite") {
    const broken = await to.all<{ table: string }>('SELECT DISTINCT "table" FROM pragma_foreign_key_check');
    if (broken.length)
      throw new Error(`foreign keys broken after the copy in ${broken.map((row) => row.table).join(", ")}`);
  }
  return {
    tables,
    legacyUploads,
    comparison: await compareDatabases(
      from,
      to,
      shapes.map((shape) => shape.name),
      legacyUploads,
    ),
  };
}

// ---- the comparison ---------------------------------------------------------------------------

/** One account's balances and what its ledgers add up to. */
export interface AccountLedger {
  traffic: number;
  trafficLedger: number;
  wallet: number;
  walletLedger: number;
  vip: number;
  vipLedger: number;
}

export interface LedgerSums {
  /** Σ balances.traffic, Σ traffic_records.traffic_change, Σ users.wallet_fen, … over all accounts. */
  totals: AccountLedger;
  accounts: Map<string, AccountLedger>;
}

const LEDGER_KEYS: (keyof AccountLedger)[] = [
  "traffic",
  "trafficLedger",
  "wallet",
  "walletLedger",
  "vip",
  "vipLedger",
];
const emptyLedger = (): AccountLedger => ({
  traffic: 0,
  trafficLedger: 0,
  wallet: 0,
  walletLedger: 0,
  vip: 0,
  vipLedger: 0,
});

/** The sums tests/invariant.test.ts checks, per account: balances and users against traffic_records and wallet_entries. */
export async function ledgerSums(db: Db): Promise<LedgerSums> {
  const accounts = new Map<string, AccountLedger>();
  const account = (id: string) => {
    const entry = accounts.get(id) ?? emptyLedger();
    accounts.set(id, entry);
    return entry;
  };
  const users = await db.all<{
    id: string;
    traffic: number | null;
    wallet_fen: number;
    vip_expire_time: number;
  }>("SELECT id, traffic, wallet_fen, vip_expire_time FROM users LEFT JOIN balances ON user_id = id");
  for (const row of users)
    Object.assign(account(row.id), {
      traffic: row.traffic ?? 0,
      wallet: row.wallet_fen,
      vip: row.vip_expire_time,
    });
  const traffic = await db.all<{ user_id: string; traffic: number; vip: number }>(
    "SELECT user_id, COALESCE(SUM(traffic_change), 0) AS traffic, COALESCE(SUM(vip_change), 0) AS vip FROM traffic_records GROUP BY user_id",
  );
  for (const row of traffic)
    Object.assign(account(row.user_id), { trafficLedger: row.traffic, vipLedger: row.vip });
  const wallet = await db.all<{ user_id: string; fen: number }>(
    "SELECT user_id, COALESCE(SUM(change_fen), 0) AS fen FROM wallet_entries GROUP BY user_id",
  );
  for (const row of wallet) account(row.user_id).walletLedger = row.fen;
  const totals = emptyLedger();
  for (const entry of accounts.values()) for (const key of LEDGER_KEYS) totals[key] += entry[key];
  return { totals, accounts };
}

export interface Comparison {
  /** Rows per table; the source's upload_blobs count includes the images read from its folder. */
  counts: { table: string; source: number; target: number }[];
  /** The bytes of every uploaded image (Σ length of upload_blobs.bytes, plus the folder's on the source). */
  imageBytes: { source: number; target: number };
  /** Images the copy read from the source's `<data>/uploads` (uploads made before the blobs). */
  legacyUploads: LegacyUploads | null;
  totals: { sum: keyof AccountLedger; source: number; target: number }[];
  /** Accounts whose balances or ledger sums differ between the two sides. */
  accountDifferences: { id: string; source: AccountLedger | null; target: AccountLedger | null }[];
  /** Accounts whose balance is not what its ledger adds up to (on the source: not the copy's doing). */
  unbalancedSource: number;
  equal: boolean;
}

const sameLedger = (a: AccountLedger, b: AccountLedger) => LEDGER_KEYS.every((key) => a[key] === b[key]);
const balanced = (a: AccountLedger) =>
  a.traffic === a.trafficLedger && a.wallet === a.walletLedger && a.vip === a.vipLedger;

async function imageBytes(db: Db): Promise<number> {
  return (await db.get<{ n: number | null }>("SELECT SUM(length(bytes)) AS n FROM upload_blobs"))?.n ?? 0;
}

/**
 * Row counts per table, the bytes of the uploaded images, and the ledger sums per table and per
 * account on both sides. `legacy`: the images a copy read from the source's folder, which the
 * source holds as files, not rows.
 */
export async function compareDatabases(
  source: Db,
  target: Db,
  tables: string[],
  legacy: LegacyUploads | null = null,
): Promise<Comparison> {
  const counts = [];
  for (const table of tables) {
    const fromFolder = table === "upload_blobs" ? (legacy?.images ?? 0) : 0;
    counts.push({
      table,
      source: (await countRows(source, table)) + fromFolder,
      target: await countRows(target, table),
    });
  }
  const bytes = {
    source: (await imageBytes(source)) + (legacy?.bytes ?? 0),
    target: await imageBytes(target),
  };
  const [a, b] = [await ledgerSums(source), await ledgerSums(target)];
  const totals = LEDGER_KEYS.map((sum) => ({ sum, source: a.totals[sum], target: b.totals[sum] }));
  const accountDifferences = [];
  for (const id of new Set([...a.accounts.keys(), ...b.accounts.keys()])) {
    const [left, right] = [a.accounts.get(id) ?? null, b.accounts.get(id) ?? null];
    if (!left || !right || !sameLedger(left, right))
      accountDifferences.push({ id, source: left, target: right });
  }
  const equal =
    counts.every((row) => row.source === row.target) &&
    bytes.source === bytes.target &&
    totals.every((row) => row.source === row.target) &&
    accountDifferences.length === 0;
  const unbalancedSource = [...a.accounts.values()].filter((entry) => !balanced(entry)).length;
  return {
    counts,
    imageBytes: bytes,
    legacyUploads: legacy,
    totals,
    accountDifferences,
    unbalancedSource,
    equal,
  };
}

const TOTAL_NAMES: Record<keyof AccountLedger, string> = {
  traffic: "Σ balances.traffic",
  trafficLedger: "Σ traffic_records.traffic_change",
  wallet: "Σ users.wallet_fen",
  walletLedger: "Σ wallet_entries.change_fen",
  vip: "Σ users.vip_expire_time",
  vipLedger: "Σ traffic_records.vip_change",
};

/** The comparison as the CLI prints it: the tables, the ledger sums, then "equal" or the differences. */
export function formatComparison(comparison: Comparison, accounts: number): string {
  const rows: [string, string, string, string][] = [["table", "source", "target", ""]];
  for (const row of comparison.counts) {
    rows.push([
      row.table,
      String(row.source),
      String(row.target),
      row.source === row.target ? "" : "DIFFERENT",
    ]);
  }
  rows.push(["", "", "", ""]);
  const images = comparison.imageBytes;
  rows.push([
    "Σ uploaded image bytes",
    String(images.source),
    String(images.target),
    images.source === images.target ? "" : "DIFFERENT",
  ]);
  for (const row of comparison.totals) {
    rows.push([
      TOTAL_NAMES[row.sum],
      String(row.source),
      String(row.target),
      row.source === row.target ? "" : "DIFFERENT",
    ]);
  }
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)));
  const lines = rows.map(([name, source, target, note]) =>
    `${name.padEnd(widths[0] ?? 0)}  ${source.padStart(widths[1] ?? 0)}  ${target.padStart(widths[2] ?? 0)}  ${note}`.trimEnd(),
  );
  lines.push(
    `per account: ${accounts - comparison.accountDifferences.length} of ${accounts} accounts have the same balances and ledger sums on both sides`,
  );
  for (const difference of comparison.accountDifferences.slice(0, 20)) {
    lines.push(
      `  ${difference.id}: source ${JSON.stringify(difference.source)} target ${JSON.stringify(difference.target)}`,
    );
  }
  if (comparison.accountDifferences.length > 20)
    lines.push(`  … and ${comparison.accountDifferences.length - 20} more`);
  if (comparison.legacyUploads) {
    const { images, dir } = comparison.legacyUploads;
    lines.push(
      `upload_blobs: ${images} images made before the blobs were read from ${dir} (counted on the source)`,
    );
  }
  if (comparison.unbalancedSource) {
    lines.push(
      `note: on the source, ${comparison.unbalancedSource} accounts' balances differ from their ledger sums (copied as they are)`,
    );
  }
  lines.push(comparison.equal ? "equal" : "DIFFERENT: the copy does not match its source");
  return lines.join("\n");
}

// ---- opening the two sides --------------------------------------------------------------------

/** Opens an endpoint for a copy: refuses a SQLite file a running server holds, and a missing source file. */
export async function openEndpoint(endpoint: Endpoint, role: "source" | "target"): Promise<Db> {
  if (endpoint.engine === "postgres") return await openPostgres(endpoint.url, { max: 4 });
  try {
    refuseWhileServing(endpoint.dataDir);
  } catch (error) {
    throw new CopyRefused((error as Error).message);
  }
  if (role === "source" && !existsSync(endpoint.file))
    throw new CopyRefused(`no database at ${endpoint.file}`);
  return openSqlite(endpoint.file);
}

/** A progress bar on a terminal (redrawn in place), plain lines per finished table otherwise. */
export function progressPrinter(stream: NodeJS.WriteStream = process.stderr): ProgressReport {
  const width = 30;
  return (table, copied, total) => {
    if (!stream.isTTY) {
      if (copied === total) stream.write(`${table}: ${copied}/${total} rows\n`);
      return;
    }
    const filled = total === 0 ? width : Math.round((copied / total) * width);
    stream.write(
      `\r${table.padEnd(20)} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${copied}/${total}`,
    );
    if (copied === total) stream.write("\n");
  };
}
