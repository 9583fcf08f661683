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
 *        [--rounds 3] [--startups 7] [--database-url <PostgreSQL cluster URL>] [--json]
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { transformPassword } from "../../src/modules/user/password.ts";
import { fromBase64Json, toBase64Json } from "../../src/rpc/envelope.ts";
import {
  answerOf,
  Bench,
  compareRuns,
  freePort,
  type Measured,
  median,
  numberFlag,
  rssMegabytes,
} from "./common.ts";

const argv = process.argv.slice(2);
const flag = (name: string, fallback: number) => numberFlag(argv, name, fallback);

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

const bench = new Bench(log);

// ---- run -----------------------------------------------------------------------------------

try {
  const dist = bench.prepareExecutable(options.build);
  const databaseUrl = await bench.databaseFromArgs(argv, "ferry_bench_userinfo");

  // 1 + 2: start-up time and idle RSS.
  log(`start-up: ${options.startups} runs, fresh data dir each …`);
  const startupMs: number[] = [];
  const idleRss: number[] = [];
  for (let run = 0; run < options.startups; run += 1) {
    const port = freePort();
    const dataDir = join(bench.work, `startup-${run}`);
    const started = performance.now();
    const child = bench.spawnFerry(dataDir, port);
    startupMs.push(await bench.untilHealthy(port, child, started));
    if (!databaseUrl && !existsSync(join(dataDir, "ferry.db"))) throw new Error("ferry.db was not created");
    await Bun.sleep(1000);
    idleRss.push(rssMegabytes(child.pid));
    await bench.stop(child);
  }

  // 3: throughput of userinfo with a session.
  const dataDir = join(bench.work, "load");
  const email = "bench@example.com";
  const password = "bench-password-1";
  bench.ferrySync(["user", "create", "--email", email, "--data", dataDir], `${password}\n`);

  const ferryPort = freePort();
  const ferry = bench.spawnFerry(dataDir, ferryPort);
  await bench.untilHealthy(ferryPort, ferry, performance.now());
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
  const answer = await answerOf(probe);
  const probeBody = answer.body;
  const envelope = fromBase64Json((JSON.parse(probeBody) as { data: string }).data);
  if (!envelope.ok || (envelope.value as { code: number }).code !== 0) {
    throw new Error(`userinfo did not answer code 0: ${probeBody}`);
  }
  const bare = await bench.startBare(answer);
  const barePort = bare.port;
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
    const f = await bench.runLoad(ferryPort, ferry.pid, load);
    bench.checkLoad("ferry", f);
    ferryRuns.push(f);
    const b = await bench.runLoad(barePort, bare.pid, load);
    bench.checkLoad("bare", b);
    bareRuns.push(b);
    log(
      `  round ${round}: ferry ${Math.round(f.rps)} req/s (${f.serverCpuUsPerRequest.toFixed(1)} µs CPU/req), ` +
        `bare ${Math.round(b.rps)} req/s (${b.serverCpuUsPerRequest.toFixed(1)} µs CPU/req)`,
    );
  }
  const loadedRss = rssMegabytes(ferry.pid);

  const compared = compareRuns(ferryRuns, bareRuns);
  const summary = {
    engine: databaseUrl ? "postgres" : "sqlite",
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
      goal: GOAL,
      ...compared,
      ferryRssAfterLoadMb: loadedRss,
    },
  };

  if (options.json) {
    console.log(JSON.stringify(summary, null, 2));
  } else {
    const u = summary.userinfo;
    const lines = [
      "",
      `Ferry benchmark summary (${databaseUrl ? "PostgreSQL" : "SQLite"})`,
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
  await bench.cleanup();
}
