/** Coupons (seed 001 §3 Coupon, seed 000 §5/§8 order coupon rules). */

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
