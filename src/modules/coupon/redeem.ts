/**
 * Redeeming a trial voucher (seed 000 §5 trial coupon, §7 redeem_coupon, §8; issue 14 §2): a
 * freeUse coupon adds traffic — with `traffixHaveLimitTime`, trial traffic that expires after
 * `traffixLimitTime` hours (trial/service.ts) —, a freeTime coupon adds days of time package. The
 * checks, the usage record, the coupon's count and the credit are one transaction, so a coupon
 * with N uses left is used N times however many customers redeem it at once.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { HOUR_MS } from "../../lib/time.ts";
import { extendedTimePackage } from "../../payments/credit.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { changeTraffic } from "../ledger/service.ts";
import { COUPON_IP_FAILURES } from "../order/service.ts";
import { addTrialGrant } from "../trial/service.ts";
import { RedeemMsg, type RedeemResult, TRIAL_COUPON_TYPES } from "./schema.ts";
import {
  activeUsesByUser,
  type CouponRow,
  findCouponByCode,
  isExpired,
  recordCouponUse,
  usableBy,
} from "./service.ts";

/** Redemption tries per account; refused tries per address share the order coupon's budget. */
const REDEEM_TRIES = { name: "redeem-coupon", max: 10, windowMs: 60_000 };

/**
 * Redeems a trial voucher for a user. Tries are limited per account, and refused ones per client
 * address together with order-coupon tries, so guessing codes is slow from any number of accounts.
 */
export async function redeemCoupon(
  ctx: AppContext,
  userId: string,
  code: string,
  ip: string,
  now = Date.now(),
): Promise<RedeemResult> {
  if (!(await ctx.limiter.hit(REDEEM_TRIES, userId)))
    throw new RpcError(Code.couponTooManyTries, RedeemMsg.tooManyTries);
  // Taken outside the redemption's transaction, so that a refused try (it throws) still counts.
  const reservation = await ctx.limiter.reserve([{ rule: COUPON_IP_FAILURES, key: ip }]);
  if (!reservation) throw new RpcError(Code.couponTooManyTries, RedeemMsg.tooManyTries);
  const result = await tx(ctx.db, async () => {
    const coupon = await checkTrialCoupon(ctx, await findCouponByCode(ctx.db, code), userId, now);
    return await credit(ctx, coupon, userId, now);
  });
  await reservation.release(); // only refused tries count against the address
  return result;
}

/** The seed's checks, in its order: unknown 1016, expired 1029, not a trial coupon 1020, used up 1017 / 1027. */
async function checkTrialCoupon(
  ctx: AppContext,
  coupon: CouponRow | null,
  userId: string,
  now: number,
): Promise<CouponRow> {
  if (!coupon || !usableBy(coupon, userId)) throw new RpcError(Code.couponNotFound, RedeemMsg.notFound);
  if (isExpired(coupon, now)) throw new RpcError(Code.couponExpired, RedeemMsg.expired);
  if (!TRIAL_COUPON_TYPES.includes(coupon.type))
    throw new RpcError(Code.couponWrongType, RedeemMsg.wrongType);
  const perUser = coupon.use_num_per_user;
  if (perUser > 0 && (await activeUsesByUser(ctx.db, coupon.id, userId)) >= perUser)
    throw new RpcError(Code.couponUsedUp, RedeemMsg.alreadyRedeemed);
  const total = coupon.number_of_authorizations;
  if (total > 0 && coupon.auth_times >= total) throw new RpcError(Code.couponExhausted, RedeemMsg.exhausted);
  return coupon;
}

/** Records the use and credits it, with its traffic record; inside redeemCoupon's transaction. */
async function credit(
  ctx: AppContext,
  coupon: CouponRow,
  userId: string,
  now: number,
): Promise<RedeemResult> {
  const db = ctx.db;
  const timeZone = await ctx.settings.get("timezone");
  const desc = `兑换体验券 ${coupon.name || coupon.code}`;
  if (coupon.type === "freeTime") {
    const user = await db.get<{ vip_expire_time: number; daily_limit: number | null }>(
      "SELECT vip_expire_time, daily_limit FROM users WHERE id = ?",
      userId,
    );
    if (!user) throw new Error(`no user ${userId}`);
    await recordCouponUse(db, { coupon, userId, addDay: coupon.vip_day, now });
    const extension = extendedTimePackage(user, coupon.vip_day, null, now);
    await changeTraffic(db, { userId, type: "coupon", desc, ...extension, now, timeZone });
    return { name: coupon.name, traffic: 0, day: coupon.vip_day, type: coupon.type };
  }
  const useId = await recordCouponUse(db, { coupon, userId, addTraffic: coupon.traffic, now });
  await changeTraffic(db, { userId, type: "coupon", desc, traffic: coupon.traffic, now, timeZone });
  // A time limit of 0 hours is no limit: the traffic would be gone the moment it arrived.
  if (coupon.traffic_has_limit_time === 1 && coupon.traffic_limit_hours > 0 && coupon.traffic > 0) {
    await addTrialGrant(db, {
      userId,
      couponUseId: useId,
      amount: coupon.traffic,
      expireTime: now + coupon.traffic_limit_hours * HOUR_MS,
      now,
    });
  }
  return { name: coupon.name, traffic: coupon.traffic, day: 0, type: coupon.type };
}
