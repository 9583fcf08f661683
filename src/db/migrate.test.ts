/** Migrations and transactions on real SQLite files in a temp dir. */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { createTestDatabase, type TestDatabase, testClusterUrl } from "../../tests/pg.ts";
import { migrations as embedded } from "../embedded.ts";
import { MB } from "../lib/traffic.ts";
import { movedSql } from "../modules/traffic/service.ts";
import { pidFilePath } from "../ops/pid-file.ts";
import { type RunningServer, startServer } from "../server.ts";
import { type Db, openPostgres, openSqlite, tx } from "./db.ts";
import {
  DatabaseTooNewError,
  MIGRATION_LOCK,
  type Migration,
  migrate,
  migrationStatus,
  parseMigrationFiles,
} from "./migrate.ts";

const root = mkdtempSync(join(tmpdir(), "ferry-migrate-"));
let counter = 0;
const opened: Db[] = [];

afterAll(async () => {
  for (const db of opened) await db.close();
  rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  counter += 1;
  return join(root, `d${counter}`);
}

function freshDb(): Db {
  const db = openSqlite(join(freshDir(), "ferry.db"));
  opened.push(db);
  return db;
}

async function tables(db: Db): Promise<string[]> {
  return (
    await db.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
  ).map((r) => r.name);
}

async function recorded(db: Db) {
  return await db.all<{ version: number; name: string; applied_time: number }>(
    "SELECT version, name, applied_time FROM schema_migrations ORDER BY version",
  );
}

describe("the migrations built into ferry", () => {
  test("apply to an empty database in order, are recorded, and a second run does nothing", async () => {
    const db = freshDb();
    const before = Date.now();
    const applied = await migrate(db, embedded);
    expect(applied).toEqual(embedded.map((m) => m.version));
    expect(applied[0]).toBe(1);

    const rows = await recorded(db);
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
      expect(await tables(db)).toContain(table);
    }

    expect(await migrate(db, embedded)).toEqual([]);
    expect(await recorded(db)).toEqual(rows);
    expect((await migrationStatus(db, embedded)).every((m) => m.appliedTime !== null)).toBe(true);
  });

  test("nodes that exist when 006 runs get a 15-minute window to pull before the node report rules bite; later ones none", async () => {
    const db = freshDb();
    await migrate(db, embedded.slice(0, 5));
    await db.run(`INSERT INTO agents (id, name, type, ip, ctrl_port, zz_port, port, public_port, server_type, ws_path, api_token,
         reality_private_key, reality_public_key, reality_short_id, hy2_obfs_password, ss_server_key, create_time)
       VALUES ('old', 'old', 'v2ray', '203.0.113.1', 1, 2, 3, 4, 'ubuntu_x86', '/', 'token-old', '', '', '', '', '', 1)`);
    const before = Date.now();
    await migrate(db, embedded);
    const after = Date.now();
    const windowOf = async (id: string) =>
      (await db.get<{ admit_all_until: number }>("SELECT admit_all_until FROM agents WHERE id = ?", id))
        ?.admit_all_until ?? -1;
    // strftime('%s') has whole seconds.
    expect(await windowOf("old")).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 900_000);
    expect(await windowOf("old")).toBeLessThanOrEqual(after + 900_000);
    await db.run(`INSERT INTO agents (id, name, type, ip, ctrl_port, zz_port, port, public_port, server_type, ws_path, api_token,
         reality_private_key, reality_public_key, reality_short_id, hy2_obfs_password, ss_server_key, create_time)
       VALUES ('new', 'new', 'v2ray', '203.0.113.2', 1, 2, 3, 4, 'ubuntu_x86', '/', 'token-new', '', '', '', '', '', 1)`);
    expect(await windowOf("new")).toBe(0);
  });

  test("013 moves every user's balances into the balances table; users made later get theirs", async () => {
    const db = freshDb();
    await migrate(db, embedded.slice(0, 12));
    const insertUser = async (id: string, traffic: number, spend: number, usage: number, day: string) =>
      await db.run(
        `INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time, traffic, spend_traffic,
             daily_usage, daily_usage_day)
           VALUES (?1, ?1 || '@example.com', 'x', 'k' || ?1, 's' || ?1, 1, ?2, ?3, ?4, ?5)`,
        id,
        traffic,
        spend,
        usage,
        day,
      );
    await insertUser("a", 5 * 2 ** 30, 7, 3, "2026-11-27");
    await insertUser("b", 0, 0, 0, "");
    await db.run(
      `INSERT INTO traffic_records (user_id, type, "desc", traffic_change, all_traffic, all_spend, day, update_time)
       VALUES ('a', 'buy', 'x', ?, ?, 0, '2026-11-27', 1)`,
      5 * 2 ** 30,
      5 * 2 ** 30,
    );
    await migrate(db, embedded);
    const balances = async () =>
      await db.all(
        "SELECT user_id, traffic, spend_traffic, daily_usage, daily_usage_day FROM balances ORDER BY user_id",
      );
    expect(await balances()).toEqual([
      { user_id: "a", traffic: 5 * 2 ** 30, spend_traffic: 7, daily_usage: 3, daily_usage_day: "2026-11-27" },
      { user_id: "b", traffic: 0, spend_traffic: 0, daily_usage: 0, daily_usage_day: "" },
    ]);
    const userColumns = await db.all<{ name: string }>("SELECT name FROM pragma_table_info('users')");
    expect(userColumns.map((column) => column.name)).not.toContain("traffic");
    // The ledger still adds up to the balance, and a user made now has a balances row at once.
    expect(
      await db.get("SELECT SUM(traffic_change) AS total FROM traffic_records WHERE user_id = 'a'"),
    ).toEqual({ total: 5 * 2 ** 30 });
    await db.run(
      "INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time) VALUES ('c', 'c@example.com', 'x', 'kc', 'sc', 1)",
    );
    expect(await db.get("SELECT traffic FROM balances WHERE user_id = 'c'")).toEqual({ traffic: 0 });
    await expect(db.run("UPDATE balances SET traffic = -1 WHERE user_id = 'c'")).rejects.toThrow();
    await db.run("DELETE FROM users WHERE id = 'c'");
    expect(await db.get("SELECT COUNT(*) AS n FROM balances WHERE user_id = 'c'")).toEqual({ n: 0 });
  });

  test("020 folds each day's usage into that day's spend record; usage_days reads as before", async () => {
    // On PostgreSQL when the tests run there (FERRY_TEST_DATABASE_URL), else on SQLite.
    const database = await createTestDatabase();
    const db = database ? await openPostgres(database.url) : freshDb();
    try {
      await migrate(db, embedded.slice(0, 19));
      for (const id of ["a", "b"]) {
        await db.run(
          `INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time)
           VALUES (?1, ?1 || '@example.com', 'x', 'k' || ?1, 's' || ?1, 1)`,
          id,
        );
      }
      const record = `INSERT INTO traffic_records (user_id, type, "desc", traffic_change, exemption_traffic, all_traffic,
          all_spend, day, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
      await db.run(record, "a", "buy", "买", 10 * MB, 0, 10 * MB, 0, "2026-11-26", 1);
      await db.run(record, "a", "spend", "节点流量", -3 * MB, MB, 7 * MB, 4 * MB, "2026-11-27", 2);
      await db.run("UPDATE balances SET traffic = ?, spend_traffic = ? WHERE user_id = 'a'", 7 * MB, 4 * MB);
      const usage = `INSERT INTO usage_days (day, user_id, upload, download, quota, permanent, overdraft)
          VALUES (?, ?, ?, ?, ?, ?, ?)`;
      await db.run(usage, "2026-11-27", "a", MB, 2 * MB, MB, 3 * MB, 0);
      // b's day was all overdraft: a usage row and no spend record.
      await db.run(usage, "2026-11-27", "b", 0, 5 * MB, 0, 0, 5 * MB);
      const usageRows = "SELECT * FROM usage_days ORDER BY day, user_id";
      const before = await db.all(usageRows);
      await migrate(db, embedded);

      expect(await db.all(usageRows)).toEqual(before);
      expect(
        await db.all(
          `SELECT user_id, type, traffic_change, exemption_traffic, all_traffic, all_spend, upload, download, quota,
               permanent, overdraft FROM traffic_records ORDER BY user_id, day`,
        ),
      ).toEqual([
        {
          ...{
            user_id: "a",
            type: "buy",
            traffic_change: 10 * MB,
            exemption_traffic: 0,
            all_traffic: 10 * MB,
          },
          ...{ all_spend: 0, upload: 0, download: 0, quota: 0, permanent: 0, overdraft: 0 },
        },
        {
          ...{
            user_id: "a",
            type: "spend",
            traffic_change: -3 * MB,
            exemption_traffic: MB,
            all_traffic: 7 * MB,
          },
          ...{ all_spend: 4 * MB, upload: MB, download: 2 * MB, quota: MB, permanent: 3 * MB, overdraft: 0 },
        },
        {
          ...{
            user_id: "b",
            type: "spend",
            traffic_change: 0,
            exemption_traffic: 0,
            all_traffic: 0,
            all_spend: 0,
          },
          ...{ upload: 0, download: 5 * MB, quota: 0, permanent: 0, overdraft: 5 * MB },
        },
      ]);
      // The record lists leave b's record out (it moved nothing), and the ledger still sums to the balance.
      expect(
        await db.all(`SELECT user_id, type FROM traffic_records WHERE ${movedSql()} ORDER BY user_id, day`),
      ).toEqual([
        { user_id: "a", type: "buy" },
        { user_id: "a", type: "spend" },
      ]);
      expect(
        await db.get("SELECT SUM(traffic_change) AS total FROM traffic_records WHERE user_id = 'a'"),
      ).toEqual({
        total: 7 * MB,
      });
      // The view can still be written (the saturation test sets a usage sum through it).
      await db.run("UPDATE usage_days SET download = ? WHERE user_id = 'b'", 6 * MB);
      expect(await db.get("SELECT download FROM traffic_records WHERE user_id = 'b'")).toEqual({
        download: 6 * MB,
      });
    } finally {
      if (database) {
        await db.close();
        await database.drop();
      }
    }
  });

  test("the database uses WAL and enforces foreign keys", async () => {
    const db = freshDb();
    await migrate(db, embedded);
    expect((await db.get<{ journal_mode: string }>("PRAGMA journal_mode"))?.journal_mode).toBe("wal");
    await expect(
      db.run(
        "INSERT INTO sessions (token_hash, user_id, create_time, expire_time) VALUES ('t', 'nobody', 0, 0)",
      ),
    ).rejects.toThrow();
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

  test("applies each pending step in order and only the pending ones", async () => {
    const db = freshDb();
    expect(await migrate(db, steps.slice(0, 1))).toEqual([1]);
    expect((await migrationStatus(db, steps)).map((m) => m.appliedTime === null)).toEqual([
      false,
      true,
      true,
    ]);
    expect(await migrate(db, steps)).toEqual([2, 3]);
    expect(await db.all<{ title: string; price: number }>("SELECT title, price FROM items")).toEqual([
      { title: "first", price: 100 },
    ]);
    expect((await recorded(db)).map((r) => `${r.version}_${r.name}`)).toEqual([
      "1_create_items",
      "2_add_price",
      "3_seed_item",
    ]);
  });

  test("a failing step leaves no partial schema or data and is not recorded; earlier steps stay", async () => {
    const db = freshDb();
    const broken: Migration = {
      version: 2,
      name: "half_done",
      sql: `CREATE TABLE extra (id INTEGER PRIMARY KEY);
            INSERT INTO items (title) VALUES ('written before the error');
            ALTER TABLE items ADD COLUMN price INTEGER;
            CREATE TABLE broken (;`,
    };
    await expect(migrate(db, [steps[0] as Migration, broken])).rejects.toThrow(/2_half_done/);
    expect(await tables(db)).toEqual(["items", "schema_migrations"]);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM items"))?.n).toBe(0);
    const columns = (await db.all<{ name: string }>("PRAGMA table_info(items)")).map((c) => c.name);
    expect(columns).toEqual(["id", "title"]);
    expect((await recorded(db)).map((r) => r.version)).toEqual([1]);
    expect(db.inTransaction).toBe(false);

    // Once fixed, the step applies normally.
    expect(await migrate(db, steps)).toEqual([2, 3]);
  });

  test("a database newer than the build is refused before anything is touched", async () => {
    const db = freshDb();
    await migrate(db, steps);
    await db.run(
      "INSERT INTO schema_migrations (version, name, applied_time) VALUES (7, 'from_the_future', 1)",
    );
    const before = await tables(db);
    let caught: unknown;
    try {
      await migrate(db, [...steps, { version: 4, name: "would_run", sql: "CREATE TABLE later (x);" }]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DatabaseTooNewError);
    const error = caught as DatabaseTooNewError;
    expect(error.databaseVersion).toBe(7);
    expect(error.knownVersion).toBe(4);
    expect(error.message).toContain("7");
    expect(error.message).toContain("newer");
    expect(await tables(db)).toEqual(before);
  });
});

describe("startServer", () => {
  test("refuses a data directory whose database is newer than this build, with a clear error", async () => {
    const dataDir = freshDir();
    const db = openSqlite(join(dataDir, "ferry.db"));
    await migrate(db, embedded);
    const newer = (embedded.at(-1)?.version ?? 0) + 1;
    await db.run(
      "INSERT INTO schema_migrations (version, name, applied_time) VALUES (?, 'future', 1)",
      newer,
    );
    await db.close();

    let caught: unknown;
    try {
      const server = await startServer({ dataDir, port: 0 });
      void server.stop();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DatabaseTooNewError);
    expect((caught as Error).message).toContain(`version ${newer}`);
    expect((caught as Error).message).toMatch(/newer ferry|backup/);

    // The refused start released the file: it opens and still holds the future version.
    const again = openSqlite(join(dataDir, "ferry.db"));
    opened.push(again);
    expect((await recorded(again)).at(-1)?.version).toBe(newer);
  });

  test("migrates a new data directory on start and keeps data across restarts", async () => {
    const dataDir = freshDir();
    const first = await startServer({ dataDir, port: 0 });
    await first.context.db.run(
      "INSERT INTO settings (key, value, update_time) VALUES ('notice_title', '\"kept\"', 1)",
    );
    await first.stop();
    const second = await startServer({ dataDir, port: 0 });
    try {
      expect(await second.context.settings.get("notice_title")).toBe("kept");
      expect((await recorded(second.context.db)).map((r) => r.version)).toEqual(
        embedded.map((m) => m.version),
      );
    } finally {
      await second.stop();
    }
  });
});

describe("tx", () => {
  test("a throw rolls back everything written inside it, nested calls included", async () => {
    const db = freshDb();
    await db.exec("CREATE TABLE t (x INTEGER)");
    await expect(
      tx(db, async () => {
        await db.run("INSERT INTO t VALUES (1)");
        await tx(db, async () => await db.run("INSERT INTO t VALUES (2)"));
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM t"))?.n).toBe(0);
    expect(db.inTransaction).toBe(false);

    expect(await tx(db, async () => (await db.run("INSERT INTO t VALUES (3)")).changes)).toBe(1);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM t"))?.n).toBe(1);
  });
});

/** Issue 28 item 4: replicas started together on one new PostgreSQL database. */
describe.skipIf(!testClusterUrl())("several replicas on an empty PostgreSQL database", () => {
  const databases: TestDatabase[] = [];
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop();
    for (const database of databases) await database.drop();
  });

  async function emptyDatabase(): Promise<string> {
    const database = (await createTestDatabase()) as TestDatabase;
    databases.push(database);
    return database.url;
  }

  const readyz = async (url: string) => {
    const response = await fetch(`${url}/readyz`);
    return [response.status, await response.text()];
  };

  test("two started at once, sharing a data folder: the migrations run once, both serve, no error", async () => {
    const url = await emptyDatabase();
    // One machine, one data folder, two ports: no pid file stands in their way (it guards SQLite).
    const dataDir = freshDir();
    const started = await Promise.allSettled(
      ["a", "b"].map(() => startServer({ dataDir, databaseUrl: url, port: 0 })),
    );
    for (const result of started) if (result.status === "fulfilled") servers.push(result.value);
    expect(started.map((result) => (result.status === "rejected" ? String(result.reason) : "ok"))).toEqual([
      "ok",
      "ok",
    ]);
    const [a, b] = servers.slice(-2) as [RunningServer, RunningServer];
    expect(await readyz(a.url)).toEqual([200, "ready"]);
    expect(await readyz(b.url)).toEqual([200, "ready"]);
    const versions = await a.context.db.all<{ version: number; n: number }>(
      "SELECT version, COUNT(*) AS n FROM schema_migrations GROUP BY version ORDER BY version",
    );
    expect(versions).toEqual(embedded.map((m) => ({ version: m.version, n: 1 })));
    expect(existsSync(pidFilePath(dataDir))).toBe(false);
  });

  test("one starting while another migrates waits, answering /readyz 503 until it is done", async () => {
    const url = await emptyDatabase();
    // Another replica's migration: the lock held by a connection of the test's own.
    const sql = new SQL({ url, max: 1 });
    const holder = await sql.reserve();
    await holder.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const starting = startServer({ dataDir: freshDir(), databaseUrl: url, port });
    try {
      let answer: unknown[] = [];
      for (let tries = 0; tries < 200 && answer[0] !== 503; tries += 1) {
        answer = await readyz(`http://127.0.0.1:${port}`).catch(() => []);
        if (answer[0] !== 503) await Bun.sleep(10);
      }
      expect(answer).toEqual([503, "starting"]);
      await Bun.sleep(200);
      expect(await readyz(`http://127.0.0.1:${port}`)).toEqual([503, "starting"]);
    } finally {
      await holder.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
      await holder.release();
      await sql.close();
    }
    const server = await starting;
    servers.push(server);
    expect(await readyz(server.url)).toEqual([200, "ready"]);
  });
});
