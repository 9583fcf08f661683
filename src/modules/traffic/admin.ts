/** Every user's traffic records of the last business days, for the back office (/all_traffic_records). */
import type { AppContext } from "../../context.ts";
import { addDays, businessDay } from "../../lib/time.ts";
import {
  type AdminTrafficRecord,
  ALL_TRAFFIC_RECORD_LIMIT,
  type AllTrafficRecords,
  type AllTrafficRecordsInput,
} from "./admin-schema.ts";
import { movedSql } from "./service.ts";

/** Newest first over the index traffic_records_day (day, type), at most ALL_TRAFFIC_RECORD_LIMIT rows. */
export async function listAllTrafficRecords(
  ctx: AppContext,
  { type, day_num }: AllTrafficRecordsInput,
  now = Date.now(),
): Promise<AllTrafficRecords> {
  const firstDay = addDays(businessDay(now, await ctx.settings.get("timezone")), -(day_num - 1));
  const rows = await ctx.db.all<AdminTrafficRecord>(
    `SELECT r.id AS _id, r.user_id AS uid, COALESCE(u.email, '') AS email, r.day, r.type, r.desc,
         r.traffic_change AS "trafficChange", r.exemption_traffic AS "exemptionTraffic",
         r.all_traffic AS "allTraffic", r.all_spend AS "allSpend", r.update_time AS "updateTime"
       FROM traffic_records r LEFT JOIN users u ON u.id = r.user_id
       WHERE r.day >= ?1 AND (?2 = 'all' OR r.type = ?2) AND ${movedSql("r")}
       ORDER BY r.day DESC, r.update_time DESC, r.id DESC LIMIT ?3`,
    firstDay,
    type,
    ALL_TRAFFIC_RECORD_LIMIT + 1,
  );
  const truncated = rows.length > ALL_TRAFFIC_RECORD_LIMIT;
  return { records: truncated ? rows.slice(0, ALL_TRAFFIC_RECORD_LIMIT) : rows, truncated };
}
