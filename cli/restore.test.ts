/**
 * Issue 18 §5: `ferry restore <file>` as a real process. It refuses what is not an intact Ferry
 * database this build can run, and refuses while a server runs on the data directory, leaving
 * ferry.db as it was; otherwise it keeps the old database as ferry.db.bak-<time> and the server
 * then starts on the restored one.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrations } from "../src/embedded.ts";
import { everyBytePng } from "../src/modules/file/test-images.ts";
import { finishRestore, prepareRestore } from "../src/ops/restore.ts";
import { ApiClient } from "../tests/harness.ts";
import { downloadImage, uploadImage } from "../tests/uploads.ts";
import { expectHelp, expectOneLineError, ferry, ferryIn, startServe } from "./test-helpers.ts";

const root = mkdtempSync(join(tmpdir(), "ferry-restore-"));
const dataDir = join(root, "data");
const live = ferryIn(dataDir);
const backup = join(root, "before.db");

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const createAccount = (email: string) =>
  ferry(["user", "create", "--email", email, "--data", dataDir], {}, "long-password-1\n");

/** The emails in a data directory's database, read through the CLI. */
async function emails(): Promise<string[]> {
  const users = await live.json<{ email: string }[]>(["user", "list"]);
  return users.map((user) => user.email).sort();
}

beforeAll(async () => {
  expect((await createAccount("kept@example.com")).code).toBe(0);
  await live.ok(["backup", backup]);
  expect((await createAccount("after-backup@example.com")).code).toBe(0);
});

/** A file at `name` under the temp root, made by `make` (a Database when it needs one). */
function sqliteFile(name: string, make: (db: Database) => void): string {
  const file = join(root, name);
  const db = new Database(file, { create: true });
  make(db);
  db.close();
  return file;
}

test("restore has --help naming its argument and options", async () => {
  await expectHelp([
    [["restore"], ["[file]", "--data", "--from", "--passphrase", "integrity", "ferry.db.bak-<time>"]],
  ]);
});

test("what is not an intact Ferry database this build can run is refused with one line; ferry.db stays", async () => {
  const garbage = join(root, "garbage.db");
  writeFileSync(garbage, "this is not a database at all, just text ".repeat(200));
  const foreign = sqliteFile("foreign.db", (db) => db.exec("CREATE TABLE notes (text TEXT)"));
  const newer = join(root, "newer.db");
  await live.ok(["backup", newer]);
  const next = (migrations.at(-1)?.version ?? 0) + 1;
  const bumped = new Database(newer);
  bumped
    .query("INSERT INTO schema_migrations (version, name, applied_time) VALUES (?, 'future', 0)")
    .run(next);
  bumped.close();
  // One letter of the account's email changed in place: the table and its unique index disagree.
  const damaged = join(root, "damaged.db");
  await live.ok(["backup", damaged]);
  const bytes = readFileSync(damaged);
  bytes.write("q", bytes.indexOf("kept@example.com"), "latin1");
  writeFileSync(damaged, bytes);
  // The schema (page 1 after its 100-byte header) overwritten: SQLite cannot even read it through.
  // (A page in the middle was once used; which table it hit, and so the message, moved with the schema.)
  const garbled = join(root, "garbled.db");
  await live.ok(["backup", garbled]);
  const garbledBytes = readFileSync(garbled);
  garbledBytes.fill(0x5a, 100, 4096);
  writeFileSync(garbled, garbledBytes);
  // 4 KB of the middle overwritten: what SQLite says depends on the page hit, and an integrity
  // problem can span lines ("*** in database main ***" then the tree); the refusal is still one line.
  const holed = join(root, "holed.db");
  await live.ok(["backup", holed]);
  const holedBytes = readFileSync(holed);
  holedBytes.fill(0x5a, holedBytes.length >> 2, (holedBytes.length >> 2) + 4096);
  writeFileSync(holed, holedBytes);

  const before = readFileSync(join(dataDir, "ferry.db"));
  const cases: [string, RegExp][] = [
    [join(root, "missing.db"), /no such file/],
    [garbage, /not a readable SQLite database|cannot be opened/],
    [foreign, /not a Ferry database \(no schema_migrations\)/],
    [newer, new RegExp(`schema version ${next}, newer than this ferry build knows`)],
    [damaged, /fails the integrity check: .*missing from index/],
    [garbled, /not a readable SQLite database: database disk image is malformed/],
    [holed, /fails the integrity check|not a readable SQLite database/],
  ];
  for (const [file, mentions] of cases) {
    expectOneLineError(await ferry(["restore", file, "--data", dataDir]), mentions);
  }
  expect(readFileSync(join(dataDir, "ferry.db")).equals(before)).toBe(true);
  expect(
    readdirSync(dataDir).filter((name) => name.includes(".bak-") || name.includes(".restoring")),
  ).toEqual([]);
});

test("a running server's database is not replaced; after it stops, the restore goes through", async () => {
  const server = await startServe(["--port", "0", "--data", dataDir]);
  let serverStopped = false;
  try {
    const refused = await ferry(["restore", backup, "--data", dataDir]);
    expectOneLineError(refused, /a ferry server \(pid \d+\) is running on .*; stop it first/);
    const client = new ApiClient(server.url);
    expect((await client.login("after-backup@example.com", "long-password-1")).code).toBe(0);
    expect((await server.stop()).code).toBe(0);
    serverStopped = true;
  } finally {
    if (!serverStopped) await server.stop();
  }
  expect(await emails()).toEqual(["after-backup@example.com", "kept@example.com"]);

  const restored = await ferry(["restore", backup, "--data", dataDir]);
  expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: "" });
  expect(restored.stdout).toContain("the old database is kept as");
  expect(await emails()).toEqual(["kept@example.com"]);
  const kept = readdirSync(dataDir).filter((name) => /^ferry\.db\.bak-[\dTZ-]+$/.test(name));
  expect(kept.length).toBe(1);
  expect(statSync(join(dataDir, "ferry.db")).mode & 0o777).toBe(0o600);
  // The old database is intact beside it: restoring it brings the later account back.
  expect((await ferry(["restore", join(dataDir, kept[0] as string), "--data", dataDir])).code).toBe(0);
  expect(await emails()).toEqual(["after-backup@example.com", "kept@example.com"]);

  const again = await startServe(["--port", "0", "--data", dataDir]);
  expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
  expect((await again.stop()).code).toBe(0);
});

test("a running server is found before the backup is checked (seconds on a big one), and again right before ferry.db is replaced", async () => {
  const server = await startServe(["--port", "0", "--data", dataDir]);
  try {
    // Checked first: the refusal names the server, not what is wrong with the backup.
    const garbage = join(root, "not-even-sqlite.db");
    writeFileSync(garbage, "not a database");
    expectOneLineError(
      await ferry(["restore", garbage, "--data", dataDir]),
      /a ferry server \(pid \d+\) is running on .*; stop it first/,
    );
  } finally {
    expect((await server.stop()).code).toBe(0);
  }

  // A server that starts while the backup is being checked and copied in is found before the rename.
  const before = await emails();
  const kept = () => readdirSync(dataDir).filter((name) => name.includes(".bak-"));
  const keptBefore = kept();
  const prepared = await prepareRestore(backup, dataDir, migrations);
  expect(existsSync(prepared.incoming)).toBe(true);
  const late = await startServe(["--port", "0", "--data", dataDir]);
  try {
    expect(() => finishRestore(prepared)).toThrow(
      /a ferry server \(pid \d+\) is running on .*; stop it first/,
    );
    expect(existsSync(prepared.incoming)).toBe(false);
    expect(kept()).toEqual(keptBefore);
    expect((await fetch(`${late.url}/healthz`)).status).toBe(200);
  } finally {
    expect((await late.stop()).code).toBe(0);
  }
  expect(await emails()).toEqual(before);
});

test("a pid file left by a server that died does not block a restore", async () => {
  const dead = Bun.spawn(["true"]);
  await dead.exited;
  writeFileSync(join(dataDir, "ferry.pid"), `${dead.pid}\n`);
  const restored = await ferry(["restore", backup, "--data", dataDir]);
  expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: "" });
  expect(await emails()).toEqual(["kept@example.com"]);
  expect(existsSync(join(dataDir, "ferry.db-wal"))).toBe(false);
});

test("restoring into an empty data directory creates ferry.db and keeps nothing", async () => {
  const fresh = join(root, "fresh");
  const restored = await ferry(["restore", backup, "--data", fresh]);
  expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: "" });
  expect(restored.stdout).not.toContain("kept as");
  expect(readdirSync(fresh)).toEqual(["ferry.db"]);
});

test("a backup carries the uploaded images: restored into an empty data directory, they are served byte for byte", async () => {
  const shop = join(root, "shop");
  const email = "images@example.com";
  const made = await ferry(["user", "create", "--email", email, "--data", shop], {}, "long-password-1\n");
  expect(made.code).toBe(0);
  const image = everyBytePng(1024 * 1024 + 3);
  const server = await startServe(["--port", "0", "--data", shop]);
  let filename: string;
  try {
    const client = new ApiClient(server.url);
    expect((await client.login(email, "long-password-1")).code).toBe(0);
    const uploaded = await uploadImage(client, image);
    expect(uploaded.status).toBe(200);
    filename = uploaded.filename;
    await ferryIn(shop).ok(["backup", join(root, "with-images.db")]);
  } finally {
    expect((await server.stop()).code).toBe(0);
  }
  // Nothing under <data>/uploads: the image is in the database, and so in its backup.
  expect(existsSync(join(shop, "uploads"))).toBe(false);

  const elsewhere = join(root, "elsewhere");
  expect((await ferry(["restore", join(root, "with-images.db"), "--data", elsewhere])).code).toBe(0);
  const restored = await startServe(["--port", "0", "--data", elsewhere]);
  try {
    const answer = await downloadImage(restored.url, filename);
    expect({ status: answer.status, type: answer.type }).toEqual({ status: 200, type: "image/png" });
    expect(answer.bytes.equals(image)).toBe(true);
  } finally {
    expect((await restored.stop()).code).toBe(0);
  }
});
