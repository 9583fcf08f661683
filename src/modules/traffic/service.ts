/**
 * A customer's traffic history and balances: the traffic ledger of the last business days (the
 * portal's 流量记录, `ferry traffic show`) and what is left of permanent traffic and today's quota.
 */
import type { AppContext } from "../../context.ts";
import { addDays, businessDay } from "../../lib/time.ts";
import type { UserRow } from "../user/row.ts";
import type { UserInfo } from "../user/schema.ts";
import { userInfo } from "../user/service.ts";
import { TRAFFIC_RECORD_DAYS, type TrafficFilter, type TrafficRecord } from "./schema.ts";

export interface TrafficRecordQuery {
  /** One type, or "all" (the default). */
  type?: TrafficFilter;
  /** Business days covered, today included. */
  days?: number;
  now?: number;
}

/**
 * SQL: the record moved a balance. Since migration 020 a user whose reports of a day were all
 * overdraft has a spend record that moved nothing (it only holds the day's usage); the record lists
 * leave it out, as they did when it did not exist.
 */
export function movedSql(alias?: string): string {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return `NOT (${column("type")} = 'spend' AND ${column("traffic_change")} = 0 AND ${column("exemption_traffic")} = 0)`;
}

/** The first business day of a window of `days` days that ends today (setting `timezone`). */
async function firstDayOfWindow(ctx: AppContext, days: number, now: number): Promise<string> {
  return addDays(businessDay(now, await ctx.settings.get("timezone")), -(days - 1));
}

/** The user's traffic records of the last `days` business days, newest first. */
export async function listTrafficRecords(
  ctx: AppContext,
  userId: string,
  { type = "all", days = TRAFFIC_RECORD_DAYS, now = Date.now() }: TrafficRecordQuery = {},
): Promise<TrafficRecord[]> {
  return await ctx.db.all<TrafficRecord>(
    `SELECT type, "desc", traffic_change AS "trafficChange", exemption_traffic AS "exemptionTraffic",
         all_traffic AS "allTraffic", all_spend AS "allSpend", update_time AS "updateTime", day
       FROM traffic_records
       WHERE user_id = ?1 AND day >= ?2 AND (?3 = 'all' OR type = ?3) AND ${movedSql()}
       ORDER BY day DESC, update_time DESC, id DESC`,
    userId,
    await firstDayOfWindow(ctx, days, now),
    type,
  );
}

/** A user's balances as the dashboard shows them (seed 000 §3 user info fields). Bytes and ms. */
export type TrafficBalance = Pick<
  UserInfo,
  "email" | "traffic" | "spendTraffic" | "vipExpireTime" | "dailyTimePackageUsage" | "limit"
>;

export async function trafficBalance(ctx: AppContext, user: UserRow): Promise<TrafficBalance> {
  const { email, traffic, spendTraffic, vipExpireTime, dailyTimePackageUsage, limit } = await userInfo(
    ctx,
    user,
  );
  return { email, traffic, spendTraffic, vipExpireTime, dailyTimePackageUsage, limit };
}
