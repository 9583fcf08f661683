/** Coupons (seed 001 §3 Coupon, seed 000 §5/§8 order coupon rules). */
import { z } from "zod";
import { yuanInput } from "../../lib/money.ts";
import { GB } from "../../lib/traffic.ts";

export type CouponType = "freeUse" | "freeTime" | "cash" | "discount";
export const COUPON_TYPES = ["freeUse", "freeTime", "cash", "discount"] as const;
/** Trial coupons are redeemed for traffic or days; only cash and discount coupons apply to orders. */
export const TRIAL_COUPON_TYPES: readonly CouponType[] = ["freeUse", "freeTime"];

/** A coupon as the coupon manager sees it. Money in yuan, traffic in bytes, expireTime in ms (0 = never). */
export interface Coupon {
  _id: string;
  name: string;
  type: CouponType;
  code: string;
  taobao: boolean;
  traffic: number;
  traffixHaveLimitTime: boolean;
  traffixLimitTime: number;
  vipDay: number;
  forMoney: number;
  discount: number;
  /** 0 = no per-user limit. */
  useNumPerUser: number;
  /** 0 = no total limit. */
  NumberOfAuthorizations: number;
  authTimes: number;
  expireTime: number;
  createTime: number;
}

/** A row of the coupon usage records (seed 001 §2.13). */
export interface CouponUseRecord {
  _id: string;
  email: string;
  code: string;
  type: CouponType;
  add_traffic: number;
  add_day: number;
  add_money: number;
  discount: number;
  time: number;
  is_delete: boolean;
}

const couponId = z.string().regex(/^[0-9a-f]{24}$/, "id 格式错误");
const count = (max: number) => z.number().int().min(0).max(max);
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date written YYYY-MM-DD (2025-02-30 is refused). */
function isCalendarDay(text: string): boolean {
  const match = DAY_PATTERN.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * `/api/yunying/coupon/update_coupon` (seed 001 §3 Coupon): without `_id` it creates a coupon.
 * Traffic as `trafficG` (G, wins when given) or `traffic` (bytes); forMoney in yuan; expireTime a
 * day "YYYY-MM-DD" (the end of that day in the `timezone` setting), a time in ms as the list gives
 * it back, or ""/0 for never. An empty code gets a random one.
 */
export const couponInput = z
  .object({
    _id: couponId.optional().or(z.literal("").transform(() => undefined)),
    name: z.string().trim().max(100).default(""),
    type: z.enum(COUPON_TYPES, { message: "优惠券类型错误" }),
    code: z
      .string()
      .trim()
      .max(64)
      .regex(/^[0-9A-Za-z_-]*$/, "优惠券码只能包含字母、数字、- 和 _")
      .default(""),
    taobao: z.boolean().default(false),
    trafficG: z.number().min(0).max(1_000_000).optional(),
    traffic: count(2 ** 53 - 1).default(0),
    traffixHaveLimitTime: z.boolean().default(false),
    traffixLimitTime: count(1_000_000).default(0),
    vipDay: count(36_500).default(0),
    forMoney: yuanInput().default(0),
    discount: z.number().min(0.1, "折扣最小 0.1").max(1, "折扣最大 1").default(1),
    useNumPerUser: count(1_000_000).default(1),
    NumberOfAuthorizations: count(100_000_000).default(1),
    expireTime: z
      .union([
        z.literal(""),
        z.string().refine(isCalendarDay, "过期时间格式应为 YYYY-MM-DD"),
        count(2 ** 53 - 1),
      ])
      .default(""),
  })
  .transform(({ trafficG, traffic, ...rest }) => ({
    ...rest,
    traffic: trafficG === undefined ? traffic : Math.round(trafficG * GB),
  }))
  .superRefine((coupon, issues) => {
    const need = (ok: boolean, path: string, message: string) => {
      if (!ok) issues.addIssue({ code: "custom", path: [path], message });
    };
    if (coupon.type === "cash") need(coupon.forMoney > 0, "forMoney", "现金券金额必须大于 0");
    if (coupon.type === "freeUse") need(coupon.traffic > 0, "trafficG", "流量券的流量必须大于 0");
    if (coupon.type === "freeTime") need(coupon.vipDay > 0, "vipDay", "时长券的天数必须大于 0");
  });
/** Output of couponInput: forMoney in fen, traffic in bytes. */
export type CouponInput = z.output<typeof couponInput>;

export const couponIdsInput = z.object({ id_list: z.array(couponId).min(1).max(10_000) });
export const couponRecordsInput = z.object({ limit: z.number().int().min(1).max(100_000).default(100) });

export const CouponMsg = {
  codeTaken: "优惠券码已存在",
  notFound: "优惠券不存在",
} as const;
