/**
 * `bun run bench:push`: how fast the panel applies one node report for 10 000 users (issue 5),
 * in user-updates per second, against a plain SQLite upsert loop of the same rows in the same
 * database file and the same run.
 *
 * Set-up (not measured): a real SQLite database in a temp dir with the migrations the server runs,
 * 10 000 users with permanent traffic (every fourth also with a running time package), one v2ray
 * node with three lines at different scales, which has pulled its user list (a node charges only
 * the users it was given, issue 11).
 *
 * 1. ferry: checkPush(body text) then applyNodeReport(ctx, {agentId, reportId, inbound, usage})
 *    for `{node_uid: [up, down]} × 10 000` — what the UniProxy push route does, minus HTTP: the
 *    whole-body check (canonical ids, duplicates, bounds), then one transaction that checks the
 *    users against the node's list, charges every user, keeps the day's spend records and
 *    usage_days, the lines' heat and the report id;
 * 2. baseline: a prepared `INSERT … ON CONFLICT (user_id) DO UPDATE` run once per row inside
 *    BEGIN/COMMIT on a table that already holds the 10 000 rows.
 *
 * A first report (not timed) checks the path is right: it charges every user exactly the scaled
 * bytes, from quota then permanent traffic, and its repeat is a no-op. Rounds then alternate
 * ferry / baseline with fresh report ids; afterwards the totals show every timed round landed on
 * both sides. Medians are reported. It exits non-zero only on errors and never asserts on time
 * (issue 31's goals, ferry/baseline ≥ 0.3 on SQLite and ≥ 0.5 on PostgreSQL, are reported, not enforced).
 *
 * With `--database-url postgres://…` (a cluster's maintenance URL; a scratch database is created
 * on it and dropped after) the same run follows on PostgreSQL (issue 27 item 4), where ferry
 * writes each table in one statement, and the baseline is one plain
 * `INSERT … SELECT FROM unnest($1::text[], $2::bigint[], $3::bigint[]) ON CONFLICT DO UPDATE` of
 * the same rows on Bun's SQL client, measured in the same run.
 *
 * Usage: bun scripts/bench/push.ts [--users 10000] [--rounds 5] [--database-url <url>] [--json]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openContext } from "../../cli/shared.ts";
import type { AppContext } from "../../src/context.ts";
import { createContext } from "../../src/context.ts";
import { openPostgres, PostgresDb, type SqliteDb } from "../../src/db/db.ts";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/embedded.ts";
import { businessDay } from "../../src/lib/time.ts";
import { GB, MB } from "../../src/lib/traffic.ts";
import { type LineProtocol, lineInput } from "../../src/modules/line/schema.ts";
import { saveLine } from "../../src/modules/line/service.ts";
import { checkPush, type PushUsage } from "../../src/modules/node-api/report.ts";
import { servedUserList } from "../../src/modules/node-api/service.ts";
import { agentInput } from "../../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow, saveAgent } from "../../src/modules/node-record/service.ts";
import { applyNodeReport, type ReportResult } from "../../src/modules/traffic/charge.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { hashPassword } from "../../src/modules/user/service.ts";
import { INBOUND_TAG } from "../../src/node-program/core-config.ts";
import { newId, randomHex } from "../../src/rpc/ids.ts";
import { createDatabase, median, numberFlag } from "./common.ts";

const argv = process.argv.slice(2);
const urlIndex = argv.indexOf("--database-url");
const options = {
  users: numberFlag(argv, "users", 10_000),
  rounds: numberFlag(argv, "rounds", 5),
  json: argv.includes("--json"),
  /** A PostgreSQL cluster to run on too. */
  databaseUrl: urlIndex >= 0 ? argv[urlIndex + 1] : undefined,
};
/** Issue 31: the share of the engine's plain upsert a report must reach. */
const GOAL: Record<Engine, number> = { sqlite: 0.3, postgres: 0.5 };
/** The inbound the report comes from; its lines' lowest scale applies (1.5 here, not 2). */
const INBOUND = INBOUND_TAG.vmesh_tcp;
const LINES: [LineProtocol, number][] = [
  ["vmesh_tcp", 1.5],
  ["vmesh_tcp", 2],
  ["vmesh_ws", 1],
];
const LINE_SCALE = 1.5;
const UPLOAD_SCALE = 0.5;
const DAILY_LIMIT = 10 * GB;

const log = (message: string) => {
  if (!options.json) console.error(message);
};

export interface BenchUser {
  id: string;
  nodeUid: number;
}

// ---- set-up (not measured) -----------------------------------------------------------------

export async function buildNode(ctx: AppContext): Promise<string> {
  const agent = await saveAgent(
    ctx,
    agentInput.parse({
      name: "香港",
      country: { code: "HK" },
      type: "v2ray",
      ip: "203.0.113.10",
      host: "hk.example.net",
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
      ss_method: "aes-256-gcm",
    }),
  );
  for (const [i, [protocol, scale]] of LINES.entries()) {
    await saveLine(
      ctx,
      lineInput.parse({
        index: i + 1,
        name: `香港 0${i + 1}`,
        agentID: agent._id,
        protocol,
        bridge: "none",
        scale,
      }),
    );
  }
  return agent._id;
}

/** Users inserted in bulk with their balances set directly; every fourth has a time package. */
export async function buildUsers(ctx: AppContext, count: number, now: number): Promise<BenchUser[]> {
  const passwordHash = await hashPassword(transformPassword("bench-password-1"));
  const insert = `INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time, vip_expire_time, daily_limit)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
  // The balances row the insert made (migration 013's trigger).
  const balances = "UPDATE balances SET traffic = ?, spend_traffic = ? WHERE user_id = ?";
  await ctx.db.tx(async () => {
    for (let i = 0; i < count; i += 1) {
      const timePackage = i % 4 === 0;
      const id = newId(now);
      await ctx.db.run(
        insert,
        id,
        `bench-${i}@example.com`,
        passwordHash,
        randomHex(16),
        crypto.randomUUID(),
        now,
        timePackage ? now + 30 * 86_400_000 : 0,
        timePackage ? DAILY_LIMIT : null,
      );
      await ctx.db.run(balances, (100 + (i % 50)) * GB, (i % 7) * GB, id);
    }
  });
  return (
    await ctx.db.all<{ id: string; node_uid: number }>("SELECT id, node_uid FROM users ORDER BY node_uid")
  ).map((row) => ({ id: row.id, nodeUid: row.node_uid }));
}

/** Raw bytes of one user in one report: a spread of sizes, uploads smaller than downloads. */
export function bytesOf(index: number, round: number): [upload: number, download: number] {
  const download = (1 + ((index * 7 + round) % 200)) * MB + index;
  return [Math.floor(download / 8), download];
}

/** The push body as the node sends it. */
export function pushBody(users: BenchUser[], round: number): string {
  const body: Record<string, [number, number]> = {};
  users.forEach((user, i) => {
    body[user.nodeUid] = bytesOf(i, round);
  });
  return JSON.stringify(body);
}

/** What the push route does with the body before charging it. */
export function checked(body: string): PushUsage {
  const usage = checkPush(body);
  if (!usage.ok) throw new Error(`the bench's push was refused: ${usage.message}`);
  return usage.value;
}

/** The charge DESIGN §7 asks for, computed here without the code under test. */
function expectedCharge(users: BenchUser[], round: number): number {
  let total = 0;
  users.forEach((_, i) => {
    const [upload, download] = bytesOf(i, round);
    total += Math.round((upload * UPLOAD_SCALE + download) * LINE_SCALE);
  });
  return total;
}

// ---- the baseline --------------------------------------------------------------------------

type UsageRow = [userId: string, upload: number, download: number];

export async function createBaselineTable(ctx: AppContext, users: BenchUser[]) {
  // BIGINT: INTEGER is 32 bits on PostgreSQL; SQLite gives both the same integer affinity.
  await ctx.db.exec(
    "CREATE TABLE bench_usage (user_id TEXT PRIMARY KEY, upload BIGINT NOT NULL, download BIGINT NOT NULL)",
  );
  const insert = "INSERT INTO bench_usage (user_id, upload, download) VALUES (?, 0, 0)";
  await ctx.db.tx(async () => {
    for (const user of users) await ctx.db.run(insert, user.id);
  });
}

export function baselineRows(users: BenchUser[], round: number): UsageRow[] {
  return users.map((user, i) => [user.id, ...bytesOf(i, round)]);
}

/** The physical limit of the engine: see runSqliteBaseline and runPostgresBaseline. */
export async function runBaseline(ctx: AppContext, rows: UsageRow[]) {
  if (ctx.db instanceof PostgresDb) await runPostgresBaseline(ctx.db, rows);
  else runSqliteBaseline(ctx.db as SqliteDb, rows);
}

/** PostgreSQL: one plain unnest upsert of every row on Bun's SQL client (a statement of its own). */
async function runPostgresBaseline(db: PostgresDb, rows: UsageRow[]) {
  await db.sql.unsafe(
    `INSERT INTO bench_usage (user_id, upload, download)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])
     ON CONFLICT (user_id) DO UPDATE SET upload = bench_usage.upload + excluded.upload,
       download = bench_usage.download + excluded.download`,
    [rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
  );
}

/** SQLite: a plain prepared upsert loop on the synchronous driver. */
function runSqliteBaseline(sqlite: SqliteDb, rows: UsageRow[]) {
  const db = sqlite.raw;
  const upsert = db.prepare<unknown, UsageRow>(
    `INSERT INTO bench_usage (user_id, upload, download) VALUES (?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET upload = upload + excluded.upload, download = download + excluded.download`,
  );
  db.exec("BEGIN");
  try {
    for (const row of rows) upsert.run(...row);
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  } finally {
    upsert.finalize();
  }
}

// ---- correctness (once per run, not timed) -------------------------------------------------

interface Totals {
  traffic: number;
  spend: number;
  dailyUsage: number;
  upload: number;
  download: number;
}

async function totals(ctx: AppContext, day: string): Promise<Totals> {
  const users = await ctx.db.get<{ traffic: number; spend: number; daily: number }>(
    `SELECT SUM(traffic) AS traffic, SUM(spend_traffic) AS spend,
         SUM(CASE WHEN daily_usage_day = ? THEN daily_usage ELSE 0 END) AS daily FROM balances`,
    day,
  );
  const usage = await ctx.db.get<{ upload: number | null; download: number | null }>(
    "SELECT SUM(upload) AS upload, SUM(download) AS download FROM usage_days WHERE day = ?",
    day,
  );
  return {
    traffic: users?.traffic ?? 0,
    spend: users?.spend ?? 0,
    dailyUsage: users?.daily ?? 0,
    upload: usage?.upload ?? 0,
    download: usage?.download ?? 0,
  };
}

function check(condition: boolean, message: string) {
  if (!condition) throw new Error(`correctness check failed: ${message}`);
}

/** Applies a first report and its repeat, and checks what they changed. */
async function verifyOnce(ctx: AppContext, agentId: string, users: BenchUser[]) {
  const now = Date.now();
  const day = businessDay(now, await ctx.settings.get("timezone"));
  const usage = checked(pushBody(users, 0));
  const raw = [...usage.values()].reduce((sum, [up, down]) => ({ up: sum.up + up, down: sum.down + down }), {
    up: 0,
    down: 0,
  });
  const expected = expectedCharge(users, 0);
  const before = await totals(ctx, day);
  const hotBefore = await lineHeat(ctx, agentId);

  const report = { agentId, reportId: "verify", inbound: INBOUND, usage, now };
  const first = await applyNodeReport(ctx, report);
  const after = await totals(ctx, day);
  check(!first.duplicate && first.users === users.length, `charged ${first.users} of ${users.length} users`);
  check(first.charged === expected, `charged ${first.charged} bytes, DESIGN §7 says ${expected}`);
  check(
    after.spend - before.spend === expected,
    `spend_traffic rose by ${after.spend - before.spend}, not ${expected}`,
  );
  const fromPermanent = before.traffic - after.traffic;
  const fromQuota = after.dailyUsage - before.dailyUsage;
  check(fromQuota > 0 && fromPermanent > 0, "both time-package quota and permanent traffic were charged");
  check(
    fromQuota + fromPermanent === expected,
    `quota ${fromQuota} + permanent ${fromPermanent} ≠ ${expected}`,
  );
  check(
    after.upload - before.upload === raw.up && after.download - before.download === raw.down,
    "usage_days holds the raw bytes of the report",
  );
  const hotAfter = await lineHeat(ctx, agentId);
  check(hotAfter.vmesh_tcp - hotBefore.vmesh_tcp === 2 * (raw.up + raw.down), "heat of both vmesh_tcp lines");
  check(hotAfter.vmesh_ws === hotBefore.vmesh_ws, "heat of the vmesh_ws line unchanged");

  const repeat = await applyNodeReport(ctx, { ...report, now: now + 1 });
  check(repeat.duplicate && repeat.charged === 0, "a repeated report id reports duplicate");
  const unchanged = await totals(ctx, day);
  check(JSON.stringify(unchanged) === JSON.stringify(after), "a repeated report id changes nothing");
  return { expected, fromQuota, fromPermanent };
}

async function lineHeat(ctx: AppContext, agentId: string): Promise<Record<"vmesh_tcp" | "vmesh_ws", number>> {
  const rows = await ctx.db.all<{ protocol: string; hot: number }>(
    "SELECT protocol, SUM(hot) AS hot FROM agent_lines WHERE agent_id = ? GROUP BY protocol",
    agentId,
  );
  const of = (protocol: string) => rows.find((row) => row.protocol === protocol)?.hot ?? 0;
  return { vmesh_tcp: of("vmesh_tcp"), vmesh_ws: of("vmesh_ws") };
}

async function totalSpend(ctx: AppContext): Promise<number> {
  return (
    (await ctx.db.get<{ spend: number }>("SELECT SUM(spend_traffic) AS spend FROM balances"))?.spend ?? 0
  );
}

/** After the timed rounds: both paths applied every round's bytes, so neither measured a no-op. */
async function checkRounds(ctx: AppContext, users: BenchUser[], spendBefore: number) {
  let charged = 0;
  let download = 0;
  for (let round = 0; round <= options.rounds; round += 1) {
    if (round > 0) charged += expectedCharge(users, round);
    users.forEach((_, i) => {
      download += bytesOf(i, round)[1];
    });
  }
  const spent = (await totalSpend(ctx)) - spendBefore;
  check(spent === charged, `the timed reports charged ${spent} bytes, not ${charged}`);
  const baseline = await ctx.db.get<{ download: number }>(
    "SELECT SUM(download) AS download FROM bench_usage",
  );
  check(
    baseline?.download === download,
    `the baseline added ${baseline?.download} download bytes, not ${download}`,
  );
}

// ---- run (when not imported, e.g. by push-profile.ts) -----------------------------------------------------------------------------------

type Engine = "sqlite" | "postgres";
const BASELINE_NAME: Record<Engine, string> = {
  sqlite: "SQLite upsert loop",
  postgres: "PostgreSQL unnest upsert",
};
const ENGINE_NAME: Record<Engine, string> = { sqlite: "SQLite", postgres: "PostgreSQL" };

/** The server's database with its migrations: the SQLite file of `dataDir`, or a PostgreSQL URL. */
async function openBenchContext(dataDir: string, url?: string): Promise<AppContext> {
  if (!url) return openContext(dataDir);
  const db = await openPostgres(url);
  await migrate(db, migrations);
  return createContext(db, { dataDir });
}

/** Set-up, the checked report, then the timed rounds on one engine. */
async function benchOn(engine: Engine, ctx: AppContext) {
  await ctx.settings.update({ upload_traffic_spend_scale: UPLOAD_SCALE });
  log(`${ENGINE_NAME[engine]} set-up: ${options.users} users, one node with ${LINES.length} lines …`);
  const agentId = await buildNode(ctx);
  const users = await buildUsers(ctx, options.users, Date.now());
  await servedUserList(ctx, (await findAgentRow(ctx, agentId)) as AgentRow);
  await createBaselineTable(ctx, users);

  log("correctness: one report and its repeat …");
  const verified = await verifyOnce(ctx, agentId, users);
  await runBaseline(ctx, baselineRows(users, 0)); // its warm-up, as the checked report is ferry's
  const spendBefore = await totalSpend(ctx);

  log(`measuring: ${options.rounds} rounds, ferry / baseline alternating …`);
  const ferrySeconds: number[] = [];
  const baselineSeconds: number[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const body = pushBody(users, round);
    const reportId = `round-${round}-${randomHex(4)}`;
    const started = performance.now();
    const result: ReportResult = await applyNodeReport(ctx, {
      agentId,
      reportId,
      inbound: INBOUND,
      usage: checked(body),
      now: Date.now(),
    });
    const ferry = (performance.now() - started) / 1000;
    if (result.duplicate || result.users !== users.length) {
      throw new Error(`round ${round}: report charged ${result.users} users (duplicate ${result.duplicate})`);
    }

    const rows = baselineRows(users, round);
    const baselineStarted = performance.now();
    await runBaseline(ctx, rows);
    const baseline = (performance.now() - baselineStarted) / 1000;

    ferrySeconds.push(ferry);
    baselineSeconds.push(baseline);
    log(
      `  round ${round}: ferry ${(ferry * 1000).toFixed(1)} ms (${Math.round(users.length / ferry)} updates/s), ` +
        `baseline ${(baseline * 1000).toFixed(1)} ms (${Math.round(users.length / baseline)} updates/s)`,
    );
  }
  await checkRounds(ctx, users, spendBefore);

  const ferryRate = users.length / median(ferrySeconds);
  const baselineRate = users.length / median(baselineSeconds);
  return {
    engine,
    users: users.length,
    rounds: options.rounds,
    goal: GOAL[engine],
    ferryUpdatesPerSecond: Math.round(ferryRate),
    baselineUpdatesPerSecond: Math.round(baselineRate),
    ratio: ferryRate / baselineRate,
    ferryMs: ferrySeconds.map((s) => Math.round(s * 10_000) / 10),
    baselineMs: baselineSeconds.map((s) => Math.round(s * 10_000) / 10),
    verified,
  };
}

type Summary = Awaited<ReturnType<typeof benchOn>>;

function printSummary(summary: Summary) {
  const { verified } = summary;
  console.log(
    [
      "",
      `Node report (push) benchmark, ${ENGINE_NAME[summary.engine]}`,
      "────────────────────────────",
      `report                    ${summary.users} users, one transaction, inbound ${INBOUND}`,
      `ferry check + apply       ${summary.ferryUpdatesPerSecond} user-updates/s (median ${median(summary.ferryMs).toFixed(1)} ms)`,
      `${BASELINE_NAME[summary.engine].padEnd(26)}${summary.baselineUpdatesPerSecond} user-updates/s (median ${median(summary.baselineMs).toFixed(1)} ms)`,
      `ratio ferry / baseline    ${summary.ratio.toFixed(3)}  (goal ≥ ${summary.goal}: ${summary.ratio >= summary.goal ? "met" : "NOT met"})`,
      `checked                   the first report charged ${verified.expected} bytes exactly (quota ${verified.fromQuota}, ` +
        `permanent ${verified.fromPermanent}); a repeated report id changed nothing; every timed round landed`,
      `(median of ${summary.rounds} rounds, same database, same run)`,
    ].join("\n"),
  );
}

if (import.meta.main) {
  const work = mkdtempSync(join(tmpdir(), "ferry-bench-push-"));
  let dropDatabase: (() => Promise<void>) | null = null;
  const cleanUp = async () => {
    await dropDatabase?.();
    rmSync(work, { recursive: true, force: true });
  };
  process.on("SIGINT", () => {
    cleanUp().finally(() => process.exit(130));
  });

  try {
    const summaries: Summary[] = [];
    const sqlite = await openBenchContext(join(work, "data"));
    summaries.push(await benchOn("sqlite", sqlite));
    await sqlite.db.close();
    if (options.databaseUrl) {
      const scratch = await createDatabase(options.databaseUrl, `ferry_bench_push_${process.pid}`);
      dropDatabase = scratch.drop;
      const postgres = await openBenchContext(join(work, "pg-data"), scratch.url);
      summaries.push(await benchOn("postgres", postgres));
      await postgres.db.close();
    }
    if (options.json) {
      const [first] = summaries;
      console.log(JSON.stringify(summaries.length === 1 ? first : summaries, null, 2));
    } else {
      for (const summary of summaries) printSummary(summary);
    }
  } finally {
    await cleanUp();
  }
}
