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
  const time = async (name: string, fn: () => unknown) => {
    const started = performance.now();
    await fn();
    const ms = performance.now() - started;
    timings.set(name, [...(timings.get(name) ?? []), ms]);
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
    `SELECT b.rowid AS rid, u.id, b.traffic, b.spend_traffic ${trialSql}, s.id AS spend_id, d.rowid AS usage_rid
     FROM users u
     JOIN balances b ON b.user_id = u.id
     LEFT JOIN traffic_records s ON s.user_id = u.id AND s.day = ?5 AND s.type = 'spend'
     LEFT JOIN usage_days d ON d.day = ?5 AND d.user_id = u.id
     WHERE u.node_uid IN (SELECT value FROM json_each(?1)) ${admitted}`,
  );
  const ledgerById = db.query(
    `UPDATE traffic_records SET traffic_change = traffic_change + ?2, exemption_traffic = exemption_traffic + ?3,
       all_traffic = ?4, all_spend = ?5, update_time = ?6 WHERE id = ?1`,
  );
  const usageByRowid = db.query(
    `UPDATE usage_days SET upload = MIN(upload + ?2, ?7), download = MIN(download + ?3, ?7),
       quota = MIN(quota + ?4, ?7), permanent = MIN(permanent + ?5, ?7), overdraft = MIN(overdraft + ?6, ?7)
     WHERE rowid = ?1`,
  );
  const bareSelect = selectWith("", "");
  const trialOnly = selectWith(trialSql, "");
  // What a report wrote before migration 013: the wide users row (a column of it, rewritten whole).
  const updateUsers = db.query("UPDATE users SET last_active_time = ? WHERE rowid = ?");
  const updateNarrow = db.query(
    "UPDATE balances SET traffic = ?, spend_traffic = ?, daily_usage = ?, daily_usage_day = ? WHERE rowid = ?",
  );
  const ledger = db.query(
    `INSERT INTO traffic_records (user_id, type, desc, traffic_change, exemption_traffic, all_traffic, all_spend, day, update_time)
     VALUES (?1, 'spend', '节点流量', ?2, ?3, ?4, ?5, ?6, ?7)
     ON CONFLICT (user_id, day) WHERE type = 'spend' DO UPDATE SET
       traffic_change = traffic_change + ?2, exemption_traffic = exemption_traffic + ?3,
       all_traffic = ?4, all_spend = ?5, update_time = ?7`,
  );
  const usage = db.query(
    `INSERT INTO usage_days (day, user_id, upload, download, quota, permanent, overdraft)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
     ON CONFLICT (day, user_id) DO UPDATE SET
       upload = MIN(upload + ?3, ?8), download = MIN(download + ?4, ?8),
       quota = MIN(quota + ?5, ?8), permanent = MIN(permanent + ?6, ?8), overdraft = MIN(overdraft + ?7, ?8)`,
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
      usage_rid: number;
    }[] = [];
    await time("SELECT … + spend record and usage_days ids", () => {
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
    await committed("spend record upsert × n", () => {
      for (const row of rows)
        ledger.run(row.id, -1, 1, row.traffic - 1, row.spend_traffic + 1, day, now + round);
    });
    await committed("usage_days upsert × n", () => {
      for (const row of rows) usage.run(day, row.id, 1, 2, 1, 1, 0, Number.MAX_SAFE_INTEGER);
    });
    await committed("spend record UPDATE by id × n", () => {
      for (const row of joined)
        ledgerById.run(row.spend_id, -1, 1, row.traffic, row.spend_traffic, now + round);
    });
    await committed("usage_days UPDATE by rowid × n", () => {
      for (const row of joined) usageByRowid.run(row.usage_rid, 1, 2, 1, 1, 0, Number.MAX_SAFE_INTEGER);
    });
    await committed("all three upserts, user by user × n", () => {
      for (const row of rows) {
        updateNarrow.run(row.traffic - 1, row.spend_traffic + 1, 1, day, row.rid);
        ledger.run(row.id, -1, 1, row.traffic - 1, row.spend_traffic + 1, day, now + round);
        usage.run(day, row.id, 1, 2, 1, 1, 0, Number.MAX_SAFE_INTEGER);
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
  console.log(`push profile: ${userCount} users, median of ${rounds} rounds`);
  for (const [name, ms] of timings) {
    console.log(
      `${name.padEnd(42)} ${median(ms).toFixed(1).padStart(8)} ms  ${((median(ms) * 1000) / userCount).toFixed(2).padStart(6)} µs/user`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
