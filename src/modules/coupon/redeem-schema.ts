/** Redeeming a trial voucher (seed 000 §3, §5, §7, §8): shared by the server and the SPA's modal. */
import { z } from "zod";
import { GB } from "../../lib/traffic.ts";
import type { CouponType } from "./schema.ts";

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
