import { Database } from "bun:sqlite";
import { AsyncLocalStorage } from "node:async_hooks";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { SQL } from "bun";
import { noteCommit } from "./write-health.ts";

/**
 * The one data interface. Services call only this: `get` (first row or null), `all`, `run`
 * (changes), `exec` (several statements, no parameters: migrations) and `tx`. SQL is written with
 * `?` placeholders; the PostgreSQL adapter numbers them. Engine-specific SQL lives in the named
 * helpers at the end of this file (`leastSql` is the pattern).
 */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;
export type Engine = "sqlite" | "postgres";

export interface RunResult {
  changes: number;
}

export interface Db {
  readonly engine: Engine;
  /** What start-up prints: the file, or the URL with its password masked. */
  readonly describe: string;
  get<T = Record<string, unknown>>(sql: string, ...params: SqlValue[]): Promise<T | null>;
  all<T = Record<string, unknown>>(sql: string, ...params: SqlValue[]): Promise<T[]>;
  run(sql: string, ...params: SqlValue[]): Promise<RunResult>;
  /**
   * One statement run once per parameter row, in order (changes summed): on SQLite a prepared loop
   * with no await between rows, for the per-row writes of a big report.
   */
  runMany(sql: string, rows: readonly SqlValue[][]): Promise<RunResult>;
  exec(sql: string): Promise<void>;
  /**
   * Runs fn in one transaction; any throw rolls it back. Calls inside fn (through this Db or any
   * other reference to it) join the transaction; so does a nested tx.
   */
  tx<T>(fn: () => Promise<T>): Promise<T>;
  /** True while the calling code runs inside this database's transaction. */
  readonly inTransaction: boolean;
  /** Writes this process has made (statements outside a transaction and commits): read caches key on it. */
  readonly writeCount: number;
  close(): Promise<void>;
}

/** The one transaction helper (see Db.tx). */
export function tx<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  return db.tx(fn);
}

interface TxScope {
  owner: object;
  done: boolean;
  /** What onRollback registered: undone, newest first, when this attempt rolls back. */
  undo: (() => void)[];
  /** PostgreSQL: the transaction's connection. */
  sql?: SQL;
}

/** Which transaction the running code is in, carried across awaits. */
const scope = new AsyncLocalStorage<TxScope>();

function activeScope(owner: object): TxScope | null {
  const current = scope.getStore();
  return current && current.owner === owner && !current.done ? current : null;
}

/**
 * Inside a transaction: `undo` runs if this attempt rolls back, including before PostgreSQL runs
 * the transaction again after a serialization failure. For what a transaction does outside the
 * database (a rate limiter's try, a renamed file), so that a retried body finds it as it was.
 * Outside a transaction it does nothing: what was done stands.
 */
export function onRollback(db: Db, undo: () => void): void {
  const current = scope.getStore();
  if (current && current.owner === db && !current.done) current.undo.push(undo);
}

function rolledBack(current: TxScope): void {
  for (const undo of current.undo.reverse()) undo();
  current.undo = [];
}

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
export function openSqliteFile(file: string): Database {
  if (file !== ":memory:") ownerOnly(file);
  const db = new Database(file, { create: true, strict: true });
  // First: the journal-mode pragma may meet another process's lock (its WAL recovery on opening,
  // its checkpoint on closing), and only a busy timeout already set makes it wait rather than fail
  // at once with "database is locked" (several CLI commands started together did).
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  return db;
}

/**
 * SQLite behind the async interface. The driver stays synchronous underneath (a prepared point
 * query costs ~1.6 µs). Transactions are BEGIN IMMEDIATE; because the body awaits, other requests
 * could otherwise run statements on this one connection in the middle of it, so every statement
 * outside the transaction waits until it ends.
 */
export class SqliteDb implements Db {
  readonly engine = "sqlite" as const;
  readonly describe: string;
  writeCount = 0;
  /**
   * Statements this connection ran (transaction control included): its data version can move only
   * when one runs, so read-cache.ts reads the version again only after this changes.
   */
  statements = 0;
  /** Resolves when the transaction in progress ends; null when none is. */
  private busy: Promise<void> | null = null;

  constructor(
    readonly raw: Database,
    readonly file: string,
  ) {
    this.describe = `SQLite ${file}`;
  }

  get inTransaction(): boolean {
    // Hot paths ask on every read: with no transaction open, skip the async-context lookup.
    return this.busy !== null && activeScope(this) !== null;
  }

  private async waitTurn(): Promise<void> {
    while (this.busy && !activeScope(this)) await this.busy;
  }

  async get<T>(sql: string, ...params: SqlValue[]): Promise<T | null> {
    if (this.busy && !activeScope(this)) await this.waitTurn();
    this.statements += 1;
    return (this.raw.query(sql).get(...(params as never[])) as T | null) ?? null;
  }

  async all<T>(sql: string, ...params: SqlValue[]): Promise<T[]> {
    if (this.busy && !activeScope(this)) await this.waitTurn();
    this.statements += 1;
    return this.raw.query(sql).all(...(params as never[])) as T[];
  }

  async run(sql: string, ...params: SqlValue[]): Promise<RunResult> {
    if (this.busy && !activeScope(this)) await this.waitTurn();
    this.writeCount += 1;
    this.statements += 1;
    return { changes: this.raw.query(sql).run(...(params as never[])).changes };
  }

  async runMany(sql: string, rows: readonly SqlValue[][]): Promise<RunResult> {
    if (this.busy && !activeScope(this)) await this.waitTurn();
    this.writeCount += 1;
    this.statements += 1;
    const statement = this.raw.query(sql);
    let changes = 0;
    for (const row of rows) changes += statement.run(...(row as never[])).changes;
    return { changes };
  }

  async exec(sql: string): Promise<void> {
    if (this.busy && !activeScope(this)) await this.waitTurn();
    this.statements += 1;
    this.raw.exec(sql);
  }

  async tx<T>(fn: () => Promise<T>): Promise<T> {
    if (this.busy && activeScope(this)) return fn();
    // The check and the claim must sit in one synchronous step, or two waiters both get in.
    while (this.busy) await this.busy;
    let release = () => {};
    this.busy = new Promise<void>((resolve) => {
      release = resolve;
    });
    const current: TxScope = { owner: this, done: false, undo: [] };
    try {
      this.statements += 1;
      this.raw.exec("BEGIN IMMEDIATE");
      try {
        const result = await scope.run(current, fn);
        this.statements += 1;
        this.raw.exec("COMMIT");
        this.writeCount += 1;
        noteCommit(this);
        return result;
      } catch (error) {
        this.statements += 1;
        if (this.raw.inTransaction) this.raw.exec("ROLLBACK");
        rolledBack(current);
        throw error;
      }
    } finally {
      current.done = true;
      this.busy = null;
      release();
    }
  }

  async close(): Promise<void> {
    await this.waitTurn();
    this.raw.close();
  }
}

export function openSqlite(file: string): SqliteDb {
  return new SqliteDb(openSqliteFile(file), file);
}

/** PostgreSQL error codes a transaction is retried on: serialization failure, deadlock. */
const RETRYABLE = new Set(["40001", "40P01"]);
const MAX_TX_ATTEMPTS = 12;
const READ_ONLY = /^\s*(SELECT|WITH)\b/i;
/** int8 (20) and numeric (1700: SUM and AVG of integers) come back as strings; Ferry's values fit a double. */
const NUMERIC_OIDS = new Set([20, 1700]);

/** `?` → `$1…$n` and `?N` → `$N`, leaving quoted strings and identifiers alone. */
export function numberPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i += 1) {
    const ch = sql[i] as string;
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === "?") {
      const digits = /^\d+/.exec(sql.slice(i + 1))?.[0];
      if (digits) {
        out += `$${digits}`;
        i += digits.length;
      } else {
        n += 1;
        out += `$${n}`;
      }
    } else {
      out += ch;
    }
  }
  return out;
}

const translated = new Map<string, string>();
function pgText(sql: string): string {
  let text = translated.get(sql);
  if (text === undefined) {
    text = numberPlaceholders(sql);
    if (translated.size < 5_000) translated.set(sql, text);
  }
  return text;
}

type PgResult = Record<string, unknown>[] & {
  count?: number | null;
  affectedRows?: number | null;
  columns?: { name: string; type: number }[];
};

function numericColumns(result: PgResult): string[] {
  return (result.columns ?? [])
    .filter((column) => NUMERIC_OIDS.has(column.type))
    .map((column) => column.name);
}

function normalizeRows<T>(result: PgResult): T[] {
  const names = numericColumns(result);
  if (names.length === 0) return result as unknown as T[];
  for (const row of result) {
    for (const name of names) {
      const value = row[name];
      if (typeof value === "string" || typeof value === "bigint") row[name] = Number(value);
    }
  }
  return result as unknown as T[];
}

/**
 * Parameters as PostgreSQL takes them: booleans as 1/0, and a NUL in a string as U+FFFD, the
 * replacement character (PostgreSQL text cannot hold NUL and refuses the statement, where SQLite
 * stores it; a key with a NUL in it then matches nothing on either engine).
 */
function pgParams(params: SqlValue[]): unknown[] {
  return params.map((value) => {
    if (typeof value === "boolean") return value ? 1 : 0;
    if (typeof value === "string" && value.includes("\0")) return value.replaceAll("\0", "\uFFFD");
    return value;
  });
}

/** The URL with its password replaced by ***. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/**
 * PostgreSQL through Bun's SQL client. A transaction is SERIALIZABLE: PostgreSQL then guarantees
 * the outcome of some serial order, as SQLite's one writer does, and a transaction that would
 * break it fails with 40001 (or 40P01 on a deadlock) and is run again from the start.
 */
export class PostgresDb implements Db {
  readonly engine = "postgres" as const;
  readonly describe: string;
  writeCount = 0;
  /** Transactions run again after a serialization failure or a deadlock, since the pool opened. */
  retriedTransactions = 0;
  /** Transactions in progress on this pool (inTransaction skips the context lookup at 0). */
  private openTransactions = 0;

  constructor(
    readonly sql: SQL,
    readonly url: string,
  ) {
    this.describe = `PostgreSQL ${maskUrl(url)}`;
  }

  get inTransaction(): boolean {
    return this.openTransactions > 0 && activeScope(this) !== null;
  }

  private client(): SQL {
    return (this.openTransactions > 0 ? activeScope(this)?.sql : undefined) ?? this.sql;
  }

  async query(text: string, params: SqlValue[]): Promise<PgResult> {
    const inTx = this.openTransactions > 0 ? activeScope(this) : null;
    let result: PgResult;
    try {
      result = (await (inTx?.sql ?? this.sql).unsafe(pgText(text), pgParams(params))) as PgResult;
    } catch (error) {
      throw withCallerStack(error);
    }
    if (!inTx) {
      if (!READ_ONLY.test(text)) this.writeCount += 1;
      // The database answered: /healthz stops reporting it unreachable.
      noteCommit(this);
    }
    return result;
  }

  async get<T>(sql: string, ...params: SqlValue[]): Promise<T | null> {
    return normalizeRows<T>(await this.query(sql, params))[0] ?? null;
  }

  async all<T>(sql: string, ...params: SqlValue[]): Promise<T[]> {
    return normalizeRows<T>(await this.query(sql, params));
  }

  async run(sql: string, ...params: SqlValue[]): Promise<RunResult> {
    const result = await this.query(sql, params);
    return { changes: Number(result.affectedRows ?? result.count ?? 0) };
  }

  async runMany(sql: string, rows: readonly SqlValue[][]): Promise<RunResult> {
    let changes = 0;
    for (const row of rows) changes += (await this.run(sql, ...row)).changes;
    return { changes };
  }

  async exec(sql: string): Promise<void> {
    if (!this.inTransaction) this.writeCount += 1;
    try {
      await this.client().unsafe(sql).simple();
    } catch (error) {
      throw withCallerStack(error);
    }
  }

  async tx<T>(fn: () => Promise<T>): Promise<T> {
    if (activeScope(this)) return fn();
    this.openTransactions += 1;
    try {
      return await this.attempts(fn);
    } finally {
      this.openTransactions -= 1;
    }
  }

  private async attempts<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const current: TxScope = { owner: this, done: false, undo: [] };
      try {
        const result = await this.sql.begin("ISOLATION LEVEL SERIALIZABLE", async (connection) => {
          current.sql = connection as unknown as SQL;
          try {
            return await scope.run(current, fn);
          } finally {
            current.done = true;
          }
        });
        this.writeCount += 1;
        noteCommit(this);
        return result as T;
      } catch (error) {
        rolledBack(current);
        if (attempt >= MAX_TX_ATTEMPTS || !RETRYABLE.has(pgCode(error) ?? "")) throw error;
        this.retriedTransactions += 1;
        await Bun.sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
      }
    }
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 5 });
  }
}

/**
 * A driver error with the stack of the code that awaited the query: Bun's PostgreSQL errors come
 * from native code with no frames, and the error log (and so the operator) needs them.
 */
function withCallerStack(error: unknown): unknown {
  if (error instanceof Error && !error.stack?.includes("\n")) Error.captureStackTrace(error);
  return error;
}

/** The SQLSTATE of a PostgreSQL error, if it is one. */
export function pgCode(error: unknown): string | undefined {
  const code = (error as { errno?: unknown; code?: unknown } | null)?.errno;
  if (typeof code === "string") return code;
  const other = (error as { code?: unknown } | null)?.code;
  return typeof other === "string" && /^[0-9A-Z]{5}$/.test(other) ? other : undefined;
}

export class DatabaseUrlError extends Error {}

/** Checks a postgres:// URL before any connection is tried. */
export function parseDatabaseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlError(`--database-url is not a URL: ${maskUrl(url)}`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new DatabaseUrlError(`--database-url must start with postgres:// (got ${parsed.protocol}//)`);
  }
  if (!parsed.hostname || parsed.pathname.length <= 1) {
    throw new DatabaseUrlError(`--database-url needs a host and a database name: ${maskUrl(url)}`);
  }
  return parsed;
}

/** Connects to PostgreSQL and proves the connection with one query; throws one clear line when it cannot. */
export async function openPostgres(url: string, options: { max?: number } = {}): Promise<PostgresDb> {
  const parsed = parseDatabaseUrl(url);
  const sql = new SQL({ url, max: options.max ?? 10, idleTimeout: 30, connectionTimeout: 10 });
  const db = new PostgresDb(sql, url);
  try {
    await db.get("SELECT 1 AS one");
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {});
    throw new DatabaseUrlError(`cannot connect to ${maskUrl(url)}: ${connectFailure(error, parsed)}`);
  }
  return db;
}

/** Why a first connection failed, in words an operator can act on (Bun says only "Failed to connect" when refused). */
function connectFailure(error: unknown, url: URL): string {
  if ((error as { code?: unknown } | null)?.code === "ERR_POSTGRES_CONNECTION_REFUSED")
    return `nothing accepts connections at ${url.hostname}:${url.port || "5432"} (is PostgreSQL running there?)`;
  return (error as Error).message;
}

/** Opens the database an operator chose: PostgreSQL when a URL is given, else the SQLite file. */
export async function openDatabase(target: { url?: string; file: string }): Promise<Db> {
  if (target.url) return openPostgres(target.url);
  return openSqlite(target.file);
}

// ---- engine-specific SQL: the few named helpers ------------------------------------------

/** SQL for the smaller of two values: SQLite's two-argument MIN, PostgreSQL's LEAST. */
export const leastSql = (db: Db, a: string, b: string) =>
  db.engine === "postgres" ? `LEAST(${a}, ${b})` : `MIN(${a}, ${b})`;

/** SQL for the larger of two values: SQLite's two-argument MAX, PostgreSQL's GREATEST. */
export const greatestSql = (db: Db, a: string, b: string) =>
  db.engine === "postgres" ? `GREATEST(${a}, ${b})` : `MAX(${a}, ${b})`;

/**
 * The values of a JSON array (a parameter such as "?2", or a column) as a subquery with one column,
 * `value`, of the given SQL type: `x IN ${jsonValuesSql(db, "?", "bigint")}`. The text goes
 * through ::text first: a parameter PostgreSQL types as jsonb is JSON-encoded again by Bun's
 * client, and "[1,2]" would arrive as a JSON string, not an array.
 */
export const jsonValuesSql = (db: Db, json: string, type: "bigint" | "text") =>
  db.engine === "postgres"
    ? `(SELECT j.value::${type} AS value FROM jsonb_array_elements_text(${json}::text::jsonb) AS j(value))`
    : `(SELECT value FROM json_each(${json}))`;

/** Case-insensitive LIKE for ASCII, as SQLite's LIKE is. */
export const likeSql = (db: Db) => (db.engine === "postgres" ? "ILIKE" : "LIKE");

/** Whether an error is a unique-key violation on this column (SQLite: table.column; PostgreSQL: 23505). */
export function isUniqueViolation(error: unknown, table: string, column: string): boolean {
  const e = error as { message?: string; detail?: string; constraint?: string } | null;
  if (pgCode(error) === "23505") {
    return [e?.constraint, e?.detail, e?.message].some((text) => text?.includes(column));
  }
  return String(e?.message).includes(`UNIQUE constraint failed: ${table}.${column}`);
}

/**
 * A row's place in its table, to break ties in ORDER BY: SQLite's rowid (insertion order);
 * PostgreSQL has no such column, and its ctid is the row's physical place (insertion order until
 * the row is updated). Only rows with equal sort keys (the same millisecond) can differ.
 */
export const rowOrderSql = (db: Db, alias = "") =>
  db.engine === "postgres" ? `${alias ? `${alias}.` : ""}ctid` : `${alias ? `${alias}.` : ""}rowid`;

/**
 * `column = ?` for the keys SQLite compares with COLLATE NOCASE (users.email, coupons.code,
 * channels.code); PostgreSQL's twins index lower(column) instead.
 */
export const nocaseEqualsSql = (db: Db, column: string, param = "?") =>
  db.engine === "postgres" ? `lower(${column}) = lower(${param})` : `${column} = ${param}`;

/**
 * A row's address for updating it again in the same transaction: SQLite's rowid (`rowAddressSql`
 * to select it, `rowAddressIsSql` to match it), PostgreSQL's ctid.
 */
export const rowAddressSql = (db: Db, alias: string) =>
  db.engine === "postgres" ? `${alias}.ctid::text` : `${alias}.rowid`;
export const rowAddressIsSql = (db: Db, param = "?") =>
  db.engine === "postgres" ? `ctid = ${param}::tid` : `rowid = ${param}`;

/**
 * The named columns of a table alias as one JSON object in TEXT, `{"column": value, …}`: SQLite's
 * json_object, PostgreSQL's json_build_object (cast to text, or Bun's client hands back an object).
 */
export const jsonObjectSql = (db: Db, alias: string, columns: readonly string[]) => {
  const pairs = columns.map((column) => `'${column}', ${alias}."${column}"`).join(", ");
  return db.engine === "postgres" ? `json_build_object(${pairs})::text` : `json_object(${pairs})`;
};

/**
 * PostgreSQL only: a JS array as one parameter, for set-based writes that pass a column per array
 * (`FROM unnest(?::text[], ?::bigint[]) AS v(user_id, amount)`): one statement for many rows
 * instead of a round trip per row (node reports, charge-sets.ts). SQLite binds no arrays; its
 * callers keep their prepared per-row statements, which cost microseconds there.
 */
export function pgArray(db: Db, values: readonly (string | number | null)[]): SqlValue {
  if (db.engine !== "postgres") throw new Error("array parameters are for PostgreSQL only");
  // Bun's client quotes every element in JS, a third of the client's time for a 10,000-user
  // report (issue 31). Numbers and plain words need no quoting: their literal is one join (the
  // SQL casts the parameter, `?::bigint[]`, so PostgreSQL reads it as the array).
  if (values.every(isPlainArrayElement)) return `{${values.join(",")}}`;
  return values as unknown as SqlValue;
}

/** An element an array literal may hold unquoted: a finite number, or a word of plain characters that is not NULL. */
const isPlainArrayElement = (value: string | number | null) =>
  typeof value === "number"
    ? Number.isFinite(value)
    : typeof value === "string" && /^[0-9A-Za-z_.:-]+$/.test(value) && value.toUpperCase() !== "NULL";

/**
 * ` FOR UPDATE` on PostgreSQL, to end a SELECT of a row a transaction decides on: a concurrent
 * transaction waits for it and then retries on what it wrote, instead of deciding on the same old
 * row (a check outside the database, such as a rate limit, cannot wait for a serialization
 * failure). SQLite's transactions already run one at a time.
 */
export const forUpdateSql = (db: Db) => (db.engine === "postgres" && db.inTransaction ? " FOR UPDATE" : "");

/**
 * Inside a transaction: waits until no other transaction, in any process, holds the lock of this
 * name, then holds it until this one ends (several replicas on one PostgreSQL; issue 28).
 * PostgreSQL: a transaction-scoped advisory lock on the name's hash. SQLite: nothing, its
 * transactions (BEGIN IMMEDIATE) already run one at a time. On PostgreSQL the transaction's
 * snapshot may predate the wait; SERIALIZABLE then runs it again if what it read has changed.
 */
export async function lockForTransaction(db: Db, name: string): Promise<void> {
  if (db.engine !== "postgres") return;
  if (!db.inTransaction) throw new Error(`lockForTransaction(${name}) outside a transaction`);
  await db.get("SELECT pg_advisory_xact_lock(hashtext(?::text)) AS locked", name);
}

/**
 * The database's clock as epoch milliseconds, in SQL: leases and replicas' heartbeats are stamped
 * and compared with one clock, whatever each replica's own says. Stable within one statement
 * (SQLite's 'now' is fixed per statement; PostgreSQL's statement_timestamp()).
 */
export const nowMsSql = (engine: Engine) =>
  engine === "postgres"
    ? "CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS BIGINT)"
    : "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";

/**
 * Runs fn while this process holds PostgreSQL's session-level advisory lock `key`, on a connection
 * reserved for it, so that of several processes one runs fn at a time and the others wait. The
 * lock is taken before any transaction of fn starts, so each of them sees what the previous holder
 * committed (a lock taken inside a SERIALIZABLE transaction comes after its snapshot). On SQLite fn
 * just runs: its writers already take turns.
 */
export async function withAdvisoryLock<T>(db: Db, key: number, fn: () => Promise<T>): Promise<T> {
  if (!(db instanceof PostgresDb)) return await fn();
  if (!Number.isSafeInteger(key)) throw new Error(`advisory lock key must be an integer: ${key}`);
  const connection = await db.sql.reserve();
  let unlocked = false;
  try {
    await connection.unsafe(`SELECT pg_advisory_lock(${key})`);
    try {
      return await fn();
    } finally {
      unlocked = await connection.unsafe(`SELECT pg_advisory_unlock(${key})`).then(
        () => true,
        () => false,
      );
    }
  } finally {
    // A connection that may still hold the lock is closed, never handed back to the pool.
    await (unlocked ? connection.release() : connection.close());
  }
}

const turnQueues = new WeakMap<Db, Map<number, Promise<unknown>>>();

/**
 * Runs fn when no other caller of the same key runs it, in this process or in any replica on the
 * same PostgreSQL: here one after another (so at most one connection per process waits for the
 * lock), across processes under the advisory lock `key` (withAdvisoryLock). For transactions that
 * read many rows and write rows the others read (a node report): under SERIALIZABLE two of them at
 * once fail each other once their predicate locks cover whole tables, and retried they fail again.
 * On SQLite fn just runs: its writers already take turns.
 */
export async function inTurn<T>(db: Db, key: number, fn: () => Promise<T>): Promise<T> {
  if (!(db instanceof PostgresDb)) return await fn();
  const queues = turnQueues.get(db) ?? new Map<number, Promise<unknown>>();
  turnQueues.set(db, queues);
  const turn = (queues.get(key) ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => withAdvisoryLock(db, key, fn));
  queues.set(key, turn);
  try {
    return await turn;
  } finally {
    if (queues.get(key) === turn) queues.delete(key);
  }
}

/**
 * A list parameter as a subquery of its values (column `value`), bound with listParam: on PostgreSQL
 * an array through unnest, whose length the planner knows (it guesses 100 rows for a JSON text, and
 * then joins 10,000 users one index probe at a time); on SQLite json_each, as jsonValuesSql.
 */
export const listValuesSql = (db: Db, param: string, type: "bigint" | "text") =>
  db.engine === "postgres" ? `(SELECT unnest(${param}::${type}[]) AS value)` : jsonValuesSql(db, param, type);

/** The value to bind for listValuesSql: an array on PostgreSQL, JSON text on SQLite. */
export const listParam = (db: Db, values: readonly (string | number)[]): SqlValue =>
  db.engine === "postgres" ? pgArray(db, values) : JSON.stringify(values);
