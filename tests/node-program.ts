/**
 * The node program (`ferry node run`) as the tests that run it against a real v2ray start it: a
 * child process from source with its output in log files under the test's folder, its control
 * port's /status, and polling until something holds, failing with the program's logs.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { AgentRow } from "../src/modules/node-record/service.ts";
import type { AgentStatus } from "../src/node-program/control.ts";

const ROOT = join(import.meta.dir, "..");

/** Starts `ferry node run` for `node` on the core at /usr/bin/v2ray, writing `<log>` and `<log>.err`. */
export function startNodeProgram(options: {
  panelUrl: string;
  node: Pick<AgentRow, "node_no" | "api_token">;
  dataDir: string;
  apiPort: number;
  log: string;
  extraArgs?: string[];
}): Subprocess {
  return Bun.spawn(
    [
      process.execPath,
      "src/main.ts",
      "node",
      "run",
      `--panel=${options.panelUrl}`,
      `--node-id=${options.node.node_no}`,
      `--token=${options.node.api_token}`,
      `--data-dir=${options.dataDir}`,
      "--core-bin=/usr/bin/v2ray",
      `--api-port=${options.apiPort}`,
      "--listen=127.0.0.1",
      "--ctrl-host=127.0.0.1",
      ...(options.extraArgs ?? []),
    ],
    { cwd: ROOT, stdout: Bun.file(options.log), stderr: Bun.file(`${options.log}.err`) },
  );
}

/** The node program's /status on its control port, or null while it does not answer. */
export async function nodeProgramStatus(ctrlPort: number, token: string): Promise<AgentStatus | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${ctrlPort}/status`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(2_000),
    });
    return response.ok ? ((await response.json()) as AgentStatus) : null;
  } catch {
    return null;
  }
}

/** Every file in `dir` whose name starts with `prefix`, in name order, each under a `--- name` line. */
export function logsIn(dir: string, prefix: string): string {
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .sort()
    .map((name) => `--- ${name}\n${readFileSync(join(dir, name), "utf8")}`)
    .join("\n");
}

/**
 * Polls `probe` every `everyMs` until `done` holds; past the deadline fails with the last value
 * and `context()` (the node program's logs).
 */
export async function pollUntil<T>(
  what: string,
  withinMs: number,
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  { everyMs, context }: { everyMs: number; context: () => string },
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${withinMs} ms (last: ${JSON.stringify(value)})\n${context()}`);
    }
    await Bun.sleep(everyMs);
  }
}

/** The pid of the core the node program last started in `dataDir` (its core.pid), or 0. */
export function corePidIn(dataDir: string): number {
  const file = join(dataDir, "core.pid");
  return existsSync(file) ? Number(readFileSync(file, "utf8")) : 0;
}

export function processAlive(pid: number): boolean {
  try {
    return pid > 0 && readFileSync(`/proc/${pid}/cmdline`, "utf8") !== "";
  } catch {
    return false;
  }
}
