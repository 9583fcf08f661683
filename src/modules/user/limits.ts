/**
 * The per-user fields an admin edits that change what a customer may use (issue 16,
 * docs/decisions.md "User fields"): the daily time-package quota and its special override.
 * Bytes everywhere; the admin form shows G.
 */
import { DEFAULT_DAILY_LIMIT } from "../../lib/traffic.ts";
import type { UserRow } from "./row.ts";

export type DailyQuotaColumns = Pick<
  UserRow,
  "daily_limit" | "special_daily_unlimit_traffic" | "daily_unlimit_traffic"
>;

/**
 * Today's time-package quota: the admin's special amount (dailyUnlimitTraffic) while
 * specialDailyUnlimitTraffic is on, else the package's daily limit (the default when none).
 */
export function dailyQuota(user: DailyQuotaColumns): number {
  return user.special_daily_unlimit_traffic
    ? user.daily_unlimit_traffic
    : (user.daily_limit ?? DEFAULT_DAILY_LIMIT);
}

/** dailyQuota in SQL for the users row `alias`; `fallback` is the parameter bound to DEFAULT_DAILY_LIMIT. */
export function dailyQuotaSql(alias: string, fallback: string): string {
  return `CASE WHEN ${alias}.special_daily_unlimit_traffic = 1 THEN ${alias}.daily_unlimit_traffic ELSE COALESCE(${alias}.daily_limit, ${fallback}) END`;
}
