/**
 * `bun run bench`: how fast is dist/ferry, against a baseline measured in the same run (DESIGN §8).
 *
 * 1. start-up: dist/ferry from exec to the first `GET /healthz` 200, fresh data dir each run (median);
 * 2. idle RSS: VmRSS of dist/ferry ~1 s after it became healthy (median over the start-up runs);
 * 3. throughput: `POST /api/user/userinfo` with a logged-in session cookie, requests/second at a
 *    fixed number of keep-alive connections, from a separate load process (scripts/bench/load.ts);
 *    then the same load against a bare Bun.serve (scripts/bench/bare.ts, its own process)
 *    answering the exact same bytes and headers. Rounds alternate ferry / bare; medians are used.
 *    Each run also reads the server process's CPU time over the window (/proc/<pid>/stat), giving
 *    CPU µs per request: on a shared machine that is steadier than requests/second.
 *
 * Everything runs on 127.0.0.1 with temp data dirs and is bounded in time. It prints; it never
 * asserts on time (the goal ferry/bare ≥ 0.35 is reported, not enforced).
 *
 * Usage: bun scripts/bench/userinfo.ts [--no-build] [--connections 64] [--duration 5] [--warmup 1]
 *        [--rounds 3] [--startups 7] [--json]
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transformPassword } from "../../src/modules/user/password.ts";
import { fromBase64Json, toBase64Json } from "../../src/rpc/envelope.ts";
import type { LoadResult, LoadSpec } from "./load.ts";

const root = join(import.meta.dir, "../..");
const bun = process.execPath;
const argv = process.argv.slice(2);

function flag(name: string, fallback: number): number {
  const index = argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(argv[index + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

const options = {
  build: !argv.includes("--no-build"),
  connections: flag("connections", 64),
  durationMs: flag("duration", 5) * 1000,
  warmupMs: flag("warmup", 1) * 1000,
  rounds: flag("rounds", 3),
  startups: flag("startups", 7),
  json: argv.includes("--json"),
};
const GOAL = 0.35;

const log = (message: string) => {
  if (!options.json) console.error(message);
};

// ---- helpers -------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), "ferry-bench-"));
const emptyBin = join(work, "empty-bin");
mkdirSync(emptyBin);
/** The executable runs with almost nothing: no bun on PATH, no node_modules nearby. */
const minimalEnv = { PATH: emptyBin, HOME: work, LANG: "C.UTF-8" };
const children = new Set<ReturnType<typeof Bun.spawn>>();

function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function rssMegabytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function stop(child: ReturnType<typeof Bun.spawn>) {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill("SIGTERM");
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
    if (!exited) child.kill("SIGKILL");
    await child.exited;
  }
  children.delete(child);
}

async function cleanup() {
  await Promise.all([...children].map(stop));
  rmSync(work, { recursive: true, force: true });
}

process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));

function spawnFerry(dataDir: string, port: number) {
  const child = Bun.spawn(
    [join(work, "ferry"), "serve", "--data", dataDir, "--port", String(port), "--host", "127.0.0.1"],
    { cwd: work, env: minimalEnv, stdout: "ignore", stderr: "inherit", stdin: "ignore" },
  );
  children.add(child);
  return child;
}

/** Polls /healthz as fast as it sensibly can; resolves with ms since `since`. */
async function untilHealthy(
  port: number,
  child: ReturnType<typeof Bun.spawn>,
  since: number,
): Promise<number> {
  const deadline = since + 30_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`ferry exited with ${child.exitCode} during start-up`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.status === 200) return performance.now() - since;
    } catch {
      // not listening yet
    }
    await Bun.sleep(1);
  }
  throw new Error("ferry did not become healthy within 30 s");
}

/** CPU time (user + system) a process has used, in µs. Linux reports it in USER_HZ = 100 ticks/s. */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

type Measured = LoadResult & { serverCpuUsPerRequest: number };

/**
 * One load run against a server process: the load generator in its own process, and meanwhile the
 * server's CPU time over the same window, so the cost per request can be compared even when other
 * work on the machine steals time (requests/second alone is noisy on a shared box).
 */
function runLoad(
  port: number,
  serverPid: number,
  request: Omit<LoadSpec, "host" | "port" | "startAt">,
): Promise<Measured> {
  const spec: LoadSpec = { host: "127.0.0.1", port, startAt: Date.now() + 200, ...request };
  const child = Bun.spawn([bun, join(import.meta.dir, "load.ts"), JSON.stringify(spec)], {
    cwd: root,
    stdout: "pipe",
    stderr: "inherit",
    stdin: "ignore",
  });
  children.add(child);
  return (async () => {
    const windowStart = spec.startAt + spec.warmupMs;
    await Bun.sleep(Math.max(0, windowStart - Date.now()));
    const cpuStart = cpuMicros(serverPid);
    await Bun.sleep(Math.max(0, windowStart + spec.durationMs - Date.now()));
    const cpuUsed = cpuMicros(serverPid) - cpuStart;
    const out = await new Response(child.stdout).text();
    await child.exited;
    children.delete(child);
    if (child.exitCode !== 0) throw new Error(`load generator failed (${child.exitCode})`);
    const result = JSON.parse(out) as LoadResult;
    return { ...result, serverCpuUsPerRequest: result.requests ? cpuUsed / result.requests : Number.NaN };
  })();
}

function checkLoad(label: string, result: LoadResult) {
  const bad = Object.entries(result.statuses).filter(([status]) => status !== "200");
  if (bad.length || result.errors || result.otherLengths || result.requests === 0) {
    log(
      `  ! ${label}: statuses ${JSON.stringify(result.statuses)}, errors ${result.errors}, ` +
        `other body lengths ${result.otherLengths}`,
    );
  }
}

// ---- run -----------------------------------------------------------------------------------

try {
  const dist = join(root, "dist/ferry");
  if (options.build || !existsSync(dist)) {
    log("building dist/ferry …");
    const build = Bun.spawnSync([bun, join(root, "scripts/build.ts")], {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
    });
    if (build.exitCode !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`);
  }
  // Run a private copy, so a rebuild meanwhile cannot swap the executable under the benchmark.
  writeFileSync(join(work, "ferry"), readFileSync(dist), { mode: 0o755 });

  // 1 + 2: start-up time and idle RSS.
  log(`start-up: ${options.startups} runs, fresh data dir each …`);
  const startupMs: number[] = [];
  const idleRss: number[] = [];
  for (let run = 0; run < options.startups; run += 1) {
    const port = freePort();
    const dataDir = join(work, `startup-${run}`);
    const started = performance.now();
    const child = spawnFerry(dataDir, port);
    startupMs.push(await untilHealthy(port, child, started));
    if (!existsSync(join(dataDir, "ferry.db"))) throw new Error("ferry.db was not created");
    await Bun.sleep(1000);
    idleRss.push(rssMegabytes(child.pid));
    await stop(child);
  }

  // 3: throughput of userinfo with a session.
  const dataDir = join(work, "load");
  const email = "bench@example.com";
  const password = "bench-password-1";
  const create = Bun.spawnSync(
    [join(work, "ferry"), "user", "create", "--email", email, "--password", password, "--data", dataDir],
    { cwd: work, env: minimalEnv, stdout: "pipe", stderr: "pipe" },
  );
  if (create.exitCode !== 0) throw new Error(`user create failed: ${create.stderr}`);

  const ferryPort = freePort();
  const ferry = spawnFerry(dataDir, ferryPort);
  await untilHealthy(ferryPort, ferry, performance.now());
  const base = `http://127.0.0.1:${ferryPort}`;
  const login = await fetch(`${base}/api/user/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ data: toBase64Json({ email, password: transformPassword(password) }) }),
  });
  const token = login.headers
    .getSetCookie()
    .map((line) => /^token=([^;]+)/.exec(line)?.[1])
    .find(Boolean);
  if (!token) throw new Error(`login gave no session cookie (HTTP ${login.status})`);

  const request = {
    method: "POST",
    path: "/api/user/userinfo",
    headers: { "content-type": "application/json", cookie: `token=${token}` },
    body: JSON.stringify({ data: toBase64Json({}) }),
  };
  // The exact answer ferry gives; the bare server will give the same bytes and headers.
  const probe = await fetch(base + request.path, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
  const probeBody = await probe.text();
  const envelope = fromBase64Json((JSON.parse(probeBody) as { data: string }).data);
  if (!envelope.ok || (envelope.value as { code: number }).code !== 0) {
    throw new Error(`userinfo did not answer code 0: ${probeBody}`);
  }
  const skip = new Set(["date", "content-length", "connection", "keep-alive", "transfer-encoding"]);
  const headers = [...probe.headers].filter(([name]) => !skip.has(name.toLowerCase()));
  const bareSpecFile = join(work, "bare.json");
  writeFileSync(bareSpecFile, JSON.stringify({ port: 0, status: probe.status, headers, body: probeBody }));
  const bare = Bun.spawn([bun, join(import.meta.dir, "bare.ts"), bareSpecFile], {
    cwd: root,
    stdout: "pipe",
    stderr: "inherit",
    stdin: "ignore",
  });
  children.add(bare);
  const reader = (bare.stdout as ReadableStream<Uint8Array>).getReader();
  const ready = new TextDecoder().decode((await reader.read()).value);
  const barePort = Number(/ready (\d+)/.exec(ready)?.[1]);
  if (!barePort) throw new Error(`bare server did not start: ${ready}`);
  const bareProbe = await fetch(`http://127.0.0.1:${barePort}${request.path}`, {
    method: "POST",
    body: "{}",
  });
  if ((await bareProbe.text()) !== probeBody) throw new Error("bare server answers different bytes");

  const load = {
    ...request,
    connections: options.connections,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
  };
  log(
    `throughput: POST ${request.path}, ${options.connections} connections, ` +
      `${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s, ${options.rounds} rounds …`,
  );
  const ferryRuns: Measured[] = [];
  const bareRuns: Measured[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const f = await runLoad(ferryPort, ferry.pid, load);
    checkLoad("ferry", f);
    ferryRuns.push(f);
    const b = await runLoad(barePort, bare.pid, load);
    checkLoad("bare", b);
    bareRuns.push(b);
    log(
      `  round ${round}: ferry ${Math.round(f.rps)} req/s (${f.serverCpuUsPerRequest.toFixed(1)} µs CPU/req), ` +
        `bare ${Math.round(b.rps)} req/s (${b.serverCpuUsPerRequest.toFixed(1)} µs CPU/req)`,
    );
  }
  const loadedRss = rssMegabytes(ferry.pid);

  const ferryRps = median(ferryRuns.map((r) => r.rps));
  const bareRps = median(bareRuns.map((r) => r.rps));
  const ratio = ferryRps / bareRps;
  const summary = {
    executable: {
      path: "dist/ferry",
      megabytes: Number((readFileSync(dist).length / 1024 / 1024).toFixed(1)),
    },
    startupMs: { median: median(startupMs), runs: startupMs.map((ms) => Math.round(ms * 10) / 10) },
    idleRssMb: { median: median(idleRss), runs: idleRss.map((mb) => Math.round(mb * 10) / 10) },
    userinfo: {
      connections: options.connections,
      seconds: options.durationMs / 1000,
      rounds: options.rounds,
      ferryRps,
      bareRps,
      ratio,
      goal: GOAL,
      ferryP50Ms: median(ferryRuns.map((r) => r.p50)),
      ferryP99Ms: median(ferryRuns.map((r) => r.p99)),
      bareP50Ms: median(bareRuns.map((r) => r.p50)),
      bareP99Ms: median(bareRuns.map((r) => r.p99)),
      ferryCpuUsPerRequest: median(ferryRuns.map((r) => r.serverCpuUsPerRequest)),
      bareCpuUsPerRequest: median(bareRuns.map((r) => r.serverCpuUsPerRequest)),
      ferryRssAfterLoadMb: loadedRss,
    },
  };

  if (options.json) {
    console.log(JSON.stringify(summary, null, 2));
  } else {
    const u = summary.userinfo;
    const lines = [
      "",
      "Ferry benchmark summary",
      "───────────────────────",
      `executable            dist/ferry, ${summary.executable.megabytes} MB`,
      `start-up to /healthz  ${summary.startupMs.median.toFixed(1)} ms median (${summary.startupMs.runs.join(", ")})`,
      `idle RSS              ${summary.idleRssMb.median.toFixed(1)} MB median (${summary.idleRssMb.runs.join(", ")})`,
      `userinfo, ferry       ${Math.round(u.ferryRps)} req/s  (p50 ${u.ferryP50Ms.toFixed(2)} ms, p99 ${u.ferryP99Ms.toFixed(2)} ms)`,
      `same bytes, bare      ${Math.round(u.bareRps)} req/s  (p50 ${u.bareP50Ms.toFixed(2)} ms, p99 ${u.bareP99Ms.toFixed(2)} ms)`,
      `ratio ferry / bare    ${u.ratio.toFixed(3)}  (goal ≥ ${GOAL}: ${u.ratio >= GOAL ? "met" : "NOT met"})`,
      `server CPU / request  ferry ${u.ferryCpuUsPerRequest.toFixed(1)} µs, bare ${u.bareCpuUsPerRequest.toFixed(1)} µs ` +
        `(bare / ferry ${(u.bareCpuUsPerRequest / u.ferryCpuUsPerRequest).toFixed(3)}; steadier than req/s on a busy machine)`,
      `RSS after load        ${u.ferryRssAfterLoadMb.toFixed(1)} MB`,
      `(${u.connections} keep-alive connections, ${u.seconds} s per round, median of ${u.rounds} rounds)`,
    ];
    console.log(lines.join("\n"));
  }
} finally {
  await cleanup();
}
