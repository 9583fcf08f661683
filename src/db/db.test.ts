/**
 * The data directory and the database (which holds the EPay key) are readable by their owner only
 * (issue 11, finding 14), whatever the umask of the process that creates them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningServer, startServer } from "../server.ts";
import { openSqlite } from "./db.ts";

let root: string;
let server: RunningServer;
const dataDir = () => join(root, "fresh", "data");

const mode = (path: string) => statSync(path).mode & 0o777;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "ferry-perm-"));
  // The most permissive umask: the modes must not come from it.
  const umask = process.umask(0);
  try {
    server = await startServer({ dataDir: dataDir(), host: "127.0.0.1", port: 0 });
  } finally {
    process.umask(umask);
  }
});
afterAll(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

test("a fresh data directory is 0700 and ferry.db with its -wal and -shm 0600", async () => {
  // A write, so that the WAL files surely exist.
  await server.context.settings.update({ notice_title: "x" });
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(mode(dataDir())).toBe(0o700);
  for (const file of ["ferry.db", "ferry.db-wal", "ferry.db-shm"]) {
    expect({ file, mode: mode(join(dataDir(), file)).toString(8) }).toEqual({ file, mode: "600" });
  }
});

test("a database file left world-readable by an older version is made 0600 when opened", () => {
  const file = join(root, "old.db");
  for (const path of [file, `${file}-wal`]) {
    writeFileSync(path, "");
    chmodSync(path, 0o644);
  }
  const db = openSqlite(file);
  try {
    expect(mode(file).toString(8)).toBe("600");
    expect(mode(`${file}-wal`).toString(8)).toBe("600");
  } finally {
    void db.close();
  }
});
