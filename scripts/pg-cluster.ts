/**
 * A throwaway PostgreSQL cluster for the tests (`scripts/test.ts`): initdb in a fresh temp dir,
 * trust auth, superuser `ferry`, a free port on 127.0.0.1, its unix socket in the same dir, and
 * durability switched off (nothing in it needs to survive a crash). `stop()` kills it and removes
 * the dir. initdb refuses to run as root, so as root the dir is handed to the `postgres` user that
 * Debian's package creates and initdb and pg_ctl run through `runuser`.
 *   bun scripts/pg-cluster.ts      starts one, prints its URL, stops it on Enter or ctrl-C
 */
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Cluster {
  /** The maintenance database as superuser: postgres://ferry@127.0.0.1:<port>/postgres */
  url: string;
  /** The server's version, e.g. "15.14". */
  version: string;
  /** Kills the server (as a crash would) and keeps its data; `resume()` starts it again on the same port. */
  halt(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

const OLDEST_MAJOR = 15;
const DEBIAN_ROOT = "/usr/lib/postgresql";

const SETTINGS = {
  listen_addresses: "'127.0.0.1'",
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
  max_connections: "300",
};

/** The bin dir of the newest PostgreSQL under /usr/lib/postgresql, else initdb's dir on PATH. */
function binDir(): string {
  const majors = existsSync(DEBIAN_ROOT)
    ? readdirSync(DEBIAN_ROOT)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(DEBIAN_ROOT, name, "bin", "initdb")))
        .map(Number)
        .sort((a, b) => b - a)
    : [];
  const newest = majors[0];
  if (newest !== undefined) {
    if (newest < OLDEST_MAJOR)
      throw new Error(`PostgreSQL ${newest} is too old: Ferry needs ${OLDEST_MAJOR} or newer`);
    return join(DEBIAN_ROOT, String(newest), "bin");
  }
  const initdb = Bun.which("initdb");
  if (initdb) return initdb.slice(0, initdb.lastIndexOf("/"));
  throw new Error(
    `PostgreSQL is not installed (no ${DEBIAN_ROOT}/<version>/bin/initdb, no initdb on PATH): apt-get install -y postgresql`,
  );
}

/** A port nothing listens on right now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

interface Runner {
  run(args: string[]): Promise<{ ok: boolean; output: string }>;
}

/** Runs the cluster's programs as ourselves, or as `postgres` when we are root. */
function runner(dir: string): Runner {
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = Bun.spawnSync(["id", "-u", "postgres"]);
    const gids = Bun.spawnSync(["id", "-g", "postgres"]);
    if (ids.exitCode !== 0 || gids.exitCode !== 0)
      throw new Error(
        "running as root and there is no user postgres to run initdb as (Debian's postgresql package creates it)",
      );
    chownSync(dir, Number(ids.stdout.toString()), Number(gids.stdout.toString()));
  }
  return {
    async run(args) {
      const child = Bun.spawn(asRoot ? ["runuser", "-u", "postgres", "--", ...args] : args, {
        cwd: dir,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      return { ok: code === 0, output: `${stdout}${stderr}`.trim() };
    },
  };
}

function lastLines(text: string, count = 5): string {
  return text.split("\n").slice(-count).join("\n");
}

export async function startCluster(): Promise<Cluster> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "ferry-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "log");
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const { run } = runner(dir);
    // C collation sorts text by bytes, as SQLite does.
    const init = await run([
      join(bin, "initdb"),
      "-D",
      data,
      "-A",
      "trust",
      "-U",
      "ferry",
      "-E",
      "UTF8",
      "--no-locale",
      "--no-sync",
    ]);
    if (!init.ok) throw new Error(`initdb failed: ${lastLines(init.output)}`);
    const settings = { ...SETTINGS, unix_socket_directories: `'${dir}'` };
    appendFileSync(
      join(data, "postgresql.conf"),
      `\n# scripts/pg-cluster.ts: a throwaway test cluster\n${Object.entries(settings)
        .map(([name, value]) => `${name} = ${value}`)
        .join("\n")}\n`,
    );
    // Another process may take the free port before the server binds it: try a fresh one.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const start = await run([
        join(bin, "pg_ctl"),
        "-D",
        data,
        "-l",
        log,
        "-w",
        "-t",
        "60",
        "-o",
        `-p ${port}`,
        "start",
      ]);
      if (start.ok) {
        const version =
          /\d+(\.\d+)*/.exec((await run([join(bin, "postgres"), "--version"])).output)?.[0] ?? "?";
        let stopping: Promise<void> | null = null;
        const halt = async () => {
          await run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
        };
        const stop = async () => {
          await halt();
          remove();
        };
        const resume = async () => {
          const again = await run([
            join(bin, "pg_ctl"),
            "-D",
            data,
            "-l",
            log,
            "-w",
            "-o",
            `-p ${port}`,
            "start",
          ]);
          if (!again.ok) throw new Error(`pg_ctl start failed: ${lastLines(again.output)}`);
        };
        return {
          url: `postgres://ferry@127.0.0.1:${port}/postgres`,
          version,
          halt,
          resume,
          stop: () => (stopping ??= stop()),
        };
      }
      if (attempt === 3) {
        const serverLog = existsSync(log) ? await Bun.file(log).text() : "";
        throw new Error(`pg_ctl start failed: ${lastLines(`${start.output}\n${serverLog}`.trim())}`);
      }
    }
  } catch (error) {
    remove();
    throw error;
  }
}

if (import.meta.main) {
  try {
    const cluster = await startCluster();
    console.log(`PostgreSQL ${cluster.version} at ${cluster.url} (Enter or ctrl-C stops it)`);
    const stop = () => cluster.stop().then(() => process.exit(0));
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    for await (const _ of console) break;
    await stop();
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exit(1);
  }
}
