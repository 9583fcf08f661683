import { DEFAULT_DAILY_LIMIT } from "../../src/lib/traffic.ts";
import type { UserInfo } from "../../src/modules/user/schema.ts";
import { DAY_MS } from "../components/format.ts";

/** The time-package figures of the dashboard card (seed 000 §9). */
export function timePackage(
  user: Pick<UserInfo, "limit" | "dailyTimePackageUsage" | "vipExpireTime">,
  now = Date.now(),
) {
  const limit = user.limit > 0 ? user.limit : DEFAULT_DAILY_LIMIT;
  const used = Math.max(0, user.dailyTimePackageUsage);
  return {
    active: user.vipExpireTime > now,
    limit,
    used,
    /** Today's quota left: limit − dailyTimePackageUsage. */
    left: Math.max(0, limit - used),
    percent: Math.min(100, (used / limit) * 100),
    daysLeft: Math.round((user.vipExpireTime - now) / DAY_MS),
  };
}
