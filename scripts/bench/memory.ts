/**
 * `bun run bench:memory`: how much memory dist/ferry holds, against a compiled bare Bun.serve
 * measured in the same run (issue 31: idle ≤ 45 MB, growth from 0 to 100,000 users ≤ 20 MB).
 *
 * 1. bare: scripts/bench/bare.ts compiled like ferry (--compile --minify --bytecode), idle;
 * 2. ferry, 0 users: `ferry serve` on a fresh data directory, idle after start-up;
 * 3. ferry, N users (default 100,000): the same on a database seeded by seedUsers (the real
 *    migrations, rows the product serves), idle after start-up;
 * 4. after a little traffic: on that database, a few customers log in, ask userinfo and fetch
 *    their subscription in two formats; then idle again.
 * Each figure is VmRSS --settle seconds after /healthz answered (polled every 50 ms) (the median of --startups
 * start-ups), with its anonymous part (heaps) and its file-backed part (the executable's code
 * and embedded files as far as they were touched).
 *
 * It prints; it never asserts (the goals are reported, not enforced).
 *
 * `--causes` adds where the memory goes: a ladder of compiled probes, each adding one cause
 * (SQLite, Intl, zod, the other libraries, the server's modules, the router), then dist/ferry.
 *
 * The executable is a fresh private copy, wholly in the page cache: at each page fault the kernel
 * maps the cached pages around it too (fault-around), so the file-backed part reads a few MB
 * higher than for an executable read from disk. Before and after figures must come from the same
 * procedure (this one).
 *
 * Usage: bun scripts/bench/memory.ts [--no-build] [--users 100000] [--startups 3] [--settle 1.5]
 *        [--causes] [--database-url <PostgreSQL cluster URL>] [--json]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { type Db, openDatabase } from "../../src/db/db.ts";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/embedded.ts";
import { GB } from "../../src/lib/traffic.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { toBase64Json } from "../../src/rpc/envelope.ts";
import { newId, randomHex } from "../../src/rpc/ids.ts";
import { subscriptionUrl } from "../../src/subscription/clients.ts";
import {
  Bench,
  createDatabase,
  freePort,
  type MemoryFigures,
  median,
  memoryOf,
  numberFlag,
} from "./common.ts";

/** Every seeded customer's password (they share the first one's hash). */
export const SEED_PASSWORD = "bench-password-1";
/** The e-mail of the i-th seeded customer (0-based). */
export const seedEmail = (i: number) => `seed-${i}@bench.example`;
const INSERT_BATCH = 1_000;

/**
 * Puts `count` customers into the database at `target` (`file`: a SQLite file, created and
 * migrated if needed; `url`: PostgreSQL), as the product would hold them: the first made by the
 * real createUser (password hash, balance row, audit and webhook rows), the others copies of it
 * with their own id, e-mail, subscription key and proxy secret, inserted 1,000 per statement in
 * one transaction (the balances row comes from the migrations' trigger); every one then has
 * 100 GB of permanent traffic (37 GB used) and a paid VIP month. 100,000 take a few seconds on
 * SQLite. Answers the customers' ids in order; `seedEmail(i)` / SEED_PASSWORD log them in.
 */
export async function seedUsers(target: { file: string; url?: string }, count: number): Promise<string[]> {
  const db = await openDatabase(target);
  try {
    await migrate(db, migrations);
    const ctx = createContext(db);
    const first = await createUser(ctx, {
      email: seedEmail(0),
      passwordDigest: transformPassword(SEED_PASSWORD),
      emailVerified: true,
    });
    const now = Date.now();
    const ids = [first.id];
    await db.tx(async () => {
      for (let start = 1; start < count; start += INSERT_BATCH) {
        const rows: (string | number)[][] = [];
        for (let i = start; i < Math.min(count, start + INSERT_BATCH); i += 1) {
          const id = newId(now - (count - i) * 1000);
          ids.push(id);
          rows.push([id, seedEmail(i), first.password_hash, randomHex(16), crypto.randomUUID(), now - i]);
        }
        await insertUserRows(db, rows);
      }
      await db.run(
        "UPDATE balances SET traffic = ?, spend_traffic = ? WHERE user_id IN (SELECT id FROM users WHERE email LIKE ?)",
        100 * GB,
        37 * GB,
        "seed-%@bench.example",
      );
      await db.run(
        "UPDATE users SET vip_expire_time = ?, paid_user = 1 WHERE email LIKE ?",
        now + 30 * 86_400_000,
        "seed-%@bench.example",
      );
    });
    return ids;
  } finally {
    await db.close();
  }
}

async function insertUserRows(db: Db, rows: (string | number)[][]) {
  if (rows.length === 0) return;
  const values = rows.map(() => "(?, ?, ?, 'normal', 1, ?, ?, ?)").join(", ");
  await db.run(
    `INSERT INTO users (id, email, password_hash, type, email_verified, userkey, proxy_secret, create_time) VALUES ${values}`,
    ...rows.flat(),
  );
}

// ---- the benchmark -----------------------------------------------------------------------------

const GOAL_IDLE_MB = 45;
const GOAL_GROWTH_MB = 20;
/** How often start-up polls /healthz: gently, as a supervisor would (common.ts untilHealthy says why). */
const HEALTH_POLL_MS = 50;

async function main(argv: string[]) {
  const options = {
    build: !argv.includes("--no-build"),
    users: numberFlag(argv, "users", 100_000),
    startups: numberFlag(argv, "startups", 3),
    settleMs: numberFlag(argv, "settle", 1.5) * 1000,
    json: argv.includes("--json"),
    causes: argv.includes("--causes"),
  };
  const log = (message: string) => {
    if (!options.json) console.error(message);
  };
  const bench = new Bench(log);
  let dropSeeded: (() => Promise<void>) | null = null;
  try {
    bench.prepareExecutable(options.build);
    const bareExecutable = compileBare(bench);
    const urlIndex = argv.indexOf("--database-url");
    const clusterUrl = urlIndex >= 0 ? argv[urlIndex + 1] : undefined;

    /** Median figures of `runs` idle start-ups of a server. */
    const idle = async (label: string, start: () => Promise<{ pid: number; stop: () => Promise<void> }>) => {
      const runs: MemoryFigures[] = [];
      for (let run = 0; run < options.startups; run += 1) {
        const server = await start();
        await Bun.sleep(options.settleMs);
        runs.push(memoryOf(server.pid));
        await server.stop();
      }
      const figures = medianFigures(runs);
      log(
        `  ${label}: ${figures.rssMb.toFixed(1)} MB (runs ${runs.map((r) => r.rssMb.toFixed(1)).join(", ")})`,
      );
      return figures;
    };

    const startFerry = (dataDir: string) => async () => {
      const port = freePort();
      const child = bench.spawnFerry(dataDir, port);
      await bench.untilHealthy(port, child, performance.now(), HEALTH_POLL_MS);
      return { pid: child.pid, port, stop: () => bench.stop(child) };
    };

    log(
      `idle memory, median of ${options.startups} start-ups, ${options.settleMs / 1000} s after /healthz …`,
    );
    const bare = await idle("bare Bun.serve (compiled)", async () => {
      const child = bench.spawnExecutable([bareExecutable, writeBareSpec(bench)]);
      await bench.untilHealthy(await readyPort(child), child, performance.now(), HEALTH_POLL_MS);
      return { pid: child.pid, stop: () => bench.stop(child) };
    });

    // On PostgreSQL the 0-user figure gets a scratch database (dropped by cleanup) and the seeded
    // ones another (dropped below); the executable follows FERRY_DATABASE_URL.
    await bench.databaseFromArgs(argv, "ferry_bench_memory_empty");
    const empty = await idle("ferry, 0 users", async () =>
      startFerry(join(bench.work, `empty-${Math.random().toString(36).slice(2)}`))(),
    );

    const seededDir = join(bench.work, "seeded");
    const seededDb = clusterUrl
      ? await createDatabase(clusterUrl, `ferry_bench_memory_seeded_${process.pid}`)
      : null;
    const seededUrl = seededDb?.url ?? null;
    dropSeeded = seededDb?.drop ?? null;
    if (seededUrl) bench.minimalEnv.FERRY_DATABASE_URL = seededUrl;
    const seedStarted = performance.now();
    const ids = await seedUsers(
      { file: join(seededDir, "ferry.db"), url: seededUrl ?? undefined },
      options.users,
    );
    log(`  seeded ${options.users} customers in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    const seeded = await idle(`ferry, ${options.users} users`, startFerry(seededDir));

    // A little traffic, then idle again.
    const server = await startFerry(seededDir)();
    const customers = [0, 1, Math.floor(options.users / 2), options.users - 1].filter((i) => i < ids.length);
    const requests = await littleTraffic(
      `http://127.0.0.1:${server.port}`,
      customers,
      ids,
      seededDir,
      seededUrl,
    );
    await Bun.sleep(options.settleMs);
    const afterTraffic = memoryOf(server.pid);
    await server.stop();
    log(`  after ${requests} requests of ${customers.length} customers: ${afterTraffic.rssMb.toFixed(1)} MB`);

    const causes = options.causes ? await measureCauses(bench, idle, startFerry) : null;

    const summary = {
      engine: clusterUrl ? "postgres" : "sqlite",
      users: options.users,
      bare,
      empty,
      seeded,
      afterTraffic: { ...afterTraffic, requests },
      overBareMb: empty.rssMb - bare.rssMb,
      ratioToBare: empty.rssMb / bare.rssMb,
      growthMb: seeded.rssMb - empty.rssMb,
      causes,
      goals: {
        idleMb: GOAL_IDLE_MB,
        idleMet: empty.rssMb <= GOAL_IDLE_MB,
        growthMb: GOAL_GROWTH_MB,
        growthMet: seeded.rssMb - empty.rssMb <= GOAL_GROWTH_MB,
      },
    };
    if (options.json) {
      console.log(JSON.stringify(summary, null, 2));
      return summary;
    }
    const row = (label: string, f: MemoryFigures, extra = "") =>
      `${label.padEnd(26)}${f.rssMb.toFixed(1).padStart(6)} MB  (anon ${f.anonMb.toFixed(1)}, file ${f.fileMb.toFixed(1)})${extra}`;
    console.log(
      [
        "",
        `Ferry memory (${summary.engine === "postgres" ? "PostgreSQL" : "SQLite"}), VmRSS idle`,
        "────────────",
        row("bare Bun.serve", bare),
        row(
          "ferry, 0 users",
          empty,
          `  = ${summary.ratioToBare.toFixed(2)} × bare, +${summary.overBareMb.toFixed(1)} MB`,
        ),
        row(
          `ferry, ${options.users} users`,
          seeded,
          `  growth ${summary.growthMb >= 0 ? "+" : ""}${summary.growthMb.toFixed(1)} MB`,
        ),
        row("after a little traffic", afterTraffic, `  (${requests} requests)`),
        ...(causes
          ? ["", "where it goes (each row adds one cause to the row above; MB more than the row above):"]
          : []),
        ...(causes ?? []).map(
          (c) =>
            `  ${c.cause.padEnd(56)}${c.figures.rssMb.toFixed(1).padStart(6)} MB  +${c.addedMb.toFixed(1).padEnd(5)}` +
            `(anon ${c.figures.anonMb.toFixed(1)}, file ${c.figures.fileMb.toFixed(1)})`,
        ),
        `goal idle ≤ ${GOAL_IDLE_MB} MB: ${summary.goals.idleMet ? "met" : "NOT met"}; ` +
          `growth ≤ ${GOAL_GROWTH_MB} MB: ${summary.goals.growthMet ? "met" : "NOT met"}`,
      ].join("\n"),
    );
    return summary;
  } finally {
    await bench.cleanup();
    await dropSeeded?.();
  }
}

type Idle = (
  label: string,
  start: () => Promise<{ pid: number; stop: () => Promise<void> }>,
) => Promise<MemoryFigures>;

/**
 * `--causes`: where ferry's memory goes. A ladder of small programs, each compiled as dist/ferry is
 * and idle like it, each adding one cause to the one before: SQLite, Intl time zones, zod, the
 * other libraries, the modules' zod schemas, every module of the server, the migrated database with the router built; the
 * last row is dist/ferry itself (its background jobs and replica heartbeat on top).
 */
async function measureCauses(
  bench: Bench,
  idle: Idle,
  startFerry: (dataDir: string) => () => Promise<{ pid: number; stop: () => Promise<void> }>,
) {
  const src = (path: string) => JSON.stringify(join(import.meta.dir, "../..", path));
  const pkg = (name: string) => JSON.stringify(Bun.resolveSync(name, join(import.meta.dir, "../..")));
  const schemaFiles = [
    ...new Bun.Glob("src/modules/*/schema.ts").scanSync(join(import.meta.dir, "../..")),
  ].sort();
  const dataDir = join(bench.work, "causes");
  mkdirSync(dataDir, { recursive: true });
  const steps: { cause: string; imports?: string; code?: string }[] = [
    { cause: "Bun.serve, compiled as ferry is" },
    {
      cause: "+ SQLite: a WAL database opened and queried",
      imports: `import { Database } from "bun:sqlite";`,
      code: `{ const db = new Database(${JSON.stringify(join(dataDir, "probe.db"))}, { create: true }); db.exec("PRAGMA journal_mode = WAL"); db.exec("CREATE TABLE IF NOT EXISTS t (a)"); db.query("SELECT * FROM t").all(); }`,
    },
    {
      cause: "+ Intl: a day formatted in a time zone",
      code: `new Intl.DateTimeFormat("en-CA", { timeZone: "Asia/Shanghai", year: "numeric", month: "2-digit", day: "2-digit" }).format(Date.now());`,
    },
    { cause: "+ zod, with the Chinese messages", imports: `import ${src("src/lib/zod-messages.ts")};` },
    {
      cause: "+ elysia, yaml, commander loaded",
      imports: `import * as elysia from ${pkg("elysia")}; import * as yaml from ${pkg("yaml")}; import * as commander from ${pkg("commander")};`,
      code: "globalThis.probeKeep = [elysia, yaml, commander];",
    },
    {
      cause: "+ the zod schemas of src/modules/*/schema.ts built",
      imports: schemaFiles.map((file, i) => `import * as schema${i} from ${src(file)};`).join(" "),
      code: `globalThis.probeSchemas = [${schemaFiles.map((_, i) => `schema${i}`).join(", ")}];`,
    },
    {
      cause: "+ every module of the server evaluated",
      imports: `import * as ferryServer from ${src("src/server.ts")};`,
      code: "globalThis.probeKeep2 = ferryServer;",
    },
    {
      cause: "+ the database migrated, the router built (serving)",
      imports: `import { openDatabase } from ${src("src/db/db.ts")}; import { migrate } from ${src("src/db/migrate.ts")}; import { migrations } from ${src("src/embedded.ts")}; import { createContext } from ${src("src/context.ts")};`,
      code: `{ const db = await openDatabase({ file: ${JSON.stringify(join(dataDir, "ferry.db"))} }); await migrate(db, migrations); const router = ferryServer.buildApp(createContext(db, { dataDir: ${JSON.stringify(dataDir)} })); globalThis.probeRoute = (request) => router.fetch(request); }`,
    },
  ];
  const rows: { cause: string; figures: MemoryFigures; addedMb: number }[] = [];
  let previous: number | null = null;
  for (let n = 1; n <= steps.length; n += 1) {
    const ladder = steps.slice(0, n);
    const source = [
      ...ladder.map((step) => step.imports ?? ""),
      ...ladder.map((step) => step.code ?? ""),
      `const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => globalThis.probeRoute?.(request) ?? new Response("ok") });`,
      `Bun.unsafe.setJITPolicy(1);`,
      'console.log("ready " + server.port);',
    ].join("\n");
    const executable = compileProbe(bench, `probe-${n}`, source);
    const step = ladder.at(-1) as (typeof steps)[number];
    const figures = await idle(step.cause, async () => {
      const child = bench.spawnExecutable([executable]);
      await bench.untilHealthy(await readyPort(child), child, performance.now(), HEALTH_POLL_MS);
      return { pid: child.pid, stop: () => bench.stop(child) };
    });
    rows.push({ cause: step.cause, figures, addedMb: previous === null ? 0 : figures.rssMb - previous });
    previous = figures.rssMb;
  }
  const ferry = await idle("dist/ferry serve", async () =>
    startFerry(join(bench.work, `causes-${Math.random().toString(36).slice(2)}`))(),
  );
  rows.push({
    cause: "+ jobs, heartbeat, start-up lines: dist/ferry serve",
    figures: ferry,
    addedMb: ferry.rssMb - (previous ?? 0),
  });
  return rows;
}

/** Logs in each customer, asks userinfo twice and fetches the subscription as clash and v2ray. */
async function littleTraffic(
  origin: string,
  customers: number[],
  ids: string[],
  dataDir: string,
  url: string | null,
): Promise<number> {
  const db = await openDatabase({ file: join(dataDir, "ferry.db"), url: url ?? undefined });
  let requests = 0;
  try {
    for (const i of customers) {
      const login = await fetch(`${origin}/api/user/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          data: toBase64Json({ email: seedEmail(i), password: transformPassword(SEED_PASSWORD) }),
        }),
      });
      requests += 1;
      const token = login.headers
        .getSetCookie()
        .map((line) => /^token=([^;]+)/.exec(line)?.[1])
        .find(Boolean);
      if (!token) throw new Error(`login of ${seedEmail(i)} gave no session (HTTP ${login.status})`);
      for (let twice = 0; twice < 2; twice += 1) {
        const info = await fetch(`${origin}/api/user/userinfo`, {
          method: "POST",
          headers: { "content-type": "application/json", cookie: `token=${token}` },
          body: JSON.stringify({ data: toBase64Json({}) }),
        });
        await info.arrayBuffer();
        requests += 1;
        if (info.status !== 200) throw new Error(`userinfo answered HTTP ${info.status}`);
      }
      const id = ids[i] ?? "";
      const user = await db.get<{ userkey: string }>("SELECT userkey FROM users WHERE id = ?", id);
      for (const client of ["clash", "v2ray"] as const) {
        const answer = await fetch(
          subscriptionUrl(origin, client, { _id: id, userkey: user?.userkey ?? "" }),
          {
            headers: { "user-agent": "v2rayN/7.5.0" },
          },
        );
        await answer.arrayBuffer();
        requests += 1;
        if (answer.status !== 200) throw new Error(`${client} subscription answered HTTP ${answer.status}`);
      }
    }
  } finally {
    await db.close();
  }
  return requests;
}

/** scripts/bench/bare.ts compiled as dist/ferry is (minified, with a bytecode cache). */
function compileBare(bench: Bench): string {
  return compile(join(import.meta.dir, "bare.ts"), join(bench.work, "bare"));
}

/** A probe program of --causes, compiled as dist/ferry is, lazier JIT at start-up included. */
function compileProbe(bench: Bench, name: string, source: string): string {
  const file = join(bench.work, `${name}.ts`);
  writeFileSync(file, source);
  return compile(file, join(bench.work, name), ["--compile-jit-policy=16"]);
}

function compile(entry: string, outfile: string, extra: string[] = []): string {
  const build = Bun.spawnSync(
    [
      process.execPath,
      "build",
      "--compile",
      "--minify",
      "--bytecode",
      "--format=esm",
      ...extra,
      entry,
      "--outfile",
      outfile,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (build.exitCode !== 0) throw new Error(`compiling ${entry} failed: ${build.stderr}`);
  return outfile;
}

function writeBareSpec(bench: Bench): string {
  const file = join(bench.work, "bare-memory.json");
  Bun.write(file, JSON.stringify({ port: 0, status: 200, headers: [], body: "ok" }));
  return file;
}

async function readyPort(child: ReturnType<typeof Bun.spawn>): Promise<number> {
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  const ready = new TextDecoder().decode((await reader.read()).value);
  reader.releaseLock();
  const port = Number(/ready (\d+)/.exec(ready)?.[1]);
  if (!port) throw new Error(`bare server did not start: ${ready}`);
  return port;
}

function medianFigures(runs: MemoryFigures[]): MemoryFigures {
  return {
    rssMb: median(runs.map((r) => r.rssMb)),
    anonMb: median(runs.map((r) => r.anonMb)),
    fileMb: median(runs.map((r) => r.fileMb)),
  };
}

if (import.meta.main) await main(process.argv.slice(2));
