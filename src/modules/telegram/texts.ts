/** What the bot says: plain text (sent without parse_mode, so nothing in it is markup). */
import type { AppContext } from "../../context.ts";
import { businessDateTime } from "../../lib/time.ts";
import { formatTraffic } from "../../lib/traffic.ts";
import { trafficLeft } from "../../subscription/service.ts";
import { trialBalance } from "../trial/service.ts";
import type { UserRow } from "../user/row.ts";

/**
 * The account's traffic as /traffic tells it: the time package today, permanent traffic and the
 * traffic that expires (trial vouchers' and packages bought with a duration: 限时流量).
 */
export async function trafficText(ctx: AppContext, user: UserRow, now = Date.now()): Promise<string> {
  const timeZone = await ctx.settings.get("timezone");
  const left = await trafficLeft(ctx, user, now);
  const timePackage =
    user.vip_expire_time > now
      ? `时间套餐：今日剩余 ${formatTraffic(left.quota)}，有效期至 ${businessDateTime(user.vip_expire_time, timeZone)}`
      : user.vip_expire_time > 0
        ? `时间套餐：已于 ${businessDateTime(user.vip_expire_time, timeZone)} 到期`
        : "时间套餐：无";
  const trial = await trialBalance(ctx.db, user.id, now);
  const lines = [`账号：${user.email}`, timePackage];
  lines.push(`永久流量：剩余 ${formatTraffic(Math.max(0, left.permanent - trial.trialTraffic))}`);
  if (trial.trialTraffic > 0)
    lines.push(
      `限时流量：剩余 ${formatTraffic(trial.trialTraffic)}，最早于 ${businessDateTime(trial.trialExpireTime, timeZone)} 到期`,
    );
  return lines.join("\n");
}
