/**
 * The data interface gives the same answers and the same guarantees on the engine this run uses:
 * SQLite by default, PostgreSQL in the PostgreSQL pass of `bun run test` (FERRY_TEST_DATABASE_URL).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../../tests/pg.ts";
import { type Db, isUniqueViolation, numberPlaceholders, onRollback, openDatabase, tx } from "./db.ts";

let db: Db;
let dir: string;
let database: TestDatabase | null;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ferry-engines-"));
  database = await createTestDatabase();
  db = await openDatabase({ url: database?.url, file: join(dir, "ferry.db") });
  await db.exec(`CREATE TABLE counters (id TEXT PRIMARY KEY, n BIGINT NOT NULL);
    CREATE TABLE notes (id BIGINT PRIMARY KEY, "desc" TEXT NOT NULL UNIQUE)`);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

test("placeholders: ? counts up, ?N keeps its number, quoted text is left alone", () => {
  expect(numberPlaceholders("SELECT ? AS a, '?' AS q, \"?\" AS i, ? AS b")).toBe(
    "SELECT $1 AS a, '?' AS q, \"?\" AS i, $2 AS b",
  );
  expect(numberPlaceholders("UPDATE t SET a = ?2 WHERE id = ?1 OR other = ?1")).toBe(
    "UPDATE t SET a = $2 WHERE id = $1 OR other = $1",
  );
});

test("64-bit integers, counts and sums come back as numbers", async () => {
  const big = 2 ** 52 + 7;
  await db.run("INSERT INTO counters (id, n) VALUES (?, ?)", "big", big);
  expect(
    await db.get(
      "SELECT n, (SELECT COUNT(*) FROM counters) AS rows, (SELECT SUM(n) FROM counters) AS total FROM counters WHERE id = ?",
      "big",
    ),
  ).toEqual({ n: big, rows: 1, total: big });
  expect((await db.run("DELETE FROM counters WHERE id = ?", "big")).changes).toBe(1);
});

test("a throw rolls the whole transaction back, nested ones included", async () => {
  await expect(
    tx(db, async () => {
      expect(db.inTransaction).toBe(true);
      await db.run("INSERT INTO counters (id, n) VALUES ('rolled', 1)");
      await tx(db, async () => await db.run("INSERT INTO counters (id, n) VALUES ('nested', 1)"));
      throw new Error("abort");
    }),
  ).rejects.toThrow("abort");
  expect(db.inTransaction).toBe(false);
  expect(await db.get("SELECT COUNT(*) AS n FROM counters")).toEqual({ n: 0 });
});

test("40 transactions that read a balance and write it back: none is lost", async () => {
  await db.run("INSERT INTO counters (id, n) VALUES ('race', 0)");
  await Promise.all(
    Array.from({ length: 40 }, () =>
      tx(db, async () => {
        const row = await db.get<{ n: number }>("SELECT n FROM counters WHERE id = 'race'");
        await db.run("UPDATE counters SET n = ? WHERE id = 'race'", (row?.n ?? 0) + 1);
      }),
    ),
  );
  expect(await db.get("SELECT n FROM counters WHERE id = 'race'")).toEqual({ n: 40 });
});

test("what a transaction has not committed is not seen outside it", async () => {
  await db.run("INSERT INTO counters (id, n) VALUES ('seen', 0)");
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let written = () => {};
  const wrote = new Promise<void>((resolve) => {
    written = resolve;
  });
  const writer = tx(db, async () => {
    await db.run("UPDATE counters SET n = 5 WHERE id = 'seen'");
    written();
    await held;
  });
  await wrote;
  const outside = db.get<{ n: number }>("SELECT n FROM counters WHERE id = 'seen'");
  // SQLite: the read waits for the commit; PostgreSQL: it reads the last committed row at once.
  const early = await Promise.race([outside, Bun.sleep(50).then(() => "waiting" as const)]);
  expect(early).toEqual(db.engine === "sqlite" ? "waiting" : { n: 0 });
  release();
  await writer;
  expect(await db.get("SELECT n FROM counters WHERE id = 'seen'")).toEqual({ n: 5 });
});

test("a duplicate of a unique value is recognised as one", async () => {
  await db.run(`INSERT INTO notes (id, "desc") VALUES (1, 'same')`);
  const error = await db.run(`INSERT INTO notes (id, "desc") VALUES (2, 'same')`).catch((e: unknown) => e);
  expect(isUniqueViolation(error, "notes", "desc")).toBe(true);
  expect(isUniqueViolation(new Error("something else"), "notes", "desc")).toBe(false);
});

test("onRollback undoes outside work when the attempt rolls back, and only then", async () => {
  const undone: string[] = [];
  await tx(db, async () => {
    onRollback(db, () => undone.push("committed"));
  });
  await expect(
    tx(db, async () => {
      onRollback(db, () => undone.push("first"));
      onRollback(db, () => undone.push("second"));
      throw new Error("abort");
    }),
  ).rejects.toThrow("abort");
  onRollback(db, () => undone.push("outside"));
  expect(undone).toEqual(["second", "first"]);
});

test("a transaction run again after a conflict first undoes what its failed attempt did outside", async () => {
  await db.run("INSERT INTO counters (id, n) VALUES ('retry', 0)");
  let outside = 0;
  await Promise.all(
    Array.from({ length: 20 }, () =>
      tx(db, async () => {
        outside += 1;
        onRollback(db, () => {
          outside -= 1;
        });
        const row = await db.get<{ n: number }>("SELECT n FROM counters WHERE id = 'retry'");
        await db.run("UPDATE counters SET n = ? WHERE id = 'retry'", (row?.n ?? 0) + 1);
      }),
    ),
  );
  expect({
    outside,
    n: (await db.get<{ n: number }>("SELECT n FROM counters WHERE id = 'retry'"))?.n,
  }).toEqual({
    outside: 20,
    n: 20,
  });
});
