/**
 * Issue 18 §5: scheduled backups. From the hour `backup_hour` of the business day (setting
 * `timezone`) the server writes `<data>/backups/ferry-YYYY-MM-DD.db` once a day and keeps the newest
 * `backup_keep`; -1 turns it off. Real SQLite files (pg_dump archives, `.dump`, when the server runs
 * on PostgreSQL); the clock is injected.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { loggedInClient, startTestServer, type TestServer } from "../../tests/harness.ts";
import { createTestDatabase } from "../../tests/pg.ts";
import { settingsSchema } from "../modules/settings/schema.ts";
import { backupsDir, runScheduledBackup, scheduledBackupName, startScheduledBackups } from "./backup.ts";
import { restorePostgres } from "./pg-dump.ts";

let server: TestServer;
const HOUR = 3_600_000;
/** 2026-03-01 00:00 in Asia/Shanghai (UTC+8). */
const MIDNIGHT = Date.UTC(2026, 1, 28, 16);

beforeAll(async () => {
  server = await startTestServer();
  await loggedInClient(server, { email: "in-backup@example.com" });
});
afterAll(async () => {
  await server?.close();
});

const dir = () => backupsDir(server.dataDir);
const listed = () => (existsSync(dir()) ? readdirSync(dir()).sort() : []);
const run = async (now: number) => await runScheduledBackup(server.context, server.dataDir, now);
/** The day's backup as this server's engine names it. */
const named = (day: string) => scheduledBackupName(day, server.context.db.engine);

/** The e-mails in a backup: the SQLite copy opened, or the archive restored into a database of its own. */
async function emailsIn(file: string): Promise<{ email: string }[]> {
  if (server.context.db.engine === "sqlite") {
    const copy = new Database(file, { readonly: true });
    try {
      return copy.query("SELECT email FROM users").all() as { email: string }[];
    } finally {
      copy.close();
    }
  }
  const target = await createTestDatabase();
  if (!target) throw new Error("no PostgreSQL test cluster");
  try {
    await restorePostgres(target.url, file);
    const sql = new SQL({ url: target.url, max: 1 });
    try {
      return [...(await sql`SELECT email FROM users`)] as { email: string }[];
    } finally {
      await sql.close();
    }
  } finally {
    await target.drop();
  }
}

test("off by default (-1, keeping 7): nothing is written", async () => {
  expect(settingsSchema.parse({})).toMatchObject({ backup_hour: -1, backup_keep: 7 });
  expect(await run(MIDNIGHT + 12 * HOUR)).toBeNull();
  expect(listed()).toEqual([]);
});

test("from the hour on, once per business day, a usable copy; older ones pruned beyond backup_keep", async () => {
  await server.context.settings.update({ backup_hour: 3, backup_keep: 2, timezone: "Asia/Shanghai" });
  expect(await run(MIDNIGHT + 2 * HOUR + 59 * 60_000)).toBeNull();
  const first = (await run(MIDNIGHT + 3 * HOUR)) as string;
  expect(first).toBe(join(dir(), named("2026-03-01")));
  expect(await run(MIDNIGHT + 20 * HOUR)).toBeNull();
  // 02:00 the next day is still before the hour.
  expect(await run(MIDNIGHT + 26 * HOUR)).toBeNull();
  expect(listed()).toEqual([named("2026-03-01")]);

  expect(await emailsIn(first)).toEqual([{ email: "in-backup@example.com" }]);
  expect(statSync(first).mode & 0o777).toBe(0o600);

  // An operator's own file in the folder is never pruned.
  writeFileSync(join(dir(), "before-upgrade.db"), "");
  for (let day = 1; day <= 3; day += 1) await run(MIDNIGHT + day * 24 * HOUR + 3 * HOUR);
  expect(listed()).toEqual(["before-upgrade.db", named("2026-03-03"), named("2026-03-04")]);
});

test("the business timezone decides the hour and the day", async () => {
  await server.context.settings.update({ backup_hour: 3, backup_keep: 10, timezone: "UTC" });
  // 2026-03-05 02:00 UTC is 10:00 in Shanghai, but before 03:00 UTC.
  const early = Date.UTC(2026, 2, 5, 2);
  expect(await run(early)).toBeNull();
  expect(await run(early + HOUR)).toBe(join(dir(), named("2026-03-05")));
});

test("the hour and the count are checked: whole numbers, -1 to 23 and 1 to 365", () => {
  const patch = settingsSchema.partial();
  for (const value of [-2, 24, 2.5]) expect(patch.safeParse({ backup_hour: value }).success).toBe(false);
  for (const value of [0, 366, 1.5]) expect(patch.safeParse({ backup_keep: value }).success).toBe(false);
  expect(patch.safeParse({ backup_hour: 23, backup_keep: 365 }).success).toBe(true);
});

test("the server's periodic job writes the day's backup when the clock reaches the hour", async () => {
  await server.context.settings.update({ backup_hour: 4, backup_keep: 10, timezone: "Asia/Shanghai" });
  let now = Date.UTC(2026, 3, 1, 16) + 3 * HOUR; // 2026-04-02 03:00 in Shanghai
  const job = await startScheduledBackups(server.context, server.dataDir, 5, () => now);
  try {
    await Bun.sleep(30);
    expect(listed()).not.toContain(named("2026-04-02"));
    now += HOUR;
    while (!listed().includes(named("2026-04-02"))) await Bun.sleep(5);
  } finally {
    await job.stop();
  }
});

test("of two replicas the first to claim the day writes its backup, once; a failed one gives the claim back (issue 28)", async () => {
  await server.context.settings.update({ backup_hour: 3, backup_keep: 10, timezone: "Asia/Shanghai" });
  const otherData = mkdtempSync(join(tmpdir(), "ferry-other-replica-"));
  try {
    const at = Date.UTC(2026, 4, 1, 16) + 5 * HOUR; // 2026-05-02 05:00 in Shanghai
    const first = { id: "replica-one", host: hostname() };
    const second = { id: "replica-two", host: "other-machine" };
    const written = await runScheduledBackup(server.context, server.dataDir, at, first);
    expect(written).toBe(join(dir(), named("2026-05-02")));
    // The other replica, later that day (or after a failover): already claimed, nothing written.
    expect(await runScheduledBackup(server.context, otherData, at + HOUR, second)).toBeNull();
    expect(existsSync(backupsDir(otherData))).toBe(false);
    const claims = () =>
      server.context.db.all<{ day: string; replica_id: string; host: string; file: string }>(
        "SELECT day, replica_id, host, file FROM scheduled_backups WHERE day >= '2026-05-02' ORDER BY day",
      );
    expect(await claims()).toEqual([
      { day: "2026-05-02", replica_id: "replica-one", host: hostname(), file: written as string },
    ]);

    // The next day the other replica claims it, and its backup fails (its backups folder cannot be
    // made): the claim is given back, and the next round, once it can, writes the day's backup.
    writeFileSync(backupsDir(otherData), "not a folder");
    await expect(runScheduledBackup(server.context, otherData, at + 24 * HOUR, second)).rejects.toThrow();
    expect((await claims()).map((claim) => claim.day)).toEqual(["2026-05-02"]);
    rmSync(backupsDir(otherData));
    const retried = await runScheduledBackup(server.context, otherData, at + 25 * HOUR, second);
    expect(retried).toBe(join(backupsDir(otherData), named("2026-05-03")));
    expect((await claims()).map((claim) => [claim.day, claim.replica_id])).toEqual([
      ["2026-05-02", "replica-one"],
      ["2026-05-03", "replica-two"],
    ]);
    expect(await runScheduledBackup(server.context, server.dataDir, at + 26 * HOUR, first)).toBeNull();
  } finally {
    rmSync(otherData, { recursive: true, force: true });
  }
});
