/**
 * Reconciliation per node and business day (issue 32): what the node's applied reports brought
 * (counted in each report's transaction by reconcile-count.ts) against what was charged, and the
 * expected charge recomputed here from the raw bytes and the multipliers in force — never by
 * charge.ts's chargeFor, so an error in charging shows as a divergence. Read by 节点管理 → 对账,
 * `ferry node reconcile`, /metrics (ferry_reconcile_divergence_ratio) and the scan that tells the
 * bound admins by the bot.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { addDays, businessDay } from "../../lib/time.ts";
import { formatTraffic } from "../../lib/traffic.ts";
import { startPeriodic } from "../errors/periodic.ts";
import { queueAdminMessage } from "../telegram/outbox.ts";
import { DIVERGENCE_LIMIT, RECONCILE_DAYS, type ReconcileDay } from "./reconcile-schema.ts";

export interface ReconcileQuery {
  nodeId?: string;
  /** One business day (YYYY-MM-DD); else the last RECONCILE_DAYS business days. */
  day?: string;
}

interface DayRow {
  agent_id: string;
  name: string | null;
  day: string;
  reports: number;
  raw_upload: number;
  raw_download: number;
  anomaly_bytes: number;
  charged_bytes: number;
  told_time: number;
}

interface ScaleRow {
  agent_id: string;
  day: string;
  line_scale: number;
  user_scale: number;
  upload_scale: number;
  download_scale: number;
  raw_upload: number;
  raw_download: number;
  charges: number;
  minimum_added: number;
}

/** The expected charge of a tuple's bytes: scaled by every multiplier, plus what the minimum added. */
function expectedOf(row: ScaleRow): number {
  const scaled = (row.raw_upload * row.upload_scale + row.raw_download * row.download_scale) * row.line_scale;
  return Math.round(scaled * row.user_scale) + row.minimum_added;
}

/**
 * The divergence beyond rounding: each charge is rounded to a whole byte on its own, the expected
 * figure once per tuple, so up to half a byte per charge (and per tuple) is no divergence.
 */
function divergenceOf(charged: number, expected: number, charges: number, tuples: number): number {
  const beyond = Math.max(0, Math.abs(charged - expected) - (charges + tuples) / 2);
  return beyond / Math.max(expected, 1);
}

/** The first business day of the window ending at now's business day. */
async function windowStart(ctx: AppContext, now: number) {
  return addDays(businessDay(now, await ctx.settings.get("timezone")), -(RECONCILE_DAYS - 1));
}

/** Days with reports, newest first (then by node), with the expected figure and the flag. */
export async function reconcileDays(
  ctx: AppContext,
  query: ReconcileQuery = {},
  now = Date.now(),
): Promise<ReconcileDay[]> {
  const from = query.day ?? (await windowStart(ctx, now));
  const to = query.day ?? "9999-12-31";
  const node = query.nodeId ?? null;
  const filter = (t: string) =>
    `${t}.day >= ?1 AND ${t}.day <= ?2 AND (CAST(?3 AS TEXT) IS NULL OR ${t}.agent_id = ?3)`;
  const days = await ctx.db.all<DayRow>(
    `SELECT r.agent_id, a.name, r.day, r.reports, r.raw_upload, r.raw_download, r.anomaly_bytes, r.charged_bytes, r.told_time
     FROM node_reconcile_days r LEFT JOIN agents a ON a.id = r.agent_id
     WHERE ${filter("r")}
     ORDER BY r.day DESC, r.agent_id`,
    from,
    to,
    node,
  );
  const scales = await ctx.db.all<ScaleRow>(
    `SELECT s.agent_id, s.day, line_scale, user_scale, upload_scale, download_scale, raw_upload, raw_download, charges, minimum_added
     FROM node_reconcile_scales s WHERE ${filter("s")}`,
    from,
    to,
    node,
  );
  const expected = new Map<string, { bytes: number; charges: number; tuples: number }>();
  for (const row of scales) {
    const key = `${row.agent_id}|${row.day}`;
    const sum = expected.get(key) ?? { bytes: 0, charges: 0, tuples: 0 };
    sum.bytes += expectedOf(row);
    sum.charges += row.charges;
    sum.tuples += 1;
    expected.set(key, sum);
  }
  return days.map((row) => {
    const sum = expected.get(`${row.agent_id}|${row.day}`) ?? { bytes: 0, charges: 0, tuples: 0 };
    const divergenceRatio = divergenceOf(row.charged_bytes, sum.bytes, sum.charges, sum.tuples);
    return {
      nodeId: row.agent_id,
      nodeName: row.name ?? "",
      day: row.day,
      reports: row.reports,
      rawBytes: row.raw_upload + row.raw_download,
      rawUpload: row.raw_upload,
      rawDownload: row.raw_download,
      anomalyBytes: row.anomaly_bytes,
      chargedBytes: row.charged_bytes,
      expectedChargedBytes: sum.bytes,
      divergenceRatio,
      flagged: divergenceRatio > DIVERGENCE_LIMIT,
    };
  });
}

/** Per node, the largest divergence ratio among its days of the window (for /metrics). */
export async function worstDivergences(ctx: AppContext, now = Date.now()): Promise<Map<string, number>> {
  const worst = new Map<string, number>();
  for (const day of await reconcileDays(ctx, {}, now))
    worst.set(day.nodeId, Math.max(worst.get(day.nodeId) ?? 0, day.divergenceRatio));
  return worst;
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(2)}%`;

/**
 * Tells the bound admins by the bot about each flagged day of the window, once per node and day:
 * the day's told_time is set in the transaction that queues the message.
 */
export async function tellDivergences(ctx: AppContext, now = Date.now()): Promise<number> {
  let told = 0;
  for (const day of await reconcileDays(ctx, {}, now)) {
    if (!day.flagged) continue;
    await tx(ctx.db, async () => {
      const marked = await ctx.db.run(
        "UPDATE node_reconcile_days SET told_time = ? WHERE agent_id = ? AND day = ? AND told_time = 0",
        now,
        day.nodeId,
        day.day,
      );
      if (marked.changes === 0) return;
      told += 1;
      await queueAdminMessage(
        ctx,
        `对账不符：节点「${day.nodeName || day.nodeId}」${day.day} 计费 ${formatTraffic(day.chargedBytes)}（${day.chargedBytes} 字节），` +
          `应计 ${formatTraffic(day.expectedChargedBytes)}（${day.expectedChargedBytes} 字节），偏差 ${percent(day.divergenceRatio)}。`,
        `reconcile:${day.nodeId}:${day.day}`,
      );
    });
  }
  return told;
}

export const RECONCILE_SCAN_MS = 60_000;

/** The reconcile-scan job: tellDivergences at start and every intervalMs. */
export async function startReconcileScan(ctx: AppContext, intervalMs = RECONCILE_SCAN_MS) {
  return await startPeriodic(ctx, "reconcile-scan", intervalMs, async () => await tellDivergences(ctx));
}
