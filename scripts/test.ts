/**
 * `bun run test`: `bun run check`, then every test file on SQLite, then the service and API tests
 * again on a throwaway PostgreSQL cluster (scripts/pg-cluster.ts) with FERRY_TEST_DATABASE_URL set
 * to its maintenance database (tests/pg.ts makes a database per test server from it). Quiet like
 * bun's own runs: failures and summaries only, plus one line announcing the PostgreSQL run (the
 * noise check in .ci/run accepts exactly these). Exits non-zero when either run fails.
 *   bun scripts/test.ts                       everything
 *   bun scripts/test.ts --pg-only [files…]    only the PostgreSQL run, of these files (default: all of them)
 */
import { relative, resolve } from "node:path";
import { Glob } from "bun";
import { startCluster } from "./pg-cluster.ts";

const root = resolve(import.meta.dir, "..");

const BUN_TEST = ["bun", "test", "--only-failures", "--timeout", "60000"];

/**
 * What the PostgreSQL run skips (a folder ends in /): the browser and single-executable tests stay
 * on SQLite, and a few tests are about SQLite itself.
 */
export const SQLITE_ONLY = [
  "tests/e2e/", // Chromium and the single executable: the engine underneath is not what they test
  "src/db/read-cache.test.ts", // the read cache of the SQLite file
  "tests/disk-full.test.ts", // SQLITE_FULL on a full disk
  "cli/backup.test.ts", // `ferry backup` copying the SQLite file (pg_dump has its own tests)
  "cli/restore.test.ts", // `ferry restore` replacing the SQLite file (pg_restore: cli/pg-backup.test.ts)
];

/** Every *.test.ts that runs on PostgreSQL too, as paths from the repository root. */
export async function serviceAndApiTests(): Promise<string[]> {
  const files: string[] = [];
  for await (const file of new Glob("**/*.test.ts").scan({ cwd: root })) {
    if (file.split("/").includes("node_modules")) continue;
    if (!SQLITE_ONLY.some((skipped) => file.startsWith(skipped))) files.push(file);
  }
  return files.sort();
}

let running: Bun.Subprocess | null = null;

async function run(command: string[], env: Record<string, string> = {}): Promise<boolean> {
  running = Bun.spawn(command, {
    cwd: root,
    stdio: ["inherit", "inherit", "inherit"],
    env: { ...process.env, ...env },
  });
  const code = await running.exited;
  running = null;
  return code === 0;
}

async function onPostgres(files: string[]): Promise<boolean> {
  const cluster = await startCluster();
  // ctrl-C reaches bun test too; stop the cluster once it has ended. SIGTERM reaches us alone.
  const interrupt = async (signal: NodeJS.Signals) => {
    running?.kill(signal);
    await running?.exited;
    await cluster.stop();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);
  try {
    console.error(
      `== service and API tests on PostgreSQL ${cluster.version} (${files.length} file${files.length === 1 ? "" : "s"})`,
    );
    return await run([...BUN_TEST, ...files.map((file) => `./${file}`)], {
      FERRY_TEST_DATABASE_URL: cluster.url,
    });
  } finally {
    await cluster.stop();
  }
}

async function main(args: string[]): Promise<number> {
  if (args[0] === "--pg-only") {
    const given = args.slice(1).map((file) => relative(root, resolve(file)));
    return (await onPostgres(given.length > 0 ? given : await serviceAndApiTests())) ? 0 : 1;
  }
  if (args.length > 0) {
    console.error("usage: bun scripts/test.ts [--pg-only [files…]]");
    return 2;
  }
  if (!(await run(["bun", "run", "check"]))) return 1;
  const onSqlite = await run(BUN_TEST);
  const onPg = await onPostgres(await serviceAndApiTests());
  return onSqlite && onPg ? 0 : 1;
}

if (import.meta.main) {
  try {
    process.exit(await main(process.argv.slice(2)));
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exit(1);
  }
}
