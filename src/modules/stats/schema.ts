/**
 * Basic statistics (seed 001 §2.10, §3 Statistics day row, §7 basic_stastic, §9): shared by the
 * server, the SPA's statistics page and `ferry stats`. Traffic in G and money in yuan, 2 decimals.
 */
import { z } from "zod";

export const BASIC_STASTIC_CALL = "/api/admin/users/basic_stastic";
/** Seed 001 §9: statistics default to 7 days; the charts go up to 90. */
export const STATS_DEFAULT_DAYS = 7;
export const STATS_MAX_DAYS = 90;
/** The chart ranges of the statistics page. */
export const STATS_RANGES = [7, 30, 90] as const;

export const basicStasticInput = z.object({
  num: z.number().int().min(1).max(STATS_MAX_DAYS).default(STATS_DEFAULT_DAYS),
});

/** One business day (setting `timezone`) of the statistics. */
export interface StasticDay {
  /** YYYY-MM-DD in the business timezone. */
  day: string;
  /** Check-ins that day. */
  signUseNum: number;
  /** Orders paid that day (by pay time). */
  payNum: number;
  /** Yuan those orders brought: order money less the coupon discount (wallet money included). */
  income: number;
  /** Users charged permanent traffic that day, the G charged, and G per user. */
  normalUserNum: number;
  normalTraffic: number;
  normalAvg: number;
  /** Users charged time-package quota that day, the G charged, and G per user. */
  dayUserNum: number;
  dayTrafficUse: number;
  dayAvg: number;
  /** Lucky draws that day and the G they cost. */
  lotterySpendNum: number;
  lotterySpendTraffic: number;
  /** Draws that paid traffic, and the G paid. */
  lotteryRewardNum: number;
  lotteryRewardTraffic: number;
  /** Users who moved any traffic through a node that day (the page's active-user chart). */
  activeUserNum: number;
}

export interface BasicStastic {
  /** One row per business day, newest first, `num` rows (days without activity are zeros). */
  stastic_list: StasticDay[];
  /** Σ users' permanent traffic left, in T. */
  totalRemainingTraffic: number;
  /** Users whose time package runs now. */
  activeVipCount: number;
}

/** Rounds a figure for the wire: 2 decimals. */
export const twoDecimals = (value: number) => Math.round(value * 100) / 100;
