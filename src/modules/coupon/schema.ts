/** Coupons (seed 001 §3 Coupon, seed 000 §5/§8 order coupon rules). */
import { z } from "zod";
import { optionalId, recordId } from "../../lib/id-schema.ts";
import { formatYuan, yuanInput, yuanToFen } from "../../lib/money.ts";
import { formatGB, GB } from "../../lib/traffic.ts";

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
  /** The customer a lucky-draw coupon was given to (only they can use it); "" = anyone with the code. */
  ownerEmail: string;
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
 * The discount rate that takes the whole price off (免单). Seed 001 gives discount coupons 0.1 to 1
 * and lucky-draw prizes 0 to 1; a prize's coupon is a coupon of this model, so 0 is allowed too.
 */
export const FREE_ORDER = 0;

/** A discount rate as the pages and the CLI show it: 0.85 is 八五折 (8.5折); 1 takes nothing off; 0 all. */
export function discountText(rate: number): string {
  if (rate === FREE_ORDER) return "免单";
  return rate >= 1 ? "不打折" : `${Number((rate * 10).toFixed(2))}折`;
}

/** The fields of a coupon the manager edits, before traffic is settled to bytes and checked. */
const couponFields = z.object({
  _id: optionalId,
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
  discount: z
    .number()
    .max(1, "折扣最大 1")
    .refine((rate) => rate === FREE_ORDER || rate >= 0.1, "折扣最小 0.1（0 为免单）")
    .default(1),
  useNumPerUser: count(1_000_000).default(1),
  NumberOfAuthorizations: count(100_000_000).default(1),
  expireTime: z
    .union([
      z.literal(""),
      z.string().refine(isCalendarDay, "过期时间格式应为 YYYY-MM-DD"),
      count(2 ** 53 - 1),
    ])
    .default(""),
});

/** trafficG (G) wins over traffic (bytes); a coupon must give something of its type. */
function settleCoupon<T extends { trafficG?: number; traffic: number }>({ trafficG, traffic, ...rest }: T) {
  return { ...rest, traffic: trafficG === undefined ? traffic : Math.round(trafficG * GB) };
}

function checkEffect(
  coupon: { type: CouponType; forMoney: number; traffic: number; vipDay: number },
  issues: z.RefinementCtx,
) {
  const need = (ok: boolean, path: string, message: string) => {
    if (!ok) issues.addIssue({ code: "custom", path: [path], message });
  };
  if (coupon.type === "cash") need(coupon.forMoney > 0, "forMoney", "现金券金额必须大于 0");
  if (coupon.type === "freeUse") need(coupon.traffic > 0, "trafficG", "流量券的流量必须大于 0");
  if (coupon.type === "freeTime") need(coupon.vipDay > 0, "vipDay", "时长券的天数必须大于 0");
}

/**
 * `/api/yunying/coupon/update_coupon` (seed 001 §3 Coupon): without `_id` it creates a coupon.
 * Traffic as `trafficG` (G, wins when given) or `traffic` (bytes); forMoney in yuan; expireTime a
 * day "YYYY-MM-DD" (the end of that day in the `timezone` setting), a time in ms as the list gives
 * it back, or ""/0 for never. An empty code gets a random one.
 */
export const couponInput = couponFields.transform(settleCoupon).superRefine(checkEffect);
/** Output of couponInput: forMoney in fen, traffic in bytes. */
export type CouponInput = z.output<typeof couponInput>;

/**
 * `/api/yunying/coupon/batch_create` (seed 001 §4 Taobao creation): `count` coupons of the same
 * fields, each with its own random code; Taobao unless `taobao: false`.
 */
export const couponBatchInput = couponFields
  .omit({ _id: true, code: true })
  .extend({
    count: z.number().int("数量必须是整数").min(1, "数量至少为 1").max(1000, "数量最多为 1000"),
    taobao: z.boolean().default(true),
  })
  .transform(settleCoupon)
  .superRefine(checkEffect);
export type CouponBatchInput = z.output<typeof couponBatchInput>;

export const couponIdsInput = z.object({ id_list: z.array(recordId()).min(1).max(10_000) });
export const couponRecordsInput = z.object({ limit: z.number().int().min(1).max(100_000).default(100) });

export const CouponMsg = {
  codeTaken: "优惠券码已存在",
  notFound: "优惠券不存在",
  // The manager's toasts (seed 001 §8): failures get ":{server message}" appended. A save's
  // success is the back office's 添加成功 / 更新成功 (issue 26 D14).
  saveFailed: "配置优惠券失败",
  deleted: "删除优惠券成功",
  deleteFailed: "删除优惠券失败",
  deletedAll: "删除所有优惠券成功",
  deleteAllFailed: "删除所有优惠券失败",
  confirmDeleteAll: "确认删除所有当前所选优惠券?",
  confirmDeleteAllTitle: "危险，请谨慎操作",
} as const;

export const COUPON_TYPE_TEXT: Record<CouponType, string> = {
  freeUse: "流量券",
  freeTime: "时长券",
  cash: "现金券",
  discount: "折扣券",
};

/** A new coupon in the manager's form (seed 001 §9); its type is the one the list is filtered to. */
export const NEW_COUPON_DEFAULTS = { useNumPerUser: 1, vipDay: 7, trafficG: 8 } as const;

/** What a coupon gives, or what one use of it gave: traffic in bytes, days, yuan, discount rate. */
export interface CouponEffect {
  type: CouponType;
  traffic: number;
  days: number;
  money: number;
  discount: number;
}

/** The effect as the manager and the records show it (seed 001 §2.13): G and yuan with 2 decimals. */
export function couponEffectText({ type, traffic, days, money, discount }: CouponEffect): string {
  if (type === "freeUse") return `${formatGB(traffic)} G`;
  if (type === "freeTime") return `${days} 天`;
  if (type === "cash") return `${formatYuan(yuanToFen(money))} 元`;
  return discountText(discount);
}

export const couponEffect = (coupon: Coupon): CouponEffect => ({
  type: coupon.type,
  traffic: coupon.traffic,
  days: coupon.vipDay,
  money: coupon.forMoney,
  discount: coupon.discount,
});

export const couponUseEffect = (use: CouponUseRecord): CouponEffect => ({
  type: use.type,
  traffic: use.add_traffic,
  days: use.add_day,
  money: use.add_money,
  discount: use.discount,
});

// ---- redeeming a trial voucher (seed 000 §3, §5, §7, §8): the server and the SPA's modal ----

export const REDEEM_COUPON_CALL = "/api/coupon/redeem_coupon";

/** `/api/coupon/redeem_coupon`: the activation code, trimmed. */
export const redeemCouponInput = z.object({
  code: z.string().trim().min(1, "请输入激活码").max(64, "体验券不存在"),
});

/** What a redemption gave (seed 000 §3): traffic in bytes, days of time package, the coupon's type. */
export interface RedeemResult {
  name: string;
  traffic: number;
  day: number;
  type: CouponType;
}

export const RedeemMsg = {
  notFound: "体验券不存在",
  expired: "体验券过期",
  wrongType: "该券是现金券或折扣券，请在购买套餐时使用",
  alreadyRedeemed: "该体验券已经兑换过",
  exhausted: "抱歉，该体验券已抢兑完毕",
  tooManyTries: "请不要在此处作过多尝试",
  // The modal's own texts (seed 000 §5, §8).
  empty: "请输入激活码",
  usedOnThisDevice: "请勿重复使用",
  failedToast: "兑换激活码失败",
} as const;

/** The success toast (seed 000 §8): name, traffic in whole GB, days added, and a prompt to subscribe. */
export function redeemSuccessText(result: RedeemResult): string {
  const name = result.name || "体验券";
  const gains = [
    result.traffic > 0 ? `${Math.floor(result.traffic / GB)} GB 流量` : "",
    result.day > 0 ? `${result.day} 天时长套餐` : "",
  ].filter(Boolean);
  return `兑换成功：${name}，获得 ${gains.join("、")}，快去导入订阅开始使用吧`;
}
