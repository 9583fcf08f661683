/**
 * Charging node traffic (DESIGN §7, issue 5). A node report `{user: [upload, download]}` is
 * scaled, taken from today's time-package quota, then from running trial traffic (issue 14, soonest
 * expiry first) and then from permanent traffic, and written in one transaction to the users, their
 * trial grants, their spend record of the day (the traffic ledger), the per-day usage statistics and
 * the heat of the lines the traffic went through. A report id is applied once.
 *
 * Issue 11: the report comes checked whole (node/report.ts: canonical ids, once each, bounded safe
 * integers). Only users the node was given are charged (node/admission.ts); what it reports for
 * anyone else is kept as an anomaly (node/anomalies.ts). Sums written here saturate at 2^53 − 1,
 * so every integer column stays an integer however many reports arrive.
 */
import type { AppContext } from "../../context.ts";
import {
  type Db,
  inTurn,
  jsonValuesSql,
  leastSql,
  listParam,
  listValuesSql,
  rowAddressIsSql,
  rowAddressSql,
  type SqlValue,
  tx,
} from "../../db/db.ts";
import { businessDay, DAY_MS } from "../../lib/time.ts";
import { MB } from "../../lib/traffic.ts";
import { INBOUND_TAG } from "../../node-program/core-config.ts";
import type { LineProtocol } from "../line/schema.ts";
import { countNodeReport } from "../metrics/service.ts";
import { admittedSince, admittedSql, NODE_REPORT_TURN } from "../node-api/admission.ts";
import { recordAnomalies } from "../node-api/anomalies.ts";
import type { PushUsage } from "../node-api/report.ts";
import { expireDueTrials } from "../trial/service.ts";
import { dailyQuota } from "../user/limits.ts";
import type { UserRow } from "../user/row.ts";
import { queueWebhookEvent } from "../webhook/outbox.ts";
import { type ChargeRow, writeChargeSets } from "./charge-sets.ts";
import { countReconcile } from "./reconcile-count.ts";

/** The multipliers one report is charged with. */
export interface ChargeScales {
  /** The line's scale (the lowest among the node's lines sharing the inbound, docs/decisions.md). */
  line: number;
  /** traffic_spend_scale: downloads. */
  download: number;
  /** upload_traffic_spend_scale: uploads. */
  upload: number;
  /** minestTrafficSpend in bytes: the least a user who moved anything pays per report. */
  minimum: number;
}

/** The most any sum written by a report may reach: the largest integer a JS number holds exactly. */
const SATURATED = Number.MAX_SAFE_INTEGER;

/** Bytes charged for one user's raw upload and download. */
export function chargeFor(upload: number, download: number, userScale: number, scales: ChargeScales): number {
  if (upload + download <= 0) return 0;
  const scaled = Math.round((upload * scales.upload + download * scales.download) * scales.line * userScale);
  return Math.min(Math.max(scaled, scales.minimum), SATURATED);
}

/** The balance columns charging reads. */
export type ChargedUser = Pick<
  UserRow,
  | "traffic"
  | "spend_traffic"
  | "vip_expire_time"
  | "daily_limit"
  | "special_daily_unlimit_traffic"
  | "daily_unlimit_traffic"
  | "daily_usage"
  | "daily_usage_day"
>;

export interface ChargeSplit {
  fromQuota: number;
  /** Taken from running trial traffic (part of balances.traffic). */
  fromTrial: number;
  fromPermanent: number;
  /** What found neither quota, trial nor permanent traffic left. */
  overdraft: number;
  /** Today's time-package usage after the charge. */
  dailyUsage: number;
}

/**
 * Takes a charge from the quota of `day` (the business day of `now`; the quota restarts at each
 * day's start) while the time package runs, to the millisecond, then from the running trial
 * traffic `trial` (the part of balances.traffic its grants still hold), then from permanent traffic
 * (the rest of balances.traffic). Neither pays while the one before it has anything left.
 */
export function splitCharge(
  user: ChargedUser,
  charge: number,
  now: number,
  day: string,
  trial = 0,
): ChargeSplit {
  const usedToday = user.daily_usage_day === day ? user.daily_usage : 0;
  const quotaLeft = user.vip_expire_time > now ? Math.max(0, dailyQuota(user) - usedToday) : 0;
  const fromQuota = Math.min(charge, quotaLeft);
  const balance = Math.max(0, user.traffic);
  const fromTrial = Math.min(charge - fromQuota, trial, balance);
  const fromPermanent = Math.min(charge - fromQuota - fromTrial, Math.max(0, balance - trial));
  return {
    fromQuota,
    fromTrial,
    fromPermanent,
    overdraft: charge - fromQuota - fromTrial - fromPermanent,
    dailyUsage: usedToday + fromQuota,
  };
}

export interface NodeReport {
  agentId: string;
  /** The agent's id for this report; a report seen before is not applied again. Null: no dedupe. */
  reportId: string | null;
  /** The inbound the traffic went through (INBOUND_TAG); null charges at the node's lowest line scale. */
  inbound: string | null;
  /** The push as checked by checkPush (node/report.ts). */
  usage: PushUsage;
  now: number;
}

export interface ReportResult {
  duplicate: boolean;
  /** Users charged (known users with traffic in the report). */
  users: number;
  /** Bytes charged in total. */
  charged: number;
  /** Users with traffic the node was not given: not charged, kept as anomalies. */
  anomalies: number;
}

/** Reports older than this are forgotten; an agent gives up resending long before. */
const REPORT_ID_DAYS = 30;

/** The node's lines served by the inbound (all the node's lines when it is null or unknown). */
async function inboundLines(ctx: AppContext, agentId: string, inbound: string | null) {
  const lines = await ctx.db.all<{ id: string; protocol: LineProtocol; scale: number }>(
    "SELECT id, protocol, scale FROM agent_lines WHERE agent_id = ?",
    agentId,
  );
  const served = lines.filter((line) => INBOUND_TAG[line.protocol] === inbound);
  return served.length > 0 ? served : lines;
}

async function reportScales(ctx: AppContext, lineScales: number[]): Promise<ChargeScales> {
  const settings = await ctx.settings.all();
  return {
    line: lineScales.length > 0 ? Math.min(...lineScales) : 1,
    // noGlobalTrafficScaleLimit: the user's own scale (with the line's) is the whole multiplier.
    download: settings.noGlobalTrafficScaleLimit ? 1 : settings.traffic_spend_scale,
    upload: settings.noGlobalTrafficScaleLimit ? 1 : settings.upload_traffic_spend_scale,
    minimum: Math.round(settings.minestTrafficSpend * MB),
  };
}

/**
 * `trial`: Σ remaining of the user's running grants (due ones are expired before charging).
 * `rid`: the rowid of the user's balances row (migration 013: the narrow table a report rewrites);
 * `spend_id`: the user's spend record of the day (which holds the day's usage, migration 020), if
 * any. Both SQLite only (rowsFoundSql), null on PostgreSQL.
 */
type UserBalance = ChargedUser &
  Pick<UserRow, "id" | "node_uid" | "scale"> & {
    rid: number | null;
    trial: number;
    spend_id: number | null;
  };

/**
 * What the SELECT of applyNodeReport finds for SQLite's writes by row: the balances row and the
 * user's spend record of the day (`?5`), updated by their ids (writeCharges, writeDayRows).
 * PostgreSQL writes by user id (charge-sets.ts) and does not look them up: right after the day's
 * first report its statistics know none of the day's rows, and the planner then joined today's
 * spend records by scanning them once per user (10,000 users: 15 s instead of 0.1 s).
 */
function rowsFoundSql(db: Db) {
  // ?5 is bound on both engines, so PostgreSQL is given its type here.
  if (db.engine === "postgres")
    return { columns: "NULL AS rid, NULL AS spend_id, CAST(?5 AS TEXT) AS day", joins: "" };
  return {
    columns: `${rowAddressSql(db, "b")} AS rid, s.id AS spend_id`,
    joins: "LEFT JOIN traffic_records s ON s.user_id = u.id AND s.day = ?5 AND s.type = 'spend'",
  };
}

/** Applies a node report in one transaction; a repeated report id changes nothing. */
export async function applyNodeReport(ctx: AppContext, report: NodeReport): Promise<ReportResult> {
  const { now, agentId } = report;
  const timeZone = await ctx.settings.get("timezone");
  const day = businessDay(now, timeZone);
  const lines = await inboundLines(ctx, agentId, report.inbound);
  const scales = await reportScales(
    ctx,
    lines.map((line) => line.scale),
  );
  const moved = [...report.usage].filter(([, [upload, download]]) => upload + download > 0);
  const db = ctx.db;
  // Reports take turns on PostgreSQL (inTurn): two at once would fail each other under SERIALIZABLE.
  const outcome = await inTurn(db, NODE_REPORT_TURN, () =>
    tx(db, async (): Promise<ReportResult> => {
      if (report.reportId !== null) {
        const fresh = (
          await db.run(
            "INSERT INTO node_reports (agent_id, report_id, users, create_time) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            agentId,
            report.reportId,
            moved.length,
            now,
          )
        ).changes;
        if (!fresh) return { duplicate: true, users: 0, charged: 0, anomalies: 0 };
        await db.run(
          "DELETE FROM node_reports WHERE agent_id = ? AND create_time < ?",
          agentId,
          now - REPORT_ID_DAYS * DAY_MS,
        );
      }
      // Trial traffic due by now must not pay for this report: it goes first, with its own record.
      await expireDueTrials(ctx, now);
      // Only users the node was given are charged; the rest are kept as anomalies.
      const users = await db.all<UserBalance>(
        `SELECT u.id, u.node_uid, u.scale, b.traffic, b.spend_traffic, u.vip_expire_time,
           u.daily_limit, u.special_daily_unlimit_traffic, u.daily_unlimit_traffic, b.daily_usage, b.daily_usage_day,
           (SELECT COALESCE(SUM(remaining), 0) FROM trial_grants g WHERE g.user_id = u.id AND g.remaining > 0) AS trial,
           ${rowsFoundSql(db).columns}
         FROM users u
         JOIN balances b ON b.user_id = u.id
         ${rowsFoundSql(db).joins}
         WHERE u.node_uid IN ${listValuesSql(db, "?1", "bigint")} AND ${admittedSql("u.node_uid", "?2", "?3", "?4")}`,
        listParam(
          db,
          moved.map(([userNo]) => userNo),
        ),
        agentId,
        await admittedSince(ctx, now),
        now,
        day,
      );
      const charged = new Set(users.map((user) => user.node_uid));
      const strays = moved
        .filter(([userNo]) => !charged.has(userNo))
        .map(([userNo, [upload, download]]) => ({ userNo, upload, download }));
      await recordAnomalies(db, agentId, strays, now, timeZone);
      await db.run(
        "UPDATE agents SET last_push_time = ?, last_seen_time = ?, online_users = ? WHERE id = ?",
        now,
        now,
        users.length,
        agentId,
      );
      const result = { duplicate: false, users: users.length, charged: 0, anomalies: strays.length };
      let carried = 0;
      const charges = users.map((user): UserCharge => {
        const [upload, download] = report.usage.get(user.node_uid) as [number, number];
        carried += upload + download;
        const charge = chargeFor(upload, download, user.scale, scales);
        result.charged += charge;
        return { user, upload, download, split: splitCharge(user, charge, now, day, user.trial) };
      });
      await writeCharges(ctx, charges, day, now);
      await countReconcile(db, scales, {
        agentId,
        day,
        admitted: charges.map(({ user, upload, download }) => ({ upload, download, userScale: user.scale })),
        anomalyBytes: strays.reduce((sum, stray) => sum + stray.upload + stray.download, 0),
        chargedBytes: result.charged,
      });
      await tellExhausted(ctx, charges, agentId, now);
      if (users.length > 0 && lines.length > 0) {
        await db.run(
          `UPDATE agent_lines SET hot = ${leastSql(db, "hot + ?", "?")} WHERE id IN ${jsonValuesSql(db, "?", "text")}`,
          carried,
          SATURATED,
          JSON.stringify(lines.map((line) => line.id)),
        );
      }
      return result;
    }),
  );
  countNodeReport(db, outcome.duplicate, outcome.charged);
  return outcome;
}

interface UserCharge {
  user: UserBalance;
  upload: number;
  download: number;
  split: ChargeSplit;
}

/**
 * Per user: the balances (their own narrow table, not the wide users row), the trial grants and the
 * day's spend record in the traffic ledger (one per user and day, kept up to date: traffic_change
 * is what left balances.traffic — trial and permanent —, exemption_traffic what the time package
 * covered), which since migration 020 also holds the day's usage (read as the view usage_days; its
 * `permanent` column is also what left balances.traffic, trial included): one write per user
 * where there were two (issue 31).
 *
 * Issue 18 §3 (scripts/bench/push-profile.ts): a row the SELECT found is updated by its rowid, which
 * took half the time of an upsert (no unique-index probe, no AUTOINCREMENT bookkeeping); only the
 * day's first report inserts. Each table is written in one pass rather than user by user, so its
 * pages are touched together.
 *
 * Issue 27 §4: on PostgreSQL each statement is a round trip (~35 µs), so the same values go to
 * charge-sets.ts, which writes each table in one statement for the whole report.
 */
async function writeCharges(ctx: AppContext, charges: UserCharge[], day: string, now: number) {
  const db = ctx.db;
  // PostgreSQL: a round trip per statement, so one statement per table for the whole report.
  if (db.engine === "postgres") return await writeChargeSets(db, charges.map(chargeRow), day, now, SATURATED);
  const balances = `UPDATE balances SET traffic = ?, spend_traffic = ?, daily_usage = ?, daily_usage_day = ? WHERE ${rowAddressIsSql(db)}`;
  const paid = charges.filter(({ split }) => isPaid(split));
  await db.runMany(
    balances,
    paid.map(({ user, split }) => {
      const { traffic, spend } = after(user, split);
      return [traffic, spend, split.dailyUsage, day, user.rid];
    }),
  );
  const spendTrial = trialSpender(ctx);
  for (const { user, split } of paid) if (split.fromTrial > 0) await spendTrial(user.id, split.fromTrial);
  await writeDayRows(db, charges, day, now);
}

/**
 * traffic.exhausted: users whose traffic (trial and permanent, balances.traffic) this report took
 * to zero. Once per exhaustion: the next report finds it at zero already, and only a top-up starts
 * another.
 */
async function tellExhausted(ctx: AppContext, charges: UserCharge[], agentId: string, now: number) {
  const exhausted = charges.filter(({ user, split }) => user.traffic > 0 && after(user, split).traffic <= 0);
  for (const { user, split } of exhausted) {
    await queueWebhookEvent(
      ctx,
      "traffic.exhausted",
      async () => ({
        userId: user.id,
        email: (await ctx.db.get<{ email: string }>("SELECT email FROM users WHERE id = ?", user.id))?.email,
        nodeId: agentId,
        spendTraffic: after(user, split).spend,
        vipExpireTime: user.vip_expire_time,
        time: now,
      }),
      now,
    );
  }
}

const isPaid = (split: ChargeSplit) => split.fromQuota + split.fromTrial + split.fromPermanent > 0;

/** A user's balances after the charge, and what left balances.traffic (trial and permanent). */
function after(user: UserBalance, split: ChargeSplit) {
  const fromTraffic = split.fromTrial + split.fromPermanent;
  return {
    fromTraffic,
    traffic: user.traffic - fromTraffic,
    spend: user.spend_traffic + split.fromQuota + fromTraffic,
  };
}

/** One user's writes for the set-based writer (charge-sets.ts): the values the statements below write. */
function chargeRow({ user, upload, download, split }: UserCharge): ChargeRow {
  const { fromTraffic, traffic, spend } = after(user, split);
  return {
    userId: user.id,
    paid: isPaid(split),
    traffic,
    spend,
    dailyUsage: split.dailyUsage,
    fromTrial: split.fromTrial,
    trafficChange: -fromTraffic,
    exemption: split.fromQuota,
    upload,
    download,
    quota: split.fromQuota,
    permanent: fromTraffic,
    overdraft: split.overdraft,
  };
}

/**
 * The day's row of each user (migration 020: the spend record, holding the day's usage too), one
 * write per user: updated by id when the SELECT found it, else inserted (or joined on conflict).
 * Every user adds [upload, download, quota, permanent, overdraft], each saturating; only a paid
 * charge moves the ledger columns (traffic_change: what left balances.traffic, trial and permanent,
 * ≤ 0; exemption_traffic: what the time package covered, ≥ 0), so "either is not 0" is "paid", and
 * only then are all_traffic, all_spend and update_time stamped: an overdraft-only report leaves the
 * record as the lists show it.
 */
async function writeDayRows(db: Db, charges: UserCharge[], day: string, now: number) {
  const paid = "?2 <> 0 OR ?3 <> 0";
  const sums = `upload = ${leastSql(db, "traffic_records.upload + ?7", "?12")}, download = ${leastSql(db, "traffic_records.download + ?8", "?12")},
       quota = ${leastSql(db, "traffic_records.quota + ?9", "?12")}, permanent = ${leastSql(db, "traffic_records.permanent + ?10", "?12")},
       overdraft = ${leastSql(db, "traffic_records.overdraft + ?11", "?12")},
       traffic_change = traffic_records.traffic_change + ?2, exemption_traffic = traffic_records.exemption_traffic + ?3,
       all_traffic = CASE WHEN ${paid} THEN ?4 ELSE traffic_records.all_traffic END,
       all_spend = CASE WHEN ${paid} THEN ?5 ELSE traffic_records.all_spend END,
       update_time = CASE WHEN ${paid} THEN ?6 ELSE traffic_records.update_time END`;
  const insert = `INSERT INTO traffic_records (user_id, type, "desc", traffic_change, exemption_traffic, all_traffic, all_spend,
       update_time, upload, download, quota, permanent, overdraft, day)
     VALUES (?1, 'spend', '节点流量', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13)
     ON CONFLICT (user_id, day) WHERE type = 'spend' DO UPDATE SET ${sums}`;
  const update = `UPDATE traffic_records SET ${sums} WHERE id = ?1`;
  const inserts: SqlValue[][] = [];
  const updates: SqlValue[][] = [];
  for (const charge of charges) {
    const row = chargeRow(charge);
    const values: SqlValue[] = [
      row.trafficChange,
      row.exemption,
      row.traffic,
      row.spend,
      now,
      row.upload,
      row.download,
      row.quota,
      row.permanent,
      row.overdraft,
      SATURATED,
    ];
    if (charge.user.spend_id === null) inserts.push([charge.user.id, ...values, day]);
    else updates.push([charge.user.spend_id, ...values]);
  }
  await db.runMany(update, updates);
  await db.runMany(insert, inserts);
}

/** Takes `amount` from a user's running grants, soonest expiry first. Only users who spend trial get here. */
function trialSpender(ctx: AppContext) {
  const db = ctx.db;
  const running =
    "SELECT id, remaining FROM trial_grants WHERE user_id = ? AND remaining > 0 ORDER BY expire_time, id";
  const take = "UPDATE trial_grants SET remaining = remaining - ? WHERE id = ?";
  return async (userId: string, amount: number) => {
    let left = amount;
    for (const grant of await db.all<{ id: number; remaining: number }>(running, userId)) {
      if (left === 0) break;
      const taken = Math.min(left, grant.remaining);
      await db.run(take, taken, grant.id);
      left -= taken;
    }
    if (left !== 0) throw new Error(`trial grants of ${userId} hold ${amount - left} bytes, not ${amount}`);
  };
}
