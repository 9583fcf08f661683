/** Daily check-in (seed 000 §2 dashboard, §3, §5, §7, §8, §9): what server, SPA and bot agree on. */
import { MB } from "../../lib/traffic.ts";

export const SIGN_USE_CALL = "/api/user/sign_use";
export const SIGN_USE_INFO_CALL = "/api/user/sign_use_info";

/** `/api/user/sign_use_info`: the rewards (settings, in MB) and where the customer's run stands. */
export interface SignUseInfo {
  /** Consecutive days that earn the bonus (setting continueSignUseDay). */
  continueSignUseDay: number;
  /** MB of permanent traffic per check-in (setting signUseRewardTraffic). */
  signUseRewardTraffic: number;
  /** MB added when a run reaches continueSignUseDay days (setting continueSignReward). */
  continueSignReward: number;
  /** Days in the customer's current run (today's check-in included); 0 when no run is alive. */
  continueDays: number;
  /** The business day (YYYY-MM-DD, setting timezone): what the browser's check-in cookie is compared with. */
  today: string;
}

/** `/api/user/sign_use`: what this check-in added. */
export interface SignUseResult {
  /** Bytes of permanent traffic added in all: the daily reward plus the bonus when it was paid. */
  addTraffic: number;
  /** A run is still going after this check-in (false once the bonus closed it). */
  haveContinueSignUseData: boolean;
  /** This check-in completed a run of continueSignUseDay days and paid the bonus. */
  extraReward: boolean;
  /** Bytes of the bonus within addTraffic; 0 without it. */
  extraTraffic: number;
  /** Days of the run this check-in completes (1 = a new run). */
  continueDays: number;
  /** The business day checked in (YYYY-MM-DD): the SPA stores it in its check-in cookie. */
  day: string;
}

/**
 * Seed 000 §8 gives these as English glosses ("paid users can claim the daily benefit", "already
 * checked in with another account", "check in failed"); these are Chinese saying the same.
 */
export const SignUseMsg = {
  /** Unpaid account (2 s). */
  notPaid: "付费用户才能领取每日福利",
  /** The account already checked in this business day. */
  already: "今天已经签到过了",
  /** This browser's cookie shows another account checked in today (5 s, refused in the browser). */
  otherAccount: "今天已经使用其他账号签到过了",
  /** Any other non-zero answer (2 s). */
  failed: "签到失败",
  /** Visitor: asked to log in first. */
  loginRequired: "请登录后再签到",
} as const;

const mb = (bytes: number) => Math.round(bytes / MB);

/** The success text of the SPA's toast and the bot's answer: MB added, streak days, the bonus. */
export function signUseSuccessText(result: SignUseResult): string {
  const streak = `已连续签到 ${result.continueDays} 天`;
  if (!result.extraReward) return `签到成功，获得 ${mb(result.addTraffic)} MB 流量，${streak}`;
  return `签到成功，获得 ${mb(result.addTraffic)} MB 流量（含连续签到 ${result.continueDays} 天奖励 ${mb(result.extraTraffic)} MB），${streak}，明天起重新计算`;
}
