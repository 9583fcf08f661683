/**
 * `ferry backup` and `ferry restore` with --database-url (issue 27 item 6): a pg_dump custom-format
 * archive, restored with pg_restore; a missing pg_dump and a file that is not an archive are one
 * clear line. Runs only when FERRY_TEST_DATABASE_URL names a cluster (`bun run test`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { createTestDatabase, type TestDatabase, testClusterUrl } from "../tests/pg.ts";
import { expectOneLineError, ferry } from "./test-helpers.ts";

describe.skipIf(!testClusterUrl())("backups on PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "ferry-pg-backup-"));
  let database: TestDatabase;
  const onDb = (args: string[], env: Record<string, string> = {}, input?: string) =>
    ferry(["--database-url", database.url, ...args], env, input);
  const emails = async () => {
    const sql = new SQL({ url: database.url, max: 1 });
    try {
      return (await sql`SELECT email FROM users ORDER BY email`).map((row: { email: string }) => row.email);
    } finally {
      await sql.close();
    }
  };

  beforeAll(async () => {
    database = (await createTestDatabase()) as TestDatabase;
  });
  afterAll(async () => {
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("ferry backup writes a pg_dump archive that ferry restore puts back", async () => {
    const created = await onDb(
      ["user", "create", "--email", "kept@example.com", "--role", "admin"],
      {},
      "password-123\n",
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: "" });
    const file = join(dir, "ferry.dump");
    const backup = await onDb(["backup", file]);
    expect({ code: backup.code, stderr: backup.stderr, stdout: backup.stdout }).toEqual({
      code: 0,
      stderr: "",
      stdout: `backup (pg_dump custom format) written to ${file}\n`,
    });
    expect(readFileSync(file).subarray(0, 5).toString("latin1")).toBe("PGDMP");

    await onDb(["user", "create", "--email", "later@example.com"], {}, "password-123\n");
    expect(await emails()).toEqual(["kept@example.com", "later@example.com"]);
    const restore = await onDb(["restore", file]);
    expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: "" });
    expect(restore.stdout).toStartWith(`restored ${file} into postgres://`);
    expect(await emails()).toEqual(["kept@example.com"]);

    // An existing file is never overwritten.
    expectOneLineError(await onDb(["backup", file]), /refusing to overwrite/);
  }, 60_000);

  test("a missing pg_dump and a file that is not a pg_dump archive are one clear line", async () => {
    const noTools = join(dir, "empty-path");
    rmSync(noTools, { recursive: true, force: true });
    const missing = await onDb(["backup", join(dir, "never.dump")], { PATH: noTools });
    expectOneLineError(missing, /pg_dump is not on the PATH/);
    expect(await Bun.file(join(dir, "never.dump")).exists()).toBe(false);

    const sqliteBackup = join(dir, "ferry.db");
    writeFileSync(sqliteBackup, "SQLite format 3\0");
    expectOneLineError(await onDb(["restore", sqliteBackup]), /is not a pg_dump archive/);
    expect(await emails()).toEqual(["kept@example.com"]);
  }, 60_000);
});
