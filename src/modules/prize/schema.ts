/**
 * Lucky-draw prizes (seed 001 §2.15, §3 Prize, §5, §9; issue 14 §4). Shared by the server, the
 * SPA's prize manager and draw page, and `ferry prize list`.
 */
import { z } from "zod";
import { optionalId } from "../../lib/id-schema.ts";
import { GB } from "../../lib/traffic.ts";
import { FREE_ORDER } from "../coupon/schema.ts";
import { imageRef } from "../file/schema.ts";

/**
 * A prize as the back office edits it. gainTraffic in G (bytes in the table), gainVipTime in DAYS
 * of time package, discountValue 0–1 in steps of 0.1 (0.9 = 10 % off, 0 = 免单: the whole order),
 * discountDuration in days, photoUrl ""
 * or the download path of an upload.
 */
export interface Prize {
  _id: string;
  name: string;
  gainTraffic: number;
  gainVipTime: number;
  weight: number;
  desc: string;
  hasDiscountCoupon: boolean;
  discountValue: number;
  discountDuration: number;
  photoUrl: string;
  createTime: number;
}

/** A prize as a customer sees it on the board: everything but its weight (the odds stay private). */
export type BoardPrize = Omit<Prize, "weight" | "createTime">;

/**
 * Seed 001 §2.15 statistics of the whole table. The seed's "win rate" (Σ traffic × weight over
 * the total weight, as a percent) is what one draw gives on average, so it is `expectedTraffic`;
 * `winRate` is the chance that a draw gives anything (issue 26 D19, docs/decisions.md).
 */
export interface PrizeStats {
  totalWeight: number;
  /** Σ gainTraffic × weight, in G. */
  trafficWeightG: number;
  /** Bytes one draw gives on average: Σ gainTraffic × weight / Σ weight (0 for an empty table). */
  expectedTraffic: number;
  /** The share of the weight on prizes that give something, a percent with 2 decimals ("0.00%" when empty). */
  winRate: string;
}

/** `/api/yunying/prize/list`. */
export interface PrizeList {
  prizes: Prize[];
  stats: PrizeStats;
}

type PrizeGain = Pick<Prize, "gainTraffic" | "gainVipTime" | "hasDiscountCoupon">;

/** Whether drawing the prize gives the customer anything (traffic, days or a coupon). */
export const prizeGivesSomething = (prize: PrizeGain) =>
  prize.gainTraffic > 0 || prize.gainVipTime > 0 || prize.hasDiscountCoupon;

/** The statistics of seed 001 §2.15, computed once for the page, the list call and the CLI. */
export function prizeStats(prizes: readonly (PrizeGain & Pick<Prize, "weight">)[]): PrizeStats {
  const totalWeight = prizes.reduce((sum, prize) => sum + prize.weight, 0);
  const trafficWeightG = prizes.reduce((sum, prize) => sum + prize.gainTraffic * prize.weight, 0);
  const winningWeight = prizes.reduce(
    (sum, prize) => sum + (prizeGivesSomething(prize) ? prize.weight : 0),
    0,
  );
  const share = (part: number) => (totalWeight > 0 ? part / totalWeight : 0);
  return {
    totalWeight,
    trafficWeightG: Number(trafficWeightG.toFixed(2)),
    expectedTraffic: Math.round(share(trafficWeightG) * GB),
    winRate: `${(share(winningWeight) * 100).toFixed(2)}%`,
  };
}

/** What a prize gives, in words, for the notice, the bot and the CLI ("10G 流量、3 天时长"). */
export function prizeGainText(
  prize: Pick<Prize, "gainTraffic" | "gainVipTime" | "hasDiscountCoupon" | "discountValue">,
): string {
  const parts: string[] = [];
  if (prize.gainTraffic > 0) parts.push(`${prize.gainTraffic}G 流量`);
  if (prize.gainVipTime > 0) parts.push(`${prize.gainVipTime} 天时长`);
  if (prize.hasDiscountCoupon) parts.push(prizeCouponText(prize.discountValue));
  return parts.join("、");
}

/** A prize's discount in short: "8 折", or 免单 for a discount of 0 (the order costs nothing). */
export const prizeDiscountText = (discountValue: number): string =>
  discountValue === FREE_ORDER ? "免单" : `${Number((discountValue * 10).toFixed(1))} 折`;

/** The coupon a prize gives: "8 折优惠券", or 免单券. */
const prizeCouponText = (discountValue: number): string =>
  `${prizeDiscountText(discountValue)}${discountValue === FREE_ORDER ? "券" : "优惠券"}`;

/** `/api/prize/board`: the seats in board order, what one draw costs and what the customer may spend. */
export interface DrawBoard {
  seats: BoardPrize[];
  /** G of permanent traffic per draw (setting prizeBaseCost). */
  cost: number;
  /** Bytes of permanent traffic (traffic minus running trial traffic). */
  permanentTraffic: number;
}

/** `/api/prize/draw`. */
export interface DrawResult {
  drawId: string;
  prize: BoardPrize;
  /** The index in `seats` the board lands on (a seat holding the prize won). */
  seat: number;
  /** The discount coupon's code when the prize carries one, else "". */
  couponCode: string;
  /** Bytes of permanent traffic after the draw. */
  permanentTraffic: number;
}

/** A row of `/api/prize/my_draws`. */
export interface MyDraw {
  _id: string;
  prizeName: string;
  /** Bytes spent. */
  cost: number;
  /** Bytes won. */
  gainTraffic: number;
  gainVipTime: number;
  couponCode: string;
  /** The coupon's expiry (ms), 0 without a coupon. */
  couponExpireTime: number;
  createTime: number;
}

export const PrizeMsg = {
  saveFailed: "配置奖品失败",
  deleted: "删除成功",
  deleteFailed: "删除失败",
  notFound: "奖品不存在",
  noPrizes: "暂无可抽取的奖品，请稍后再来",
  notEnoughTraffic: "永久流量不足，无法抽奖",
  closed: "抽奖暂未开放",
  agencyRefused: "代理用户不能参与抽奖",
} as const;

/** 0, 0.1, 0.2, … 1 (seed 001 §5: 0 to 1, step 0.1), tolerant of float noise from a number input. */
const isTenth = (value: number) => Math.abs(value * 10 - Math.round(value * 10)) < 1e-9;

/** `/api/yunying/prize/update`: without `_id` it creates a prize. */
export const prizeInput = z
  .object({
    _id: optionalId,
    name: z.string().trim().min(1, "奖品名称不能为空").max(50, "奖品名称不要超过50字"),
    gainTraffic: z.number().min(0, "流量不能为负").max(1_000_000, "流量最多 1000000G"),
    gainVipTime: z.number().int("VIP天数须为整数").min(0, "VIP天数不能为负").max(3650, "VIP天数最多 3650"),
    weight: z.number().int("权重须为整数").min(0, "权重不能为负").max(1_000_000, "权重最大 1000000"),
    desc: z.string().trim().max(500, "描述不要超过500字").default(""),
    hasDiscountCoupon: z.boolean().default(false),
    discountValue: z.number().default(1),
    discountDuration: z.number().default(1),
    photoUrl: imageRef.default(""),
  })
  .superRefine((prize, issues) => {
    if (!prize.hasDiscountCoupon) return;
    const refuse = (path: string, message: string) =>
      issues.addIssue({ code: "custom", path: [path], message });
    const discount = prize.discountValue;
    if (discount < 0 || discount > 1 || !isTenth(discount))
      refuse("discountValue", "折扣须在 0 到 1 之间，以 0.1 为单位（0 为免单）");
    const days = prize.discountDuration;
    if (!Number.isInteger(days) || days < 1 || days > 3650)
      refuse("discountDuration", "优惠券有效天数须为 1 到 3650 的整数");
  })
  // Without a coupon its two fields mean nothing; they are stored as the neutral 1 and 1.
  .transform((prize) =>
    prize.hasDiscountCoupon ? prize : { ...prize, discountValue: 1, discountDuration: 1 },
  );
/** photoUrl as the bare upload file name ("" for none). */
export type PrizeInput = z.output<typeof prizeInput>;

/** Seed 001 §9: a new prize is 一等奖, 10 G, 0 days, weight 1, without a discount coupon. */
export const NEW_PRIZE_DEFAULTS = {
  name: "一等奖",
  gainTraffic: 10,
  gainVipTime: 0,
  weight: 1,
  desc: "",
  hasDiscountCoupon: false,
  /** Preset for when the coupon is switched on. */
  discountValue: 0.9,
  discountDuration: 7,
  photoUrl: "",
} as const;

/** How many recent draws `/api/prize/my_draws` answers. */
export const MY_DRAWS_LIMIT = 20;
