/**
 * Issue 30 §4: `ferry backup --to s3` and `ferry restore --from s3://bucket/key` against a real
 * S3-compatible server on loopback (s3rver, tests/fakes/s3.ts). The copy is restored into a fresh
 * data directory (a fresh database on PostgreSQL) with only the S3_* environment and the passphrase,
 * as on a new box, and holds as many rows in every table as the source; a wrong passphrase and a
 * copy altered in the store are refused before anything is replaced.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import {
  FAKE_S3_BUCKET,
  FAKE_S3_KEY_ID,
  FAKE_S3_SECRET,
  type FakeS3,
  startFakeS3,
} from "../tests/fakes/s3.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { createTestDatabase, type TestDatabase, testDatabaseOf } from "../tests/pg.ts";
import { expectOneLineError, ferry, startWithCli } from "./test-helpers.ts";

const PASSPHRASE = "an off-box passphrase";
let server: TestServer;
let s3: FakeS3;
const work = mkdtempSync(join(tmpdir(), "ferry-cli-offbox-"));
const fresh: TestDatabase[] = [];
let restores = 0;

/** What a new box has: the store's address and keys in Bun's S3 variables, and the passphrase. */
const newBoxEnv = () => ({
  S3_ENDPOINT: s3.endpoint,
  S3_ACCESS_KEY_ID: FAKE_S3_KEY_ID,
  S3_SECRET_ACCESS_KEY: FAKE_S3_SECRET,
  FERRY_BACKUP_PASSPHRASE: PASSPHRASE,
});

beforeAll(async () => {
  s3 = await startFakeS3();
  ({ server } = await startWithCli());
  await loggedInClient(server, { role: "admin", email: "offbox-cli-admin@example.com" });
  await loggedInClient(server, { email: "offbox-cli-user@example.com" });
  await server.context.settings.update({
    backup_s3_endpoint: s3.endpoint,
    backup_s3_bucket: FAKE_S3_BUCKET,
    backup_s3_access_key_id: FAKE_S3_KEY_ID,
    backup_s3_secret_access_key: FAKE_S3_SECRET,
    backup_s3_prefix: "manual/",
    backup_passphrase: PASSPHRASE,
  });
});
afterAll(async () => {
  await server?.close();
  await s3?.close();
  for (const database of fresh) await database.drop();
  rmSync(work, { recursive: true, force: true });
});

const onPostgres = () => server.context.db.engine === "postgres";

/** `ferry backup --to s3` of the test server's database; answers the s3:// address it printed. */
async function backupToS3(): Promise<string> {
  const run = await ferry(["backup", "--to", "s3", "--allow-private-urls", "--data", server.dataDir]);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  const match =
    /^uploaded (s3:\/\/\S+) \((\d+) bytes, SHA-256 [0-9a-f]{64}, verified by reading it back\)\n$/.exec(
      run.stdout,
    );
  expect(match).not.toBeNull();
  return match?.[1] as string;
}

/** A place to restore into that has never held anything: a new data directory, or a new database. */
async function freshTarget(): Promise<{ args: string[]; counts: () => Promise<Record<string, number>> }> {
  restores += 1;
  if (onPostgres()) {
    const database = (await createTestDatabase()) as TestDatabase;
    fresh.push(database);
    return { args: ["--database-url", database.url], counts: () => postgresCounts(database.url) };
  }
  const dataDir = join(work, `fresh-${restores}`);
  return { args: ["--data", dataDir], counts: async () => sqliteCounts(join(dataDir, "ferry.db")) };
}

function sqliteCounts(file: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
      )
      .all();
    return Object.fromEntries(
      tables.map(({ name }) => [
        name,
        (db.query(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n,
      ]),
    );
  } finally {
    db.close();
  }
}

async function postgresCounts(url: string): Promise<Record<string, number>> {
  const sql = new SQL({ url, max: 1 });
  try {
    const tables: { table_name: string }[] = await sql`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`;
    const counts: Record<string, number> = {};
    for (const { table_name } of tables) {
      counts[table_name] = Number((await sql.unsafe(`SELECT COUNT(*) AS n FROM "${table_name}"`))[0].n);
    }
    return counts;
  } finally {
    await sql.close();
  }
}

const sourceCounts = async () =>
  onPostgres()
    ? await postgresCounts(testDatabaseOf(server.dataDir) as string)
    : sqliteCounts(join(server.dataDir, "ferry.db"));

const restoreFrom = async (
  s3Url: string,
  target: string[],
  extra: string[] = [],
  env: Record<string, string> = newBoxEnv(),
) => await ferry(["restore", "--from", s3Url, "--allow-private-urls", ...target, ...extra], env);

test("ferry backup --to s3, then ferry restore --from s3:// on a new box: every table holds as many rows", async () => {
  const s3Url = await backupToS3();
  const before = await sourceCounts();
  const extension = onPostgres() ? "dump" : "db";
  expect(s3Url).toMatch(
    new RegExp(`^s3://${FAKE_S3_BUCKET}/manual/ferry-[0-9T-]+Z\\.${extension}\\.ferrybak$`),
  );

  const target = await freshTarget();
  const run = await restoreFrom(s3Url, target.args);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  expect(run.stdout).toStartWith(`restored ${s3Url} `);
  const after = await target.counts();
  expect(after).toEqual(before);
  expect(after.users).toBeGreaterThanOrEqual(2);
}, 60_000);

test("an encrypted copy is refused with a wrong passphrase or none, and nothing is replaced", async () => {
  const s3Url = await backupToS3();
  const target = await freshTarget();
  expectOneLineError(
    await restoreFrom(s3Url, target.args, ["--passphrase", "not the passphrase"]),
    /wrong passphrase/,
  );
  const { FERRY_BACKUP_PASSPHRASE: _, ...withoutPassphrase } = newBoxEnv();
  expectOneLineError(
    await restoreFrom(s3Url, target.args, [], withoutPassphrase),
    /is encrypted: give the passphrase/,
  );
  if (!onPostgres()) expect(existsSync(join(target.args[1] as string, "ferry.db"))).toBe(false);
  else expect(await target.counts()).toEqual({});
  // The right one on the command line works too.
  const run = await restoreFrom(s3Url, target.args, ["--passphrase", PASSPHRASE], withoutPassphrase);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
}, 60_000);

test("a copy altered in the store is refused by the integrity check, encrypted or not", async () => {
  const encrypted = await backupToS3();
  await s3.tamper(encrypted.slice(`s3://${FAKE_S3_BUCKET}/`.length));
  const target = await freshTarget();
  expectOneLineError(
    await restoreFrom(encrypted, target.args),
    new RegExp(
      `^error: ${encrypted.replaceAll(".", "\\.")} fails the integrity check \\(chunk \\d+ fails its authentication tag\\)`,
    ),
  );

  await server.context.settings.update({ backup_passphrase: "" });
  try {
    const plain = await backupToS3();
    await s3.tamper(plain.slice(`s3://${FAKE_S3_BUCKET}/`.length), 5000);
    expectOneLineError(
      await restoreFrom(plain, target.args),
      /fails the integrity check \(\d+ bytes with SHA-256 [0-9a-f]{64}, its header names/,
    );
    if (!onPostgres()) expect(existsSync(join(target.args[1] as string, "ferry.db"))).toBe(false);
    else expect(await target.counts()).toEqual({});
  } finally {
    await server.context.settings.update({ backup_passphrase: PASSPHRASE });
  }
}, 60_000);

test("the sealed file itself (as a Telegram chat receives it) restores with ferry restore <file>", async () => {
  const s3Url = await backupToS3();
  const file = join(work, "from-telegram.ferrybak");
  writeFileSync(
    file,
    new Uint8Array(await s3.client.file(s3Url.slice(`s3://${FAKE_S3_BUCKET}/`.length)).arrayBuffer()),
  );
  const before = await sourceCounts();
  const target = await freshTarget();
  const run = await ferry(["restore", file, ...target.args], { FERRY_BACKUP_PASSPHRASE: PASSPHRASE });
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  expect(await target.counts()).toEqual(before);
}, 60_000);

test("an unknown object and a bad address are one clear line", async () => {
  const target = await freshTarget();
  expectOneLineError(
    await restoreFrom(`s3://${FAKE_S3_BUCKET}/manual/none.ferrybak`, target.args),
    /no object s3:\/\/ferry-backups\/manual\/none\.ferrybak/,
  );
  expectOneLineError(
    await restoreFrom("https://example.com/x", target.args),
    /not an s3:\/\/bucket\/key address/,
  );
  expectOneLineError(await ferry(["backup", "--to", "gcs", "--data", server.dataDir]), /--to takes s3/);
}, 60_000);

test("S3 down: ferry backup --to s3 is one clear line and exit 1", async () => {
  await s3.stop();
  try {
    expectOneLineError(
      await ferry(["backup", "--to", "s3", "--allow-private-urls", "--data", server.dataDir]),
      /^error: upload failed: /,
    );
  } finally {
    await s3.restart();
  }
}, 60_000);
