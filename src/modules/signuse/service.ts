/**
 * Daily check-in (issue 14 §1; seed 000 §3, §5, §9). One sign_uses row per account and business day
 * (the primary key makes a second one impossible, whatever the concurrency); its reward is credited
 * in the same transaction through the traffic ledger, type `sign_use`.
 */
import type { AppContext } from "../../context.ts";
import { type Db, tx } from "../../db/db.ts";
import { addDays, businessDay } from "../../lib/time.ts";
import { MB } from "../../lib/traffic.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { changeTraffic } from "../ledger/service.ts";
import { type SignUseInfo, SignUseMsg, type SignUseResult, signUseSuccessText } from "./schema.ts";

interface SignUseRow {
  day: string;
  streak: number;
  extra_reward: number;
}

/** The account's check-in of today or else of yesterday (one primary-key range read), or null. */
async function latestRecent(db: Db, userId: string, today: string): Promise<SignUseRow | null> {
  return await db.get<SignUseRow>(
    `SELECT day, streak, extra_reward FROM sign_uses
       WHERE user_id = ? AND day >= ? AND day <= ? ORDER BY day DESC LIMIT 1`,
    userId,
    addDays(today, -1),
    today,
  );
}

/** A run is alive while its latest check-in is today's or yesterday's and did not pay the bonus. */
const continues = (row: SignUseRow | null): boolean => row !== null && row.extra_reward === 0;

/**
 * The two check-in flags of userinfo. haveContinueSignUseData: a run is going that today's
 * check-in continues (or already continued); false after the bonus day, which ends its run.
 */
export async function signUseFlags(
  ctx: AppContext,
  userId: string,
  now: number,
): Promise<{ signUseToday: boolean; haveContinueSignUseData: boolean }> {
  const today = businessDay(now, await ctx.settings.get("timezone"));
  // userinfo asks on every call: cached until the database changes (ReadCache).
  const latest = await ctx.cache.signUses.get(
    `${userId}\u0000${today}`,
    async () => await latestRecent(ctx.db, userId, today),
  );
  return { signUseToday: latest?.day === today, haveContinueSignUseData: continues(latest) };
}

async function requirePaid(db: Db, userId: string) {
  const user = await db.get<{ paid_user: number }>("SELECT paid_user FROM users WHERE id = ?", userId);
  if (user?.paid_user !== 1) throw new RpcError(Code.forbidden, SignUseMsg.notPaid);
}

/**
 * `/api/user/sign_use_info`: the rewards in MB and the run so far (today's check-in included). Any
 * account may read it (seed 000 limits only the check-in itself to paid accounts), so the dashboard
 * can show an unpaid customer what checking in would give.
 */
export async function signUseInfo(ctx: AppContext, userId: string, now: number): Promise<SignUseInfo> {
  const settings = await ctx.settings.all();
  const today = businessDay(now, settings.timezone);
  const latest = await latestRecent(ctx.db, userId, today);
  return {
    continueSignUseDay: settings.continueSignUseDay,
    signUseRewardTraffic: settings.signUseRewardTraffic,
    continueSignReward: settings.continueSignReward,
    continueDays: latest && (continues(latest) || latest.day === today) ? latest.streak : 0,
    today,
  };
}

/**
 * Checks a paid account in for the business day of `now`: signUseRewardTraffic MB, and on the
 * continueSignUseDay-th consecutive day continueSignReward MB more (its own ledger record) after
 * which the next day starts a new run. Refused, changing nothing, for an unpaid account or a
 * second check-in the same day.
 */
export async function signUse(ctx: AppContext, userId: string, now: number): Promise<SignUseResult> {
  const settings = await ctx.settings.all();
  const timeZone = settings.timezone;
  const day = businessDay(now, timeZone);
  return tx(ctx.db, async () => {
    const db = ctx.db;
    await requirePaid(db, userId);
    const yesterday = await db.get<SignUseRow>(
      "SELECT day, streak, extra_reward FROM sign_uses WHERE user_id = ? AND day = ?",
      userId,
      addDays(day, -1),
    );
    const streak = continues(yesterday) ? (yesterday as SignUseRow).streak + 1 : 1;
    // >= rather than ===: a run already past a lowered setting ends with the bonus too.
    const extraReward = streak >= settings.continueSignUseDay;
    const dailyTraffic = settings.signUseRewardTraffic * MB;
    const extraTraffic = extraReward ? settings.continueSignReward * MB : 0;
    const inserted = await db.run(
      `INSERT INTO sign_uses (user_id, day, streak, add_traffic, extra_reward, create_time)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, day) DO NOTHING`,
      userId,
      day,
      streak,
      dailyTraffic + extraTraffic,
      extraReward ? 1 : 0,
      now,
    );
    if (inserted.changes === 0) throw new RpcError(Code.tooManyRequests, SignUseMsg.already);
    const credit = async (traffic: number, desc: string) => {
      if (traffic > 0) await changeTraffic(db, { userId, type: "sign_use", desc, traffic, now, timeZone });
    };
    await credit(dailyTraffic, "每日签到");
    await credit(extraTraffic, `连续签到 ${streak} 天奖励`);
    return {
      addTraffic: dailyTraffic + extraTraffic,
      haveContinueSignUseData: !extraReward,
      extraReward,
      extraTraffic,
      continueDays: streak,
      day,
    };
  });
}

/** The bot's /checkin: the same check-in, its outcome as text (the refusals' messages as they are). */
export async function signUseReply(ctx: AppContext, userId: string, now: number): Promise<string> {
  try {
    return signUseSuccessText(await signUse(ctx, userId, now));
  } catch (error) {
    if (error instanceof RpcError) return error.message;
    throw error;
  }
}
