/** Migrations and transactions on real SQLite files in a temp dir. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrations as embedded } from "../embedded.ts";
import { startServer } from "../server.ts";
import { type Db, openDatabase, tx } from "./db.ts";
import {
  DatabaseTooNewError,
  type Migration,
  migrate,
  migrationStatus,
  parseMigrationFiles,
} from "./migrate.ts";

const root = mkdtempSync(join(tmpdir(), "ferry-migrate-"));
let counter = 0;
const opened: Db[] = [];

afterAll(() => {
  for (const db of opened) db.close();
  rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  counter += 1;
  return join(root, `d${counter}`);
}

function freshDb(): Db {
  const db = openDatabase(join(freshDir(), "ferry.db"));
  opened.push(db);
  return db;
}

function tables(db: Db): string[] {
  return db
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all()
    .map((r) => r.name);
}

function recorded(db: Db) {
  return db
    .query<{ version: number; name: string; applied_time: number }, []>(
      "SELECT version, name, applied_time FROM schema_migrations ORDER BY version",
    )
    .all();
}

describe("the migrations built into ferry", () => {
  test("apply to an empty database in order, are recorded, and a second run does nothing", () => {
    const db = freshDb();
    const before = Date.now();
    const applied = migrate(db, embedded);
    expect(applied).toEqual(embedded.map((m) => m.version));
    expect(applied[0]).toBe(1);

    const rows = recorded(db);
    expect(rows.map((r) => [r.version, r.name])).toEqual(embedded.map((m) => [m.version, m.name]));
    for (const row of rows) expect(row.applied_time).toBeGreaterThanOrEqual(before);
    for (const table of [
      "users",
      "sessions",
      "email_tokens",
      "settings",
      "error_logs",
      "permissions",
      "notices",
    ]) {
      expect(tables(db)).toContain(table);
    }

    expect(migrate(db, embedded)).toEqual([]);
    expect(recorded(db)).toEqual(rows);
    expect(migrationStatus(db, embedded).every((m) => m.appliedTime !== null)).toBe(true);
  });

  test("nodes that exist when 006 runs get a 15-minute window to pull before the node report rules bite; later ones none", () => {
    const db = freshDb();
    migrate(db, embedded.slice(0, 5));
    db.query(
      `INSERT INTO agents (id, name, type, ip, ctrl_port, zz_port, port, public_port, server_type, ws_path, api_token,
         reality_private_key, reality_public_key, reality_short_id, hy2_obfs_password, ss_server_key, create_time)
       VALUES ('old', 'old', 'v2ray', '203.0.113.1', 1, 2, 3, 4, 'ubuntu_x86', '/', 'token-old', '', '', '', '', '', 1)`,
    ).run();
    const before = Date.now();
    migrate(db, embedded);
    const after = Date.now();
    const windowOf = (id: string) =>
      db
        .query<{ admit_all_until: number }, [string]>("SELECT admit_all_until FROM agents WHERE id = ?")
        .get(id)?.admit_all_until ?? -1;
    // strftime('%s') has whole seconds.
    expect(windowOf("old")).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 900_000);
    expect(windowOf("old")).toBeLessThanOrEqual(after + 900_000);
    db.query(
      `INSERT INTO agents (id, name, type, ip, ctrl_port, zz_port, port, public_port, server_type, ws_path, api_token,
         reality_private_key, reality_public_key, reality_short_id, hy2_obfs_password, ss_server_key, create_time)
       VALUES ('new', 'new', 'v2ray', '203.0.113.2', 1, 2, 3, 4, 'ubuntu_x86', '/', 'token-new', '', '', '', '', '', 1)`,
    ).run();
    expect(windowOf("new")).toBe(0);
  });

  test("013 moves every user's balances into the balances table; users made later get theirs", () => {
    const db = freshDb();
    migrate(db, embedded.slice(0, 12));
    const insertUser = (id: string, traffic: number, spend: number, usage: number, day: string) =>
      db
        .query(
          `INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time, traffic, spend_traffic,
             daily_usage, daily_usage_day)
           VALUES (?1, ?1 || '@example.com', 'x', 'k' || ?1, 's' || ?1, 1, ?2, ?3, ?4, ?5)`,
        )
        .run(id, traffic, spend, usage, day);
    insertUser("a", 5 * 2 ** 30, 7, 3, "2026-11-27");
    insertUser("b", 0, 0, 0, "");
    db.query(
      `INSERT INTO traffic_records (user_id, type, desc, traffic_change, all_traffic, all_spend, day, update_time)
       VALUES ('a', 'buy', 'x', ?, ?, 0, '2026-11-27', 1)`,
    ).run(5 * 2 ** 30, 5 * 2 ** 30);
    migrate(db, embedded);
    const balances = () =>
      db
        .query(
          "SELECT user_id, traffic, spend_traffic, daily_usage, daily_usage_day FROM balances ORDER BY user_id",
        )
        .all();
    expect(balances()).toEqual([
      { user_id: "a", traffic: 5 * 2 ** 30, spend_traffic: 7, daily_usage: 3, daily_usage_day: "2026-11-27" },
      { user_id: "b", traffic: 0, spend_traffic: 0, daily_usage: 0, daily_usage_day: "" },
    ]);
    const userColumns = db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('users')").all();
    expect(userColumns.map((column) => column.name)).not.toContain("traffic");
    // The ledger still adds up to the balance, and a user made now has a balances row at once.
    expect(
      db.query("SELECT SUM(traffic_change) AS total FROM traffic_records WHERE user_id = 'a'").get(),
    ).toEqual({ total: 5 * 2 ** 30 });
    db.query(
      "INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time) VALUES ('c', 'c@example.com', 'x', 'kc', 'sc', 1)",
    ).run();
    expect(db.query("SELECT traffic FROM balances WHERE user_id = 'c'").get()).toEqual({ traffic: 0 });
    expect(() => db.query("UPDATE balances SET traffic = -1 WHERE user_id = 'c'").run()).toThrow();
    db.query("DELETE FROM users WHERE id = 'c'").run();
    expect(db.query("SELECT COUNT(*) AS n FROM balances WHERE user_id = 'c'").get()).toEqual({ n: 0 });
  });

  test("the database uses WAL and enforces foreign keys", () => {
    const db = freshDb();
    migrate(db, embedded);
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    expect(() =>
      db
        .query(
          "INSERT INTO sessions (token_hash, user_id, create_time, expire_time) VALUES ('t', 'nobody', 0, 0)",
        )
        .run(),
    ).toThrow();
  });
});

describe("parseMigrationFiles", () => {
  test("orders files by number whatever order they come in", () => {
    const parsed = parseMigrationFiles([
      { file: "003_c.sql", sql: "SELECT 3" },
      { file: "001_a.sql", sql: "SELECT 1" },
      { file: "002_b.sql", sql: "SELECT 2" },
    ]);
    expect(parsed.map((m) => [m.version, m.name])).toEqual([
      [1, "a"],
      [2, "b"],
      [3, "c"],
    ]);
  });

  test("refuses gaps, duplicates and badly named files", () => {
    expect(() =>
      parseMigrationFiles([
        { file: "001_a.sql", sql: "" },
        { file: "003_c.sql", sql: "" },
      ]),
    ).toThrow(/missing or duplicated/);
    expect(() =>
      parseMigrationFiles([
        { file: "001_a.sql", sql: "" },
        { file: "001_b.sql", sql: "" },
      ]),
    ).toThrow(/missing or duplicated/);
    for (const file of ["1_a.sql", "001-a.sql", "001_A.sql", "001_a.txt", "a_001.sql"]) {
      expect(() => parseMigrationFiles([{ file, sql: "" }])).toThrow(/001_name\.sql/);
    }
  });
});

describe("migrate", () => {
  const steps: Migration[] = [
    {
      version: 1,
      name: "create_items",
      sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL);",
    },
    { version: 2, name: "add_price", sql: "ALTER TABLE items ADD COLUMN price INTEGER NOT NULL DEFAULT 0;" },
    { version: 3, name: "seed_item", sql: "INSERT INTO items (title, price) VALUES ('first', 100);" },
  ];

  test("applies each pending step in order and only the pending ones", () => {
    const db = freshDb();
    expect(migrate(db, steps.slice(0, 1))).toEqual([1]);
    expect(migrationStatus(db, steps).map((m) => m.appliedTime === null)).toEqual([false, true, true]);
    expect(migrate(db, steps)).toEqual([2, 3]);
    expect(db.query<{ title: string; price: number }, []>("SELECT title, price FROM items").all()).toEqual([
      { title: "first", price: 100 },
    ]);
    expect(recorded(db).map((r) => `${r.version}_${r.name}`)).toEqual([
      "1_create_items",
      "2_add_price",
      "3_seed_item",
    ]);
  });

  test("a failing step leaves no partial schema or data and is not recorded; earlier steps stay", () => {
    const db = freshDb();
    const broken: Migration = {
      version: 2,
      name: "half_done",
      sql: `CREATE TABLE extra (id INTEGER PRIMARY KEY);
            INSERT INTO items (title) VALUES ('written before the error');
            ALTER TABLE items ADD COLUMN price INTEGER;
            CREATE TABLE broken (;`,
    };
    expect(() => migrate(db, [steps[0] as Migration, broken])).toThrow(/2_half_done/);
    expect(tables(db)).toEqual(["items", "schema_migrations"]);
    expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM items").get()?.n).toBe(0);
    const columns = db
      .query<{ name: string }, []>("PRAGMA table_info(items)")
      .all()
      .map((c) => c.name);
    expect(columns).toEqual(["id", "title"]);
    expect(recorded(db).map((r) => r.version)).toEqual([1]);
    expect(db.inTransaction).toBe(false);

    // Once fixed, the step applies normally.
    expect(migrate(db, steps)).toEqual([2, 3]);
  });

  test("a database newer than the build is refused before anything is touched", () => {
    const db = freshDb();
    migrate(db, steps);
    db.query(
      "INSERT INTO schema_migrations (version, name, applied_time) VALUES (7, 'from_the_future', 1)",
    ).run();
    const before = tables(db);
    let caught: unknown;
    try {
      migrate(db, [...steps, { version: 4, name: "would_run", sql: "CREATE TABLE later (x);" }]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DatabaseTooNewError);
    const error = caught as DatabaseTooNewError;
    expect(error.databaseVersion).toBe(7);
    expect(error.knownVersion).toBe(4);
    expect(error.message).toContain("7");
    expect(error.message).toContain("newer");
    expect(tables(db)).toEqual(before);
  });
});

describe("startServer", () => {
  test("refuses a data directory whose database is newer than this build, with a clear error", () => {
    const dataDir = freshDir();
    const db = openDatabase(join(dataDir, "ferry.db"));
    migrate(db, embedded);
    const newer = (embedded.at(-1)?.version ?? 0) + 1;
    db.query("INSERT INTO schema_migrations (version, name, applied_time) VALUES (?, 'future', 1)").run(
      newer,
    );
    db.close();

    let caught: unknown;
    try {
      const server = startServer({ dataDir, port: 0 });
      void server.stop();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DatabaseTooNewError);
    expect((caught as Error).message).toContain(`version ${newer}`);
    expect((caught as Error).message).toMatch(/newer ferry|backup/);

    // The refused start released the file: it opens and still holds the future version.
    const again = openDatabase(join(dataDir, "ferry.db"));
    opened.push(again);
    expect(recorded(again).at(-1)?.version).toBe(newer);
  });

  test("migrates a new data directory on start and keeps data across restarts", async () => {
    const dataDir = freshDir();
    const first = startServer({ dataDir, port: 0 });
    first.context.db
      .query("INSERT INTO settings (key, value, update_time) VALUES ('notice_title', '\"kept\"', 1)")
      .run();
    await first.stop();
    const second = startServer({ dataDir, port: 0 });
    try {
      expect(second.context.settings.get("notice_title")).toBe("kept");
      expect(recorded(second.context.db).map((r) => r.version)).toEqual(embedded.map((m) => m.version));
    } finally {
      await second.stop();
    }
  });
});

describe("tx", () => {
  test("a throw rolls back everything written inside it, nested calls included", () => {
    const db = freshDb();
    db.exec("CREATE TABLE t (x INTEGER)");
    expect(() =>
      tx(db, () => {
        db.query("INSERT INTO t VALUES (1)").run();
        tx(db, () => db.query("INSERT INTO t VALUES (2)").run());
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM t").get()?.n).toBe(0);
    expect(db.inTransaction).toBe(false);

    expect(tx(db, () => db.query("INSERT INTO t VALUES (3)").run().changes)).toBe(1);
    expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM t").get()?.n).toBe(1);
  });
});
