/**
 * Basic statistics (seed 001 §2.10): per business day, check-ins, paid orders and income, traffic
 * charged to permanent-traffic and time-package users, lucky-draw spend and reward. Each figure is
 * one SQL aggregate grouped by day over the ledger tables (sign_uses, orders, usage_days,
 * prize_draws), so a call runs five queries whatever the number of days or users.
 */
import type { AppContext } from "../../context.ts";
import { addDays, businessDay, endOfBusinessDay } from "../../lib/time.ts";
import { GB, TB } from "../../lib/traffic.ts";
import { type BasicStastic, type StasticDay, twoDecimals } from "./schema.ts";

interface SignUseDay {
  day: string;
  sign_use_num: number;
}
interface PayDay {
  day: string;
  pay_num: number;
  income_fen: number;
}
interface UsageDay {
  day: string;
  normal_users: number;
  normal_bytes: number;
  day_users: number;
  day_bytes: number;
  active_users: number;
}
interface DrawDay {
  day: string;
  spend_num: number;
  spend_bytes: number;
  reward_num: number;
  reward_bytes: number;
}

const g = (bytes: number) => twoDecimals(bytes / GB);
const average = (bytes: number, users: number) => (users > 0 ? g(bytes / users) : 0);

const byDay = <T extends { day: string }>(rows: T[]) => new Map(rows.map((row) => [row.day, row]));

/**
 * Paid orders per business day. A day's instants depend on the timezone (and its daylight-saving
 * rules), so the day bounds are computed here and joined as a VALUES table: one range read of
 * the orders_pay_time index per day.
 */
async function payDays(ctx: AppContext, days: string[], timeZone: string): Promise<PayDay[]> {
  const bounds = days.map((day) => [
    day,
    endOfBusinessDay(addDays(day, -1), timeZone) + 1,
    endOfBusinessDay(day, timeZone),
  ]);
  const values = bounds.map(() => "(?, ?, ?)").join(", ");
  return await ctx.db.all<PayDay>(
    `WITH bounds (day, first_ms, last_ms) AS (VALUES ${values})
       SELECT bounds.day AS day, COUNT(*) AS pay_num,
              SUM(orders.order_money_fen - orders.coupon_discount_fen) AS income_fen
       FROM bounds JOIN orders
         ON orders.status = 'paied' AND orders.pay_time >= bounds.first_ms AND orders.pay_time <= bounds.last_ms
       GROUP BY bounds.day`,
    ...bounds.flat(),
  );
}

/** `basic_stastic`: the `num` business days up to the one `now` falls on, newest first, and totals. */
export async function basicStastic(ctx: AppContext, num: number, now: number): Promise<BasicStastic> {
  const timeZone = await ctx.settings.get("timezone");
  const today = businessDay(now, timeZone);
  const days = Array.from({ length: num }, (_, i) => addDays(today, -i));
  const first = days[days.length - 1] as string;
  const db = ctx.db;
  const signUses = byDay(
    await db.all<SignUseDay>(
      `SELECT day, COUNT(*) AS sign_use_num FROM sign_uses WHERE day >= ? AND day <= ? GROUP BY day`,
      first,
      today,
    ),
  );
  const usage = byDay(
    await db.all<UsageDay>(
      `SELECT day,
                SUM(CASE WHEN permanent > 0 THEN 1 ELSE 0 END) AS normal_users, SUM(permanent) AS normal_bytes,
                SUM(CASE WHEN quota > 0 THEN 1 ELSE 0 END) AS day_users, SUM(quota) AS day_bytes,
                SUM(CASE WHEN upload + download > 0 THEN 1 ELSE 0 END) AS active_users
         FROM usage_days WHERE day >= ? AND day <= ? GROUP BY day`,
      first,
      today,
    ),
  );
  const draws = byDay(
    await db.all<DrawDay>(
      `SELECT day, COUNT(*) AS spend_num, SUM(cost) AS spend_bytes,
                SUM(CASE WHEN gain_traffic > 0 THEN 1 ELSE 0 END) AS reward_num, SUM(gain_traffic) AS reward_bytes
         FROM prize_draws WHERE day >= ? AND day <= ? GROUP BY day`,
      first,
      today,
    ),
  );
  const pays = byDay(await payDays(ctx, days, timeZone));
  const totals = await db.get<{ traffic: number | null; vips: number | null }>(
    `SELECT (SELECT SUM(traffic) FROM balances) AS traffic,
         (SELECT COUNT(*) FROM users WHERE vip_expire_time > ?) AS vips`,
    now,
  );
  return {
    stastic_list: days.map((day) =>
      dayRow(day, signUses.get(day), pays.get(day), usage.get(day), draws.get(day)),
    ),
    totalRemainingTraffic: twoDecimals((totals?.traffic ?? 0) / TB),
    activeVipCount: totals?.vips ?? 0,
  };
}

function dayRow(
  day: string,
  signUse: SignUseDay | undefined,
  pay: PayDay | undefined,
  usage: UsageDay | undefined,
  draw: DrawDay | undefined,
): StasticDay {
  return {
    day,
    signUseNum: signUse?.sign_use_num ?? 0,
    payNum: pay?.pay_num ?? 0,
    income: twoDecimals((pay?.income_fen ?? 0) / 100),
    normalUserNum: usage?.normal_users ?? 0,
    normalTraffic: g(usage?.normal_bytes ?? 0),
    normalAvg: average(usage?.normal_bytes ?? 0, usage?.normal_users ?? 0),
    dayUserNum: usage?.day_users ?? 0,
    dayTrafficUse: g(usage?.day_bytes ?? 0),
    dayAvg: average(usage?.day_bytes ?? 0, usage?.day_users ?? 0),
    lotterySpendNum: draw?.spend_num ?? 0,
    lotterySpendTraffic: g(draw?.spend_bytes ?? 0),
    lotteryRewardNum: draw?.reward_num ?? 0,
    lotteryRewardTraffic: g(draw?.reward_bytes ?? 0),
    activeUserNum: usage?.active_users ?? 0,
  };
}
