/** What the bot says: plain text (sent without parse_mode, so nothing in it is markup). */
import type { AppContext } from "../../context.ts";
import { formatTraffic } from "../../lib/traffic.ts";
import { trafficLeft } from "../../subscription/service.ts";
import type { UserRow } from "../user/service.ts";

const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();

/** "2025-03-01 08:00" in the business timezone (setting `timezone`). */
export function formatDateTime(instant: number, timeZone: string): string {
  let format = dateTimeFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    });
    dateTimeFormats.set(timeZone, format);
  }
  const part = (type: string) => format.formatToParts(instant).find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")}`;
}

/** The account's traffic as /traffic tells it: the time package today and the permanent traffic. */
export function trafficText(ctx: AppContext, user: UserRow, now = Date.now()): string {
  const timeZone = ctx.settings.get("timezone");
  const left = trafficLeft(ctx, user, now);
  const timePackage =
    user.vip_expire_time > now
      ? `时间套餐：今日剩余 ${formatTraffic(left.quota)}，有效期至 ${formatDateTime(user.vip_expire_time, timeZone)}`
      : user.vip_expire_time > 0
        ? `时间套餐：已于 ${formatDateTime(user.vip_expire_time, timeZone)} 到期`
        : "时间套餐：无";
  return [`账号：${user.email}`, timePackage, `永久流量：剩余 ${formatTraffic(left.permanent)}`].join("\n");
}
