/**
 * Choosing the engine (issue 27 item 1): start-up names the database it uses, the password masked;
 * a bad --database-url, a refused connection and a database that does not exist are each one
 * clear line and exit 1, from `serve` and from any command that opens the database, and never
 * print the password. The tests that need a real PostgreSQL run when FERRY_TEST_DATABASE_URL
 * names a cluster (`bun run test`).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, testClusterUrl } from "../tests/pg.ts";
import { expectOneLineError, ferry, type Run, runInShell, startServe } from "./test-helpers.ts";

const root = mkdtempSync(join(tmpdir(), "ferry-database-url-"));
let dirs = 0;
/** Trust authentication ignores it; it must never be printed. */
const PASSWORD = "s3cret-pw";

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  dirs += 1;
  return join(root, `d${dirs}`);
}

/** A loopback port nothing listens on (taken, then released). */
function closedPort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** One line on stderr naming the trouble, exit 1, nothing on stdout, and no password anywhere. */
function expectRefusal(run: Run, mentions: RegExp) {
  expectOneLineError(run, mentions);
  expect(run.code).toBe(1);
  expect(run.stdout).toBe("");
  expect(run.stderr).not.toContain(PASSWORD);
}

/** `serve` and `user list` with this URL, given as the option and as FERRY_DATABASE_URL. */
async function refusedEverywhere(url: string, mentions: RegExp) {
  const data = ["--data", freshDir()];
  const runs = await Promise.all([
    ferry(["serve", "--port", "0", ...data, "--database-url", url]),
    ferry(["serve", "--port", "0", ...data], { FERRY_DATABASE_URL: url }),
    ferry(["user", "list", ...data, "--database-url", url]),
    ferry(["user", "list", ...data], { FERRY_DATABASE_URL: url }),
  ]);
  for (const run of runs) expectRefusal(run, mentions);
}

test("start-up names the SQLite file when no URL is given", async () => {
  const dir = freshDir();
  const server = await startServe(["--port", "0", "--data", dir]);
  const out = await server.stop();
  expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
  expect(out.stdout.split("\n")[1]).toBe(`database: SQLite ${dir}/ferry.db`);
});

test("a URL that is not a postgres:// URL with a host and a database is one line and exit 1", async () => {
  await refusedEverywhere("not a url", /--database-url is not a URL/);
  await refusedEverywhere(`mysql://ferry:${PASSWORD}@127.0.0.1:3306/ferry`, /must start with postgres:\/\//);
  await refusedEverywhere(`postgres://ferry:${PASSWORD}@127.0.0.1:5432`, /needs a host and a database name/);
});

test("a refused connection is one line naming the address, the password masked", async () => {
  const port = closedPort();
  const url = `postgres://ferry:${PASSWORD}@127.0.0.1:${port}/ferry`;
  await refusedEverywhere(
    url,
    new RegExp(
      `^error: cannot connect to postgres://ferry:\\*\\*\\*@127\\.0\\.0\\.1:${port}/ferry: ` +
        `nothing accepts connections at 127\\.0\\.0\\.1:${port}`,
    ),
  );
});

describe.skipIf(!testClusterUrl())("on a PostgreSQL cluster", () => {
  test("a database that does not exist is one line naming it", async () => {
    const url = new URL(testClusterUrl() as string);
    url.password = PASSWORD;
    url.pathname = `/ferry_missing_${process.pid}`;
    await refusedEverywhere(
      url.toString(),
      new RegExp(`database "ferry_missing_${process.pid}" does not exist`),
    );
  });

  test("start-up prints database: PostgreSQL and the URL with its password masked; the first-admin command reaches it", async () => {
    const database = await createTestDatabase();
    if (!database) throw new Error("no cluster");
    try {
      const url = new URL(database.url);
      url.password = PASSWORD;
      const serve = ["--port", "0", "--data", freshDir(), "--database-url", url.toString()];
      const server = await startServe(serve);
      const health = server.port ? (await fetch(`${server.url}/healthz`)).status : undefined;
      const out = await server.stop();
      expect({ code: out.code, stderr: out.stderr, health }).toEqual({ code: 0, stderr: "", health: 200 });
      const masked = `postgres://${url.username}:***@${url.host}${url.pathname}`;
      expect(out.stdout.split("\n")[1]).toBe(`database: PostgreSQL ${masked}`);
      expect(out.stdout).not.toContain(PASSWORD);

      // The printed command names the database, not the data directory; with the password put
      // back it creates the admin there, and the next start-up no longer asks for one.
      const lines = out.stdout.trimEnd().split("\n");
      const command =
        lines[lines.findIndex((line) => line.startsWith("no admin account yet")) + 1]?.trim() ?? "";
      expect(command).toEndWith(
        ` user create --email admin@example.com --role admin --database-url '${masked}'`,
      );
      expect(lines).toContain("  (with the database password in place of ***)");
      const run = runInShell(command.replace("***", PASSWORD), "admin-password-1\n", tmpdir());
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      const again = await (await startServe(serve)).stop();
      expect(again.code).toBe(0);
      expect(again.stdout).not.toContain("no admin account yet");
    } finally {
      await database.drop();
    }
  });
});
