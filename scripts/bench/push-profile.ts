/**
 * `bun scripts/bench/push-profile.ts`: where the time of one node report goes (issue 18 §3). On the
 * database push.ts builds (10 000 users, one node), it times each part of applyNodeReport on its
 * own — the body check, the users SELECT with and without its admission and trial subqueries, and
 * each per-user write as a loop of its own in its own transaction (COMMIT included) — next to the whole
 * applyNodeReport and push.ts's baseline upsert loop. Medians in ms over the rounds.
 *
 * Usage: bun scripts/bench/push-profile.ts [--users 10000] [--rounds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openContext } from "../../cli/shared.ts";
import type { SqliteDb } from "../../src/db/db.ts";
import { businessDay } from "../../src/lib/time.ts";
import { admittedSince, admittedSql } from "../../src/modules/node-api/admission.ts";
import { servedUserList } from "../../src/modules/node-api/service.ts";
import { type AgentRow, findAgentRow } from "../../src/modules/node-record/service.ts";
import { applyNodeReport } from "../../src/modules/traffic/charge.ts";
import { INBOUND_TAG } from "../../src/node-program/core-config.ts";
import { median, numberFlag } from "./common.ts";
import {
  baselineRows,
  buildNode,
  buildUsers,
  checked,
  createBaselineTable,
  pushBody,
  runBaseline,
} from "./push.ts";

const argv = process.argv.slice(2);
const userCount = numberFlag(argv, "users", 10_000);
const rounds = numberFlag(argv, "rounds", 5);

const work = mkdtempSync(join(tmpdir(), "ferry-push-profile-"));
try {
  const ctx = await openContext(join(work, "data"));
  const db = (ctx.db as SqliteDb).raw;
  const agentId = await buildNode(ctx);
  const users = await buildUsers(ctx, userCount, Date.now());
  await servedUserList(ctx, (await findAgentRow(ctx, agentId)) as AgentRow);
  await createBaselineTable(ctx, users);
  const now = Date.now();
  const day = businessDay(now, await ctx.settings.get("timezone"));
  // Make every user's spend record and usage row exist, as after a day's first report.
  await applyNodeReport(ctx, {
    agentId,
    reportId: "warm",
    inbound: INBOUND_TAG.vmesh_tcp,
    usage: checked(pushBody(users, 0)),
    now,
  });

  const timings = new Map<string, number[]>();
  const cpuTimings = new Map<string, number[]>();
  /** Wall time and this process's CPU time (user + system; SQLite runs in it): the CPU is steadier on a busy machine. */
  const time = async (name: string, fn: () => unknown) => {
    const started = performance.now();
    const cpu = process.cpuUsage();
    await fn();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    timings.set(name, [...(timings.get(name) ?? []), ms]);
    cpuTimings.set(name, [...(cpuTimings.get(name) ?? []), (used.user + used.system) / 1000]);
  };
  /** Runs fn in its own transaction; the time includes the COMMIT (writing the pages to the WAL). */
  const committed = (name: string, fn: () => void) =>
    time(name, () => {
      db.exec("BEGIN IMMEDIATE");
      fn();
      db.exec("COMMIT");
    });

  const selectWith = (extra: string, where: string) =>
    db.query(
      `SELECT b.rowid AS rid, u.rowid AS urid, u.id, node_uid, scale, traffic, spend_traffic, vip_expire_time,
         daily_limit, special_daily_unlimit_traffic, daily_unlimit_traffic, daily_usage, daily_usage_day ${extra}
       FROM users u JOIN balances b ON b.user_id = u.id
       WHERE node_uid IN (SELECT value FROM json_each(?1)) ${where}`,
    );
  const trialSql = `, (SELECT COALESCE(SUM(remaining), 0) FROM trial_grants g WHERE g.user_id = u.id AND g.remaining > 0) AS trial`;
  const admitted = `AND ${admittedSql("u.node_uid", "?2", "?3", "?4")}`;
  const fullSelect = selectWith(trialSql, admitted);
  const joinedSelect = db.query(
    `SELECT b.rowid AS rid, u.id, b.traffic, b.spend_traffic ${trialSql}, s.id AS spend_id
     FROM users u
     JOIN balances b ON b.user_id = u.id
     LEFT JOIN traffic_records s ON s.user_id = u.id AND s.day = ?5 AND s.type = 'spend'
     WHERE u.node_uid IN (SELECT value FROM json_each(?1)) ${admitted}`,
  );
  // The day's row (migration 020): the spend record with the day's usage in it.
  const dayRowSums = `traffic_change = traffic_change + ?2, exemption_traffic = exemption_traffic + ?3,
       all_traffic = ?4, all_spend = ?5, update_time = ?6,
       upload = MIN(upload + ?7, ?12), download = MIN(download + ?8, ?12), quota = MIN(quota + ?9, ?12),
       permanent = MIN(permanent + ?10, ?12), overdraft = MIN(overdraft + ?11, ?12)`;
  const dayRowById = db.query(`UPDATE traffic_records SET ${dayRowSums} WHERE id = ?1`);
  const bareSelect = selectWith("", "");
  const trialOnly = selectWith(trialSql, "");
  // What a report wrote before migration 013: the wide users row (a column of it, rewritten whole).
  const updateUsers = db.query("UPDATE users SET last_active_time = ? WHERE rowid = ?");
  const updateNarrow = db.query(
    "UPDATE balances SET traffic = ?, spend_traffic = ?, daily_usage = ?, daily_usage_day = ? WHERE rowid = ?",
  );
  const dayRow = db.query(
    `INSERT INTO traffic_records (user_id, type, desc, traffic_change, exemption_traffic, all_traffic, all_spend, update_time,
       upload, download, quota, permanent, overdraft, day)
     VALUES (?1, 'spend', '节点流量', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13)
     ON CONFLICT (user_id, day) WHERE type = 'spend' DO UPDATE SET ${dayRowSums}`,
  );

  for (let round = 1; round <= rounds; round += 1) {
    const body = pushBody(users, round);
    let usageMap = checked(body);
    await time("checkPush (JSON.parse, key scan, Map)", () => {
      usageMap = checked(body);
    });
    const list = JSON.stringify([...usageMap.keys()]);
    const since = await admittedSince(ctx, now);
    let rows: { rid: number; urid: number; id: string; traffic: number; spend_traffic: number }[] = [];
    await time("SELECT users + admission + trial", () => {
      rows = fullSelect.all(list, agentId, since, now) as typeof rows;
    });
    let joined: {
      id: string;
      traffic: number;
      spend_traffic: number;
      spend_id: number;
    }[] = [];
    await time("SELECT … + the day's row id", () => {
      joined = joinedSelect.all(list, agentId, since, now, day) as typeof joined;
    });
    await time("SELECT users only", () => {
      bareSelect.all(list);
    });
    await time("SELECT users + trial", () => {
      trialOnly.all(list);
    });
    await committed("UPDATE users (wide row, by rowid) × n", () => {
      for (const row of rows) updateUsers.run(now + round, row.urid);
    });
    await committed("UPDATE balances (narrow, by rowid) × n", () => {
      for (const row of rows) updateNarrow.run(row.traffic - 1, row.spend_traffic + 1, 1, day, row.rid);
    });
    const sums = (row: { traffic: number; spend_traffic: number }) =>
      [
        -1,
        1,
        row.traffic - 1,
        row.spend_traffic + 1,
        now + round,
        1,
        2,
        1,
        1,
        0,
        Number.MAX_SAFE_INTEGER,
      ] as const;
    await committed("day row (spend record + usage) upsert × n", () => {
      for (const row of rows) dayRow.run(row.id, ...sums(row), day);
    });
    await committed("day row UPDATE by id × n", () => {
      for (const row of joined) dayRowById.run(row.spend_id, ...sums(row));
    });
    await committed("both upserts, user by user × n", () => {
      for (const row of rows) {
        updateNarrow.run(row.traffic - 1, row.spend_traffic + 1, 1, day, row.rid);
        dayRow.run(row.id, ...sums(row), day);
      }
    });
    await time("applyNodeReport (whole, after checkPush)", async () => {
      await applyNodeReport(ctx, {
        agentId,
        reportId: `profile-${round}`,
        inbound: INBOUND_TAG.vmesh_tcp,
        usage: usageMap,
        now,
      });
    });
    const baseline = baselineRows(users, round);
    await time("baseline upsert loop", () => runBaseline(ctx, baseline));
  }
  db.close();
  console.log(
    `push profile: ${userCount} users, median of ${rounds} rounds (wall, then CPU of this process)`,
  );
  for (const [name, ms] of timings) {
    const cpu = median(cpuTimings.get(name) ?? []);
    console.log(
      `${name.padEnd(42)} ${median(ms).toFixed(1).padStart(8)} ms  ${((median(ms) * 1000) / userCount).toFixed(2).padStart(6)} µs/user  cpu ${cpu.toFixed(1).padStart(7)} ms`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
