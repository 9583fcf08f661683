/**
 * Issue 26 §27: `ferry backup <file>` holds password hashes and the EPay key, so its copy is
 * owner-only (0600) from its first byte and written as `<file>.partial` until it is complete (the
 * code scheduled backups use too). A backup cut short — killed mid-way, or out of space — leaves
 * nothing under the backup's name, and `ferry restore` calls a copy cut short incomplete instead
 * of "attempt to write a readonly database".
 *
 * The faults are real: a write that fails runs under a file-size limit (RLIMIT_FSIZE, set by
 * util-linux `prlimit`; Bun ignores SIGXFSZ, so the write fails as on a full disk), and a backup
 * is caught mid-way by holding its source database locked while it waits, then killed.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../src/db/db.ts";
import { expectOneLineError, ferry, ferryIn, runCommand } from "./test-helpers.ts";

const ROOT = join(import.meta.dir, "..");
const root = mkdtempSync(join(tmpdir(), "ferry-backup-"));
const dataDir = join(root, "data");
const live = ferryIn(dataDir);
const LIMIT_BYTES = 1024 * 1024;

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

beforeAll(async () => {
  expect(
    (
      await ferry(
        ["user", "create", "--email", "kept@example.com", "--data", dataDir],
        {},
        "long-password-1\n",
      )
    ).code,
  ).toBe(0);
  // 4 MB of error-log rows, so that the copy is cut well before its end.
  const db = openSqlite(join(dataDir, "ferry.db"));
  const insert =
    "INSERT INTO error_logs (create_time, last_time, name, msg, stack, fingerprint, repeat_count) VALUES (0, 0, 'filler', 'filler', hex(randomblob(2000)), ?, 1)";
  await db.tx(async () => {
    for (let i = 0; i < 1000; i++) await db.run(insert, `filler-${i}`);
  });
  await db.close();
});

/** Runs `command` (argv) under the 1 MB file-size limit with SIGXFSZ ignored: a write past 1 MB fails. */
const underSizeLimit = (command: string[]) =>
  runCommand(
    ["sh", "-c", `trap '' XFSZ; exec "$@"`, "sh", "prlimit", `--fsize=${LIMIT_BYTES}`, ...command],
    // Bun's transpiler cache is a file too: kept off so that only the copy meets the limit.
    { BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" },
  );

const mode = (file: string) => statSync(file).mode & 0o777;
const named = (prefix: string) => readdirSync(root).filter((name) => name.startsWith(prefix));

test("a complete backup is owner-only and lies under its name alone", async () => {
  const target = join(root, "whole.db");
  await live.ok(["backup", target]);
  expect(mode(target)).toBe(0o600);
  expect(named("whole.db")).toEqual(["whole.db"]);
});

test("out of space mid-copy: a one-line error and nothing left, under the backup's name or beside it", async () => {
  const target = join(root, "full.db");
  const run = await underSizeLimit([process.execPath, "src/main.ts", "backup", target, "--data", dataDir]);
  expectOneLineError(run, /^error: backup failed: /);
  expect(named("full.db")).toEqual([]);
  // The next one, with space, completes under the same name.
  await live.ok(["backup", target]);
  expect(named("full.db")).toEqual(["full.db"]);
});

test("caught mid-way and killed: the copy is owner-only under a temporary name, the backup's name stays free", async () => {
  // A source the test holds locked: the backup waits inside VACUUM INTO, its copy begun.
  const source = join(root, "locked-source.db");
  const holder = new Database(source, { create: true });
  holder.exec("PRAGMA journal_mode = DELETE");
  holder.exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x')");
  holder.exec("BEGIN EXCLUSIVE; INSERT INTO t VALUES ('y')");
  const target = join(root, "caught.db");
  const script = join(root, "backup-locked.ts");
  writeFileSync(
    script,
    `import { Database } from "bun:sqlite";
import { backupDatabase } from ${JSON.stringify(join(ROOT, "src/ops/backup.ts"))};
const db = new Database(${JSON.stringify(source)});
db.exec("PRAGMA busy_timeout = 60000");
backupDatabase(db, ${JSON.stringify(target)});
`,
  );
  const child = Bun.spawn([process.execPath, script], { stdout: "ignore", stderr: "ignore" });
  try {
    // The copy starts before the wait: under one of the two names.
    while (!existsSync(`${target}.partial`) && !existsSync(target)) await Bun.sleep(5);
    expect(existsSync(target)).toBe(false);
    expect(mode(`${target}.partial`)).toBe(0o600);
  } finally {
    child.kill("SIGKILL");
    await child.exited;
    holder.exec("ROLLBACK");
    holder.close();
  }
  expect(existsSync(target)).toBe(false);
  for (const name of named("caught.db"))
    expect({ name, mode: mode(join(root, name)) }).toEqual({ name, mode: 0o600 });
  expectOneLineError(
    await ferry(["restore", `${target}.partial`, "--data", join(root, "elsewhere")]),
    /caught\.db\.partial is (empty|incomplete)/,
  );
});

test("restore calls a copy cut short incomplete: VACUUM INTO stopped mid-way, a file copy stopped mid-way", async () => {
  // What an interrupted VACUUM INTO leaves (as `ferry backup` did before): a first page of zeros
  // and a hot journal beside it.
  const cut = join(root, "cut.db");
  const vacuum = `const { Database } = require("bun:sqlite");
try { new Database(${JSON.stringify(join(dataDir, "ferry.db"))}).query("VACUUM INTO ?").run(${JSON.stringify(cut)}); } catch {}`;
  await underSizeLimit([process.execPath, "-e", vacuum]);
  expect(named("cut.db").sort()).toEqual(["cut.db", "cut.db-journal"]);
  const restoredCut = await ferry(["restore", cut, "--data", join(root, "elsewhere")]);
  expectOneLineError(
    restoredCut,
    /cut\.db is incomplete \(cut\.db-journal lies beside it: a copy cut short; take a new backup\)/,
  );
  expect(restoredCut.stderr).not.toContain("readonly");

  const whole = readFileSync(join(root, "whole.db"));
  const half = join(root, "half.db");
  writeFileSync(half, whole.subarray(0, whole.length >> 1));
  expectOneLineError(
    await ferry(["restore", half, "--data", join(root, "elsewhere")]),
    new RegExp(
      `half\\.db is incomplete \\(${whole.length >> 1} of the ${whole.length} bytes its header names`,
    ),
  );
  expect(existsSync(join(root, "elsewhere", "ferry.db"))).toBe(false);
});
