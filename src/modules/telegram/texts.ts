/** What the bot says: plain text (sent without parse_mode, so nothing in it is markup). */
import type { AppContext } from "../../context.ts";
import { businessDateTime } from "../../lib/time.ts";
import { formatTraffic } from "../../lib/traffic.ts";
import { trafficLeft } from "../../subscription/service.ts";
import type { UserRow } from "../user/service.ts";

/** The account's traffic as /traffic tells it: the time package today and the permanent traffic. */
export function trafficText(ctx: AppContext, user: UserRow, now = Date.now()): string {
  const timeZone = ctx.settings.get("timezone");
  const left = trafficLeft(ctx, user, now);
  const timePackage =
    user.vip_expire_time > now
      ? `时间套餐：今日剩余 ${formatTraffic(left.quota)}，有效期至 ${businessDateTime(user.vip_expire_time, timeZone)}`
      : user.vip_expire_time > 0
        ? `时间套餐：已于 ${businessDateTime(user.vip_expire_time, timeZone)} 到期`
        : "时间套餐：无";
  return [`账号：${user.email}`, timePackage, `永久流量：剩余 ${formatTraffic(left.permanent)}`].join("\n");
}
