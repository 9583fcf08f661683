/**
 * Traffic a node reported for users it was not given (issue 11 §5): not charged, kept for the
 * admin. One row per node, business day and reported user id, summed; growth is bounded by
 * DAILY_USER_CAP distinct users per node and day (the rest sum into user 0, "others") and rows
 * older than KEEP_DAYS go when the node next reports an anomaly.
 */
import type { AppContext } from "../../context.ts";
import { type Db, jsonValuesSql, leastSql } from "../../db/db.ts";
import { businessDay, DAY_MS } from "../../lib/time.ts";
import type { AnomalyReason, NodeAnomaly } from "../node-record/schema.ts";

const DAILY_USER_CAP = 1000;
const KEEP_DAYS = 30;
/** user_no of the row that sums the users past the day's cap. */
const OTHERS = 0;
const LISTED_MAX = 500;

export interface StrayUsage {
  userNo: number;
  upload: number;
  download: number;
}

/** The first business day still kept. */
const keptFrom = (now: number, timeZone: string) => businessDay(now - (KEEP_DAYS - 1) * DAY_MS, timeZone);

/** Records one report's strays; call inside the report's transaction. */
export async function recordAnomalies(
  db: Db,
  agentId: string,
  strays: StrayUsage[],
  now: number,
  timeZone: string,
) {
  if (strays.length === 0) return;
  const day = businessDay(now, timeZone);
  await db.run("DELETE FROM node_anomalies WHERE agent_id = ? AND day < ?", agentId, keptFrom(now, timeZone));
  const known = new Set(
    (
      await db.all<{ node_uid: number }>(
        `SELECT node_uid FROM users WHERE node_uid IN ${jsonValuesSql(db, "?", "bigint")}`,
        JSON.stringify(strays.map((stray) => stray.userNo)),
      )
    ).map((row) => row.node_uid),
  );
  const kept = new Set(
    (
      await db.all<{ user_no: number }>(
        "SELECT user_no FROM node_anomalies WHERE agent_id = ? AND day = ?",
        agentId,
        day,
      )
    ).map((row) => row.user_no),
  );
  // Sums stay below 2^53: each report adds at most REPORT_MAX_BYTES (node/report.ts).
  const upsert = `INSERT INTO node_anomalies (agent_id, day, user_no, reason, upload, download, reports, first_time, last_time)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?7)
     ON CONFLICT (agent_id, day, user_no) DO UPDATE SET reason = ?4,
       upload = ${leastSql(db, "node_anomalies.upload + ?5", "?8")},
       download = ${leastSql(db, "node_anomalies.download + ?6", "?8")},
       reports = node_anomalies.reports + 1, last_time = ?7`;
  const others = { upload: 0, download: 0 };
  for (const { userNo, upload, download } of strays) {
    if (!kept.has(userNo) && kept.size >= DAILY_USER_CAP) {
      others.upload += upload;
      others.download += download;
      continue;
    }
    kept.add(userNo);
    const reason: AnomalyReason = known.has(userNo) ? "not_admitted" : "unknown_user";
    await db.run(upsert, agentId, day, userNo, reason, upload, download, now, Number.MAX_SAFE_INTEGER);
  }
  if (others.upload + others.download > 0) {
    await db.run(
      upsert,
      agentId,
      day,
      OTHERS,
      "others",
      others.upload,
      others.download,
      now,
      Number.MAX_SAFE_INTEGER,
    );
  }
}

/** Anomaly rows (node, user, day) kept per node, for the node list. */
export async function anomalyCounts(ctx: AppContext, now = Date.now()): Promise<Map<string, number>> {
  const rows = await ctx.db.all<{ agent_id: string; count: number }>(
    "SELECT agent_id, COUNT(*) AS count FROM node_anomalies WHERE day >= ? GROUP BY agent_id",
    keptFrom(now, await ctx.settings.get("timezone")),
  );
  return new Map(rows.map((row) => [row.agent_id, row.count]));
}

interface AnomalyRow {
  day: string;
  user_no: number;
  email: string | null;
  reason: AnomalyReason;
  upload: number;
  download: number;
  reports: number;
  first_time: number;
  last_time: number;
}

/** A node's anomalies, newest day first, then the most traffic first. */
export async function listAnomalies(
  ctx: AppContext,
  agentId: string,
  now = Date.now(),
): Promise<NodeAnomaly[]> {
  return (
    await ctx.db.all<AnomalyRow>(
      `SELECT a.day, a.user_no, u.email, a.reason, a.upload, a.download, a.reports, a.first_time, a.last_time
       FROM node_anomalies a LEFT JOIN users u ON u.node_uid = a.user_no AND a.user_no <> 0
       WHERE a.agent_id = ? AND a.day >= ?
       ORDER BY a.day DESC, a.upload + a.download DESC, a.user_no
       LIMIT ?`,
      agentId,
      keptFrom(now, await ctx.settings.get("timezone")),
      LISTED_MAX,
    )
  ).map((row) => ({
    day: row.day,
    userNo: row.user_no,
    email: row.email ?? "",
    reason: row.reason,
    upload: row.upload,
    download: row.download,
    reports: row.reports,
    firstTime: row.first_time,
    lastTime: row.last_time,
  }));
}
