import { constants } from "bun:sqlite";
import { type Db, SqliteDb } from "./db.ts";

/**
 * Reads memoized until the database changes. SQLite's data version (SQLITE_FCNTL_DATA_VERSION)
 * moves on every commit by this connection at once, and on another process's commit (the CLI)
 * as soon as this connection next reads; `refreshDataVersion` forces that read at the start of
 * every envelope request (at most every 10 ms), so this process's writes show at once and other
 * processes' writes within 10 ms.
 * Entries also expire after maxAgeMs as a backstop for code paths that skip the refresh.
 * Cached values are frozen: they are shared by every request until the next change.
 * Memory (issue 31): expired entries are swept out whenever the map has doubled since the last
 * sweep, so it holds about the keys read within maxAgeMs, not every key read since the last commit
 * (up to maxEntries users or subscription bodies on a replica that reads for minutes without writing).
 */
export class ReadCache<V extends object> {
  private readonly entries = new Map<string, { value: V | null; at: number }>();
  private version = -1;
  private sweepAt = SWEEP_FLOOR;

  constructor(
    private readonly db: Db,
    private readonly maxEntries = 50_000,
    private readonly maxAgeMs = 1_000,
  ) {}

  /** A hit is answered as it is, not as a promise: the hot paths await it without a tick more. */
  get(key: string, load: () => Promise<V | null>, now = Date.now()): V | null | Promise<V | null> {
    // Inside a write transaction the data version lags the uncommitted rows: read them directly.
    if (this.db.inTransaction) return load();
    this.syncVersion();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.maxAgeMs) return hit.value;
    return this.fill(key, load, now);
  }

  private async fill(key: string, load: () => Promise<V | null>, now: number): Promise<V | null> {
    const version = this.version;
    const value = await load();
    if (value) Object.freeze(value);
    // The load itself may have revealed another process's commit, and other requests may have
    // committed while it awaited; keep only what is current.
    this.syncVersion();
    if (version !== this.version) return value;
    if (this.entries.size >= this.sweepAt) this.sweep(now);
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, at: now });
    return value;
  }

  /** How many entries the cache holds, expired ones not yet swept included. */
  get size(): number {
    return this.entries.size;
  }

  /** Drops the entries too old to be answered; the next sweep waits until the map has doubled (O(1) per fill, amortized). */
  private sweep(now: number) {
    for (const [key, entry] of this.entries) if (now - entry.at >= this.maxAgeMs) this.entries.delete(key);
    this.sweepAt = Math.max(SWEEP_FLOOR, this.entries.size * 2);
  }

  private syncVersion() {
    const version = dataVersion(this.db);
    if (version === this.version) return;
    this.version = version;
    this.entries.clear();
  }
}

/** Below this many entries the cache is never swept. */
const SWEEP_FLOOR = 1_000;

const versionBuffer = new Uint32Array(2);
/** The data version last read from each connection, and its statement count then. */
const versionsRead = new WeakMap<SqliteDb, { statements: number; version: number }>();

/**
 * SQLite: the file's data version (moves on every commit, this process's or another's).
 * PostgreSQL: this process's count of writes; other processes' writes show after maxAgeMs.
 * SQLite moves the version only inside a statement of this connection (its own commit, or a read
 * that finds another's), so while none ran since the last read the version is the one read then,
 * and the file control (a tenth of a µs, several times a request) is skipped (issue 31).
 */
export function dataVersion(db: Db): number {
  if (!(db instanceof SqliteDb)) return db.writeCount;
  const known = versionsRead.get(db);
  if (known?.statements === db.statements) return known.version;
  db.raw.fileControl(constants.SQLITE_FCNTL_DATA_VERSION, versionBuffer);
  const version = versionBuffer[0] ?? 0;
  versionsRead.set(db, { statements: db.statements, version });
  return version;
}

/** Another process's commit is visible to requests at most this long after it lands. */
export const CROSS_PROCESS_STALENESS_MS = 10;
const probes = new WeakMap<Db, { statement: { get(): unknown }; at: number }>();

/**
 * Starts a read so that commits by other processes (the CLI) move the data version. Throttled
 * to one probe per CROSS_PROCESS_STALENESS_MS: under load the probe would otherwise cost as much
 * as the lookups the cache saves.
 */
export function refreshDataVersion(db: Db, now = Date.now()): void {
  if (!(db instanceof SqliteDb)) return;
  let probe = probes.get(db);
  if (!probe) {
    probe = { statement: db.raw.query("SELECT 1 FROM sqlite_schema LIMIT 1"), at: 0 };
    probes.set(db, probe);
  }
  if (now - probe.at < CROSS_PROCESS_STALENESS_MS) return;
  probe.at = now;
  db.statements += 1;
  probe.statement.get();
}
