/**
 * What every benchmark in scripts/bench/ shares: a private copy of the executable, its processes
 * (tracked so that a failure or Ctrl-C stops them), the load generator (load.ts) in its own
 * process with the server's CPU time over the same window, and the bare Bun.serve baseline
 * (bare.ts) answering exactly the bytes and headers ferry answered.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import type { LoadResult, LoadSpec } from "./load.ts";

export const root = join(import.meta.dir, "../..");
const bun = process.execPath;

type Child = ReturnType<typeof Bun.spawn>;

/** `--name value` from argv as a positive number, or the fallback. */
export function numberFlag(argv: string[], name: string, fallback: number): number {
  const index = argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(argv[index + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

export function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** A new database on a PostgreSQL cluster (its maintenance URL), and how to drop it. */
export async function createDatabase(
  clusterUrl: string,
  name: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = new SQL({ url: clusterUrl, max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const again = new SQL({ url: clusterUrl, max: 1 });
      await again.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.close();
    },
  };
}

export function rssMegabytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** A process's resident memory (MB): all of it, its anonymous part (heaps) and its file-backed part (mapped code and data). */
export interface MemoryFigures {
  rssMb: number;
  anonMb: number;
  fileMb: number;
}

export function memoryOf(pid: number): MemoryFigures {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rssMb: mb("VmRSS"), anonMb: mb("RssAnon"), fileMb: mb("RssFile") };
}

/** CPU time (user + system) a process has used, in µs. Linux reports it in USER_HZ = 100 ticks/s. */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

export type Measured = LoadResult & { serverCpuUsPerRequest: number };
export type LoadRequest = Omit<LoadSpec, "host" | "port" | "startAt">;

/** The answer a measured request got, to be served again by the baseline. */
/** Medians of ferry's and the bare baseline's rounds, and the throughput ratio the goals are set on. */
export function compareRuns(ferryRuns: Measured[], bareRuns: Measured[]) {
  const ferryRps = median(ferryRuns.map((r) => r.rps));
  const bareRps = median(bareRuns.map((r) => r.rps));
  return {
    ferryRps,
    bareRps,
    ratio: ferryRps / bareRps,
    ferryP50Ms: median(ferryRuns.map((r) => r.p50)),
    ferryP99Ms: median(ferryRuns.map((r) => r.p99)),
    bareP50Ms: median(bareRuns.map((r) => r.p50)),
    bareP99Ms: median(bareRuns.map((r) => r.p99)),
    ferryCpuUsPerRequest: median(ferryRuns.map((r) => r.serverCpuUsPerRequest)),
    bareCpuUsPerRequest: median(bareRuns.map((r) => r.serverCpuUsPerRequest)),
  };
}

export interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** Headers Bun.serve sets itself; everything else the baseline repeats. */
const TRANSPORT_HEADERS = new Set([
  "date",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
]);

export async function answerOf(response: Response): Promise<Answer> {
  const headers = [...response.headers].filter(([name]) => !TRANSPORT_HEADERS.has(name.toLowerCase()));
  return { status: response.status, headers, body: await response.text() };
}

/** A benchmark run: its temp directory, the processes it started, and how it starts more. */
export class Bench {
  readonly work = mkdtempSync(join(tmpdir(), "ferry-bench-"));
  /** The executable runs with almost nothing: no bun on PATH, no node_modules nearby. */
  readonly minimalEnv: Record<string, string>;
  readonly ferryPath = join(this.work, "ferry");
  private readonly children = new Set<Child>();

  constructor(private readonly log: (message: string) => void) {
    const emptyBin = join(this.work, "empty-bin");
    mkdirSync(emptyBin);
    this.minimalEnv = { PATH: emptyBin, HOME: this.work, LANG: "C.UTF-8" };
    process.on("SIGINT", () => void this.cleanup().then(() => process.exit(130)));
  }

  /**
   * `--database-url <cluster URL>`: the run's ferry processes use a scratch database made on that
   * PostgreSQL cluster (dropped by cleanup) instead of SQLite; answers its URL, or null without it.
   */
  async databaseFromArgs(argv: string[], name: string): Promise<string | null> {
    const index = argv.indexOf("--database-url");
    const clusterUrl = index >= 0 ? argv[index + 1] : undefined;
    if (!clusterUrl) return null;
    const scratch = await createDatabase(clusterUrl, `${name}_${process.pid}`);
    this.dropDatabase = scratch.drop;
    this.minimalEnv.FERRY_DATABASE_URL = scratch.url;
    process.env.FERRY_DATABASE_URL = scratch.url;
    return scratch.url;
  }

  private dropDatabase: (() => Promise<void>) | null = null;

  /** Builds dist/ferry (unless `build` is false and it exists) and runs a private copy of it. */
  prepareExecutable(build: boolean): string {
    const dist = join(root, "dist/ferry");
    if (build || !existsSync(dist)) {
      this.log("building dist/ferry …");
      const result = Bun.spawnSync([bun, join(root, "scripts/build.ts")], {
        cwd: root,
        stdout: "pipe",
        stderr: "pipe",
      });
      if (result.exitCode !== 0) throw new Error(`build failed:\n${result.stdout}\n${result.stderr}`);
    }
    // A private copy, so a rebuild meanwhile cannot swap the executable under the benchmark.
    writeFileSync(this.ferryPath, readFileSync(dist), { mode: 0o755 });
    return dist;
  }

  /** `ferry <args>` to completion in the minimal environment, `input` on stdin; throws with its stderr on failure. */
  ferrySync(args: string[], input = ""): string {
    const run = Bun.spawnSync([this.ferryPath, ...args], {
      cwd: this.work,
      env: this.minimalEnv,
      stdin: Buffer.from(input),
      stdout: "pipe",
      stderr: "pipe",
    });
    if (run.exitCode !== 0) throw new Error(`ferry ${args[0]} ${args[1] ?? ""} failed: ${run.stderr}`);
    return run.stdout.toString();
  }

  spawnFerry(dataDir: string, port: number): Child {
    return this.track(
      Bun.spawn([this.ferryPath, "serve", "--data", dataDir, "--port", String(port), "--host", "127.0.0.1"], {
        cwd: this.work,
        env: this.minimalEnv,
        stdout: "ignore",
        stderr: "inherit",
        stdin: "ignore",
      }),
    );
  }

  /** Another executable (its stdout piped, stderr shown), stopped by cleanup like ferry. */
  spawnExecutable(command: string[]): Child {
    return this.track(
      Bun.spawn(command, {
        cwd: this.work,
        env: this.minimalEnv,
        stdout: "pipe",
        stderr: "inherit",
        stdin: "ignore",
      }),
    );
  }

  /**
   * Polls /healthz every `pollMs` (as fast as it sensibly can by default); resolves with ms since
   * `since`. A memory measurement polls slower: hundreds of polls wake the JIT, which then holds
   * megabytes the idle server would not.
   */
  async untilHealthy(port: number, child: Child, since: number, pollMs = 1): Promise<number> {
    const deadline = since + 30_000;
    while (performance.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`ferry exited with ${child.exitCode} during start-up`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (response.status === 200) return performance.now() - since;
      } catch {
        // not listening yet
      }
      await Bun.sleep(pollMs);
    }
    throw new Error("ferry did not become healthy within 30 s");
  }

  /** The baseline server (its own process) answering every request with `answer`; resolves with its port. */
  async startBare(answer: Answer): Promise<{ port: number; pid: number }> {
    const specFile = join(this.work, `bare-${this.children.size}.json`);
    writeFileSync(specFile, JSON.stringify({ port: 0, ...answer }));
    const bare = this.track(
      Bun.spawn([bun, join(import.meta.dir, "bare.ts"), specFile], {
        cwd: root,
        stdout: "pipe",
        stderr: "inherit",
        stdin: "ignore",
      }),
    );
    const reader = (bare.stdout as ReadableStream<Uint8Array>).getReader();
    const ready = new TextDecoder().decode((await reader.read()).value);
    const port = Number(/ready (\d+)/.exec(ready)?.[1]);
    if (!port) throw new Error(`bare server did not start: ${ready}`);
    return { port, pid: bare.pid };
  }

  /**
   * One load run against a server process: the load generator in its own process, and meanwhile
   * the server's CPU time over the same window, so the cost per request can be compared even when
   * other work on the machine steals time (requests/second alone is noisy on a shared box).
   */
  runLoad(port: number, serverPid: number, request: LoadRequest): Promise<Measured> {
    const spec: LoadSpec = { host: "127.0.0.1", port, startAt: Date.now() + 200, ...request };
    const child = this.track(
      Bun.spawn([bun, join(import.meta.dir, "load.ts"), JSON.stringify(spec)], {
        cwd: root,
        stdout: "pipe",
        stderr: "inherit",
        stdin: "ignore",
      }),
    );
    return (async () => {
      const windowStart = spec.startAt + spec.warmupMs;
      await Bun.sleep(Math.max(0, windowStart - Date.now()));
      const cpuStart = cpuMicros(serverPid);
      await Bun.sleep(Math.max(0, windowStart + spec.durationMs - Date.now()));
      const cpuUsed = cpuMicros(serverPid) - cpuStart;
      const out = await new Response(child.stdout as ReadableStream<Uint8Array>).text();
      await child.exited;
      this.children.delete(child);
      if (child.exitCode !== 0) throw new Error(`load generator failed (${child.exitCode})`);
      const result = JSON.parse(out) as LoadResult;
      return { ...result, serverCpuUsPerRequest: result.requests ? cpuUsed / result.requests : Number.NaN };
    })();
  }

  /** Says so when a run saw anything but 200s of one length. */
  checkLoad(label: string, result: LoadResult) {
    const bad = Object.entries(result.statuses).filter(([status]) => status !== "200");
    if (bad.length || result.errors || result.otherLengths || result.requests === 0) {
      this.log(
        `  ! ${label}: statuses ${JSON.stringify(result.statuses)}, errors ${result.errors}, ` +
          `other body lengths ${result.otherLengths}`,
      );
    }
  }

  async stop(child: Child) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
      if (!exited) child.kill("SIGKILL");
      await child.exited;
    }
    this.children.delete(child);
  }

  async cleanup() {
    await Promise.all([...this.children].map((child) => this.stop(child)));
    await this.dropDatabase?.();
    rmSync(this.work, { recursive: true, force: true });
  }

  private track(child: Child): Child {
    this.children.add(child);
    return child;
  }
}
