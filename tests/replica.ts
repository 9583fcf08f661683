/**
 * One replica of several: a real `ferry serve` child process (`bun src/main.ts serve`, as an
 * operator runs it) with its own port and data folder on a shared PostgreSQL database, behind a
 * reverse proxy (`--trust-proxy`), allowed to reach the fakes on loopback (`--allow-private-urls`).
 * Its output is read all along (a full pipe would stall it) and kept for the test to show.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

export interface Replica {
  name: string;
  pid: number;
  port: number;
  /** http://127.0.0.1:<port>, the replica itself (not through the proxy). */
  url: string;
  dataDir: string;
  /** What it printed so far, stdout and stderr. */
  output(): { stdout: string; stderr: string };
  /** False once it exited (stopped or killed). */
  readonly alive: boolean;
  /** `kill -9`: no clean stop, its leases stay until they expire. */
  kill(): Promise<void>;
  /** SIGTERM and its exit code; nothing when it already exited. Deletes its data folder. */
  stop(): Promise<number | null>;
}

/** The test process's environment without the FERRY_* variables that would steer `serve`. */
function serveEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("FERRY_")));
}

/** Starts a replica and waits for its "listening on" line (or throws with what it printed instead). */
export async function startReplica(name: string, databaseUrl: string): Promise<Replica> {
  const dataDir = mkdtempSync(join(tmpdir(), `ferry-replica-${name}-`));
  const proc = Bun.spawn(
    [
      process.execPath,
      join(ROOT, "src/main.ts"),
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--data",
      dataDir,
      "--database-url",
      databaseUrl,
      "--allow-private-urls",
      "--trust-proxy",
    ],
    { cwd: ROOT, env: serveEnv(), stdout: "pipe", stderr: "pipe" },
  );
  const out = { stdout: "", stderr: "" };
  let exited = false;
  const listening = Promise.withResolvers<number>();
  const drain = async (stream: ReadableStream<Uint8Array>, key: "stdout" | "stderr") => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      out[key] += decoder.decode(chunk, { stream: true });
      const port = /listening on \S+:(\d+)/.exec(out.stdout)?.[1];
      if (port) listening.resolve(Number(port));
    }
  };
  const drained = Promise.all([
    drain(proc.stdout as ReadableStream<Uint8Array>, "stdout"),
    drain(proc.stderr as ReadableStream<Uint8Array>, "stderr"),
  ]);
  void proc.exited.then(async () => {
    exited = true;
    await drained;
    listening.reject(new Error(`replica ${name} exited before listening:\n${out.stdout}${out.stderr}`));
  });
  const port = await listening.promise;
  return {
    name,
    pid: proc.pid,
    port,
    url: `http://127.0.0.1:${port}`,
    dataDir,
    output: () => ({ ...out }),
    get alive() {
      return !exited;
    },
    async kill() {
      proc.kill("SIGKILL");
      await proc.exited;
      await drained;
    },
    async stop() {
      let code: number | null = null;
      if (!exited) {
        proc.kill("SIGTERM");
        code = await proc.exited;
      }
      await drained;
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
