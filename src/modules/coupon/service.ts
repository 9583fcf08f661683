/**
 * The coupon model, built once: lookup, the order-coupon checks with the seed's codes, the
 * discount a coupon gives, and usage records that count against the limits until restored.
 * Callers run these inside their own transaction.
 */
import type { Db } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { OrderMsg } from "../order/schema.ts";
import { type CouponType, TRIAL_COUPON_TYPES } from "./schema.ts";

export interface CouponRow {
  id: string;
  name: string;
  type: CouponType;
  code: string;
  taobao: number;
  traffic: number;
  traffic_has_limit_time: number;
  traffic_limit_hours: number;
  vip_day: number;
  for_money_fen: number;
  discount: number;
  use_num_per_user: number;
  number_of_authorizations: number;
  auth_times: number;
  expire_time: number;
  create_time: number;
}

export function findCouponByCode(db: Db, code: string): CouponRow | null {
  return db.query<CouponRow, [string]>("SELECT * FROM coupons WHERE code = ?").get(code.trim());
}

export function findCouponById(db: Db, id: string): CouponRow | null {
  return db.query<CouponRow, [string]>("SELECT * FROM coupons WHERE id = ?").get(id);
}

/** Uses of a coupon by a user that still count (not restored). */
export function activeUsesByUser(db: Db, couponId: string, userId: string): number {
  return (
    db
      .query<{ n: number }, [string, string]>(
        "SELECT COUNT(*) AS n FROM coupon_uses WHERE coupon_id = ? AND user_id = ? AND is_delete = 0",
      )
      .get(couponId, userId)?.n ?? 0
  );
}

export const isExpired = (coupon: CouponRow, now: number) =>
  coupon.expire_time > 0 && now > coupon.expire_time;

/**
 * The checks for putting a coupon on an order (seed 000 §8): unknown 1016 (shown as 优惠券错误),
 * expired 1029, a trial coupon 1022, this user's or all uses spent 1017. `alreadyHeld` counts a use
 * the caller already holds (re-checking an order's own coupon at payment time).
 */
export function checkOrderCoupon(
  db: Db,
  coupon: CouponRow | null,
  userId: string,
  now: number,
  alreadyHeld = 0,
): CouponRow {
  if (!coupon) throw new RpcError(Code.couponNotFound, OrderMsg.couponError);
  if (isExpired(coupon, now)) throw new RpcError(Code.couponExpired, OrderMsg.couponExpired);
  if (TRIAL_COUPON_TYPES.includes(coupon.type))
    throw new RpcError(Code.couponTrialNotAllowed, OrderMsg.couponTrial);
  const total = coupon.number_of_authorizations;
  if (total > 0 && coupon.auth_times - alreadyHeld >= total)
    throw new RpcError(Code.couponUsedUp, OrderMsg.couponUsedUp);
  const perUser = coupon.use_num_per_user;
  if (perUser > 0 && activeUsesByUser(db, coupon.id, userId) - alreadyHeld >= perUser)
    throw new RpcError(Code.couponUsedUp, OrderMsg.couponUsedUp);
  return coupon;
}

/** Fen taken off a price: a cash coupon up to the price, a discount coupon (0.9 = 10% off) rounded to the fen. */
export function couponDiscountFen(coupon: CouponRow, priceFen: number): number {
  if (coupon.type === "cash") return Math.min(coupon.for_money_fen, priceFen);
  if (coupon.type === "discount")
    return priceFen - Math.round(priceFen * Math.min(1, Math.max(0, coupon.discount)));
  return 0;
}

export interface CouponUse {
  coupon: CouponRow;
  userId: string;
  orderId?: string | null;
  addTraffic?: number;
  addDay?: number;
  addMoneyFen?: number;
  now: number;
}

/** Records a use and counts it against the coupon's total. Returns the usage record id. */
export function recordCouponUse(db: Db, use: CouponUse): string {
  const id = newId(use.now);
  db.query(
    `INSERT INTO coupon_uses (id, coupon_id, user_id, order_id, code, type, add_traffic, add_day, add_money_fen, discount, time)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    use.coupon.id,
    use.userId,
    use.orderId ?? null,
    use.coupon.code,
    use.coupon.type,
    use.addTraffic ?? 0,
    use.addDay ?? 0,
    use.addMoneyFen ?? 0,
    use.coupon.type === "discount" ? use.coupon.discount : 1,
    use.now,
  );
  db.query("UPDATE coupons SET auth_times = auth_times + 1 WHERE id = ?").run(use.coupon.id);
  return id;
}

/** Marks a use restored (is_delete) and gives the use back to the coupon. Restoring twice does nothing. */
export function restoreCouponUse(db: Db, useId: string, now: number): void {
  const use = db
    .query<{ coupon_id: string }, [number, string]>(
      "UPDATE coupon_uses SET is_delete = 1, restore_time = ? WHERE id = ? AND is_delete = 0 RETURNING coupon_id",
    )
    .get(now, useId);
  if (!use) return;
  db.query("UPDATE coupons SET auth_times = MAX(auth_times - 1, 0) WHERE id = ?").run(use.coupon_id);
}
