/**
 * Orders (seed 000 §4/§5): create from a combo, put on or take off one coupon, the wallet
 * deduction, cancel, feedback, and the lists. Every change runs in one transaction with its
 * ledger rows; paying is in src/payments (markPaid → creditOrder).
 */
import type { AppContext } from "../../context.ts";
import { type Db, tx } from "../../db/db.ts";
import { fenToYuan } from "../../lib/money.ts";
import { DAY_MS } from "../../lib/time.ts";
import { availablePayModes } from "../../payments/registry.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import { comboCredit } from "../combo/schema.ts";
import { type ComboRow, findComboForUser, toCombo } from "../combo/service.ts";
import {
  checkOrderCoupon,
  couponDiscountFen,
  findCouponByCode,
  recordCouponUse,
  restoreCouponUse,
} from "../coupon/service.ts";
import { changeWallet } from "../ledger/service.ts";
import type { UserRow } from "../user/row.ts";
import {
  type Order,
  type OrderDetail,
  OrderMsg,
  type OrderStatus,
  type Trade,
  type TradeStatus,
} from "./schema.ts";

export interface OrderRow {
  id: string;
  user_id: string;
  combo_id: string;
  desc: string;
  order_money_fen: number;
  coupon_use_id: string | null;
  coupon_code: string;
  coupon_name: string;
  coupon_type: string;
  coupon_discount_fen: number;
  wallet_spend_fen: number;
  status: OrderStatus;
  add_traffic: number;
  add_vip_duration: number;
  /** Days the credited traffic stays usable; 0 = permanent (the combo's duration when ordered). */
  traffic_days: number;
  daily_limit: number | null;
  gain_permissions: string;
  permission_duration: number;
  from_channel: string;
  reward_fen: number;
  pay_mode: string;
  device: string;
  user_feedback: string;
  paid_by: string;
  create_time: number;
  pay_time: number | null;
  cancel_time: number | null;
}

/** What is left to pay online after the coupon and the wallet. */
export const payableFen = (order: OrderRow) =>
  order.order_money_fen - order.coupon_discount_fen - order.wallet_spend_fen;

export const isOpen = (order: OrderRow) => order.status === "topay" || order.status === "wallet_spend";

export function toOrder(row: OrderRow): Order {
  return {
    _id: row.id,
    combo_id: row.combo_id,
    desc: row.desc,
    order_money: fenToYuan(row.order_money_fen),
    coupon_discount: fenToYuan(row.coupon_discount_fen),
    coupon_code: row.coupon_code,
    coupon_name: row.coupon_name,
    couponType: row.coupon_type,
    wallet_spend: fenToYuan(row.wallet_spend_fen),
    pay_money: fenToYuan(payableFen(row)),
    status: row.status,
    create_time: row.create_time,
    pay_time: row.pay_time,
    add_traffic: row.add_traffic,
    add_vip_duration: row.add_vip_duration,
    gainPermission: JSON.parse(row.gain_permissions) as string[],
    permissionDuration: row.permission_duration,
    user_feedback: row.user_feedback,
    pay_mode: row.pay_mode,
  };
}

export function findOrder(db: Db, orderId: string): OrderRow | null {
  return db.query<OrderRow, [string]>("SELECT * FROM orders WHERE id = ?").get(orderId);
}

/** The user's own order, or 1004 (someone else's order looks exactly like a missing one). */
export function ownOrder(db: Db, userId: string, orderId: string): OrderRow {
  const order = findOrder(db, orderId);
  if (!order || order.user_id !== userId) throw new RpcError(Code.notFound, OrderMsg.notFound);
  return order;
}

/**
 * Seed 000 §5 wallet deduction. Balance covering the payable: take the payable. Short by less
 * than 1 yuan: take payable − 1 yuan, so at least 1 yuan is paid online (gateways' minimum).
 * Otherwise take the whole balance. Never negative.
 */
export function walletDeductionFen(balanceFen: number, payable: number): number {
  if (balanceFen <= 0 || payable <= 0) return 0;
  if (balanceFen >= payable) return payable;
  if (payable - balanceFen < 100) return Math.max(0, payable - 100);
  return balanceFen;
}

/** An order left unpaid this long is cancelled by the sweeper (sweeper.ts): coupon and wallet part return. */
export const UNPAID_ORDER_MS = DAY_MS;
/** create_order hands back an open order only while it has at least this long left to be paid. */
const REUSE_MARGIN_MS = 60 * 60_000;
/** New orders an account may make an hour (issue 26); handing back its open order makes none. */
export const ORDERS_PER_HOUR: RateRule = { name: "orders-made", max: 30, windowMs: 60 * 60_000 };

/** What an order made from the combo now holds: its price and what paying it credits (DESIGN §7). */
type OrderTerms = Pick<
  OrderRow,
  | "combo_id"
  | "desc"
  | "order_money_fen"
  | "add_traffic"
  | "add_vip_duration"
  | "daily_limit"
  | "gain_permissions"
  | "permission_duration"
  | "from_channel"
  | "traffic_days"
>;

function orderTerms(combo: ComboRow, channelCode: string): OrderTerms {
  const credit = comboCredit(toCombo(combo));
  return {
    combo_id: combo.id,
    desc: combo.name,
    order_money_fen: combo.price_fen,
    add_traffic: credit.traffic,
    add_vip_duration: combo.vip_duration,
    daily_limit: credit.dailyLimit,
    gain_permissions: combo.permissions_gain,
    permission_duration: combo.permission_duration,
    from_channel: channelCode,
    traffic_days: combo.duration,
  };
}

/**
 * The customer's open order for these terms, if one can stand for a new one (docs/decisions.md,
 * issue 26): untouched (no coupon on it, no wallet part taken), made on exactly today's terms (the
 * combo's price, credit, name and the customer's channel), and far enough from the sweeper's cut.
 */
function reusableOrder(db: Db, userId: string, terms: OrderTerms, now: number): OrderRow | null {
  const untouched = db
    .query<OrderRow, [string, string, number]>(
      `SELECT * FROM orders WHERE user_id = ? AND combo_id = ? AND status = 'topay' AND coupon_use_id IS NULL
         AND create_time > ? ORDER BY create_time DESC, id DESC LIMIT 20`,
    )
    .all(userId, terms.combo_id, now - (UNPAID_ORDER_MS - REUSE_MARGIN_MS));
  const keys = Object.keys(terms) as (keyof OrderTerms)[];
  return untouched.find((order) => keys.every((key) => order[key] === terms[key])) ?? null;
}

/**
 * Seed 000 §4 create_order. Opening the order dialog again hands back the customer's open order
 * for the same combo instead of making another (issue 26); a new one counts against ORDERS_PER_HOUR.
 */
export function createOrder(ctx: AppContext, user: UserRow, comboId: string, now = Date.now()): Order {
  if (user.is_agency) throw new RpcError(Code.forbidden, OrderMsg.agencyRefused);
  const combo = findComboForUser(ctx, comboId, user.channel_code);
  // An order nobody can pay only leads the customer into a dead end (issue 12): refuse it unless the
  // wallet covers the price.
  if (combo.price_fen > user.wallet_fen && availablePayModes(ctx).length === 0)
    throw new RpcError(Code.badInput, OrderMsg.noPayModes);
  const terms = orderTerms(combo, user.channel_code);
  return tx(ctx.db, () => {
    const open = reusableOrder(ctx.db, user.id, terms, now);
    if (open) return toOrder(open);
    if (!ctx.limiter.hit(ORDERS_PER_HOUR, user.id))
      throw new RpcError(Code.tooManyRequests, OrderMsg.tooManyOrders);
    const id = newId(now);
    ctx.db
      .query(
        `INSERT INTO orders (id, user_id, combo_id, desc, order_money_fen, add_traffic, add_vip_duration, daily_limit,
           gain_permissions, permission_duration, from_channel, create_time, traffic_days)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        user.id,
        terms.combo_id,
        terms.desc,
        terms.order_money_fen,
        terms.add_traffic,
        terms.add_vip_duration,
        terms.daily_limit,
        terms.gain_permissions,
        terms.permission_duration,
        terms.from_channel,
        now,
        terms.traffic_days,
      );
    return toOrder(findOrder(ctx.db, id) as OrderRow);
  });
}

/**
 * Payment attempts are made for the remainder at that moment; once a coupon or the wallet changes it,
 * they can no longer pay this order (markPaid refuses a paid one whose amount no longer matches).
 */
export function closePendingPayments(db: Db, orderId: string) {
  db.query("UPDATE payments SET status = 'closed' WHERE order_id = ? AND status = 'pending'").run(orderId);
}

const COUPON_TRIES = { name: "order-coupon", max: 10, windowMs: 60_000 };
/** Refused coupon tries per address: accounts made for guessing codes share their address's budget. */
export const COUPON_IP_FAILURES = { name: "order-coupon-ip-failures", max: 30, windowMs: 10 * 60_000 };

/**
 * Puts one cash or discount coupon on an unpaid order; the use counts until the order is
 * cancelled. Tries are limited per account and refused ones per client address (`ip`).
 */
export function useOrderCoupon(
  ctx: AppContext,
  userId: string,
  orderId: string,
  code: string,
  ip: string,
  now = Date.now(),
): Order {
  if (code === "") throw new RpcError(Code.badInput, OrderMsg.couponEmpty);
  if (!ctx.limiter.hit(COUPON_TRIES, userId))
    throw new RpcError(Code.couponTooManyTries, OrderMsg.couponTooManyTries);
  const reservation = ctx.limiter.reserve([{ rule: COUPON_IP_FAILURES, key: ip }]);
  if (!reservation) throw new RpcError(Code.couponTooManyTries, OrderMsg.couponTooManyTries);
  const order = applyOrderCoupon(ctx, userId, orderId, code, now);
  reservation.release(); // only refused tries count against the address
  return order;
}

function applyOrderCoupon(
  ctx: AppContext,
  userId: string,
  orderId: string,
  code: string,
  now: number,
): Order {
  return tx(ctx.db, () => {
    const order = ownOrder(ctx.db, userId, orderId);
    if (order.status === "wallet_spend") throw new RpcError(Code.badInput, OrderMsg.walletLocked);
    if (order.status !== "topay") throw new RpcError(Code.badInput, OrderMsg.notPayable);
    if (order.coupon_use_id) throw new RpcError(Code.orderHasCoupon, OrderMsg.orderHasCoupon);
    const coupon = checkOrderCoupon(ctx.db, findCouponByCode(ctx.db, code), userId, now);
    const discount = couponDiscountFen(coupon, order.order_money_fen);
    const useId = recordCouponUse(ctx.db, { coupon, userId, orderId, addMoneyFen: discount, now });
    ctx.db
      .query(
        `UPDATE orders SET coupon_use_id = ?, coupon_code = ?, coupon_name = ?, coupon_type = ?, coupon_discount_fen = ?
         WHERE id = ?`,
      )
      .run(useId, coupon.code, coupon.name, coupon.type, discount, orderId);
    closePendingPayments(ctx.db, orderId);
    return toOrder(findOrder(ctx.db, orderId) as OrderRow);
  });
}

function dropCoupon(db: Db, order: OrderRow, now: number) {
  if (!order.coupon_use_id) return;
  restoreCouponUse(db, order.coupon_use_id, now);
  db.query(
    `UPDATE orders SET coupon_use_id = NULL, coupon_code = '', coupon_name = '', coupon_type = '', coupon_discount_fen = 0
     WHERE id = ?`,
  ).run(order.id);
  closePendingPayments(db, order.id);
}

/** Takes the coupon off an unpaid order and gives its use back. */
export function cancelOrderCoupon(ctx: AppContext, userId: string, orderId: string, now = Date.now()): Order {
  return tx(ctx.db, () => {
    const order = ownOrder(ctx.db, userId, orderId);
    if (order.status === "wallet_spend") throw new RpcError(Code.badInput, OrderMsg.walletLocked);
    if (order.status !== "topay") throw new RpcError(Code.badInput, OrderMsg.notPayable);
    dropCoupon(ctx.db, order, now);
    return toOrder(findOrder(ctx.db, orderId) as OrderRow);
  });
}

/** Takes the seed's wallet deduction once; the order becomes wallet_spend. Calling again changes nothing. */
export function walletCheck(ctx: AppContext, userId: string, orderId: string, now = Date.now()): Order {
  return tx(ctx.db, () => {
    const order = ownOrder(ctx.db, userId, orderId);
    if (!isOpen(order)) throw new RpcError(Code.badInput, OrderMsg.notPayable);
    if (order.status === "wallet_spend") return toOrder(order);
    const balance =
      ctx.db.query<{ wallet_fen: number }, [string]>("SELECT wallet_fen FROM users WHERE id = ?").get(userId)
        ?.wallet_fen ?? 0;
    const spend = walletDeductionFen(balance, payableFen(order));
    if (spend === 0) return toOrder(order);
    changeWallet(ctx.db, {
      userId,
      type: "order_spend",
      changeFen: -spend,
      desc: `购买 ${order.desc}`,
      orderId,
      now,
    });
    ctx.db
      .query("UPDATE orders SET wallet_spend_fen = ?, status = 'wallet_spend' WHERE id = ?")
      .run(spend, orderId);
    closePendingPayments(ctx.db, orderId);
    return toOrder(findOrder(ctx.db, orderId) as OrderRow);
  });
}

/** Cancels an open order in the caller's transaction: frees the coupon, returns the wallet part, closes its attempts. */
function cancelOpenOrder(db: Db, order: OrderRow, walletDesc: string, now: number) {
  dropCoupon(db, order, now);
  if (order.wallet_spend_fen > 0) {
    changeWallet(db, {
      userId: order.user_id,
      type: "order_refund",
      changeFen: order.wallet_spend_fen,
      desc: walletDesc,
      orderId: order.id,
      now,
    });
  }
  db.query("UPDATE orders SET status = 'cancled', wallet_spend_fen = 0, cancel_time = ? WHERE id = ?").run(
    now,
    order.id,
  );
  closePendingPayments(db, order.id);
}

/**
 * Cancels an unpaid order (topay or wallet_spend; 1026 otherwise): frees the coupon, returns the
 * wallet deduction, closes its pending payments. A late notification for it is then refused and logged.
 */
export function cancelOrder(ctx: AppContext, userId: string, orderId: string, now = Date.now()): Order {
  return tx(ctx.db, () => {
    const order = ownOrder(ctx.db, userId, orderId);
    if (!isOpen(order)) throw new RpcError(Code.orderNotCancellable, OrderMsg.notCancellable);
    cancelOpenOrder(ctx.db, order, `取消订单 ${order.desc}`, now);
    return toOrder(findOrder(ctx.db, orderId) as OrderRow);
  });
}

/**
 * The sweeper's round (sweeper.ts): cancels, as 取消 would, the unpaid orders made more than
 * UNPAID_ORDER_MS ago whose latest payment attempt is as old, so no gateway QR code or USDT amount
 * of theirs is still live. At most `limit` a round, oldest first; answers how many.
 */
export function cancelAbandonedOrders(ctx: AppContext, now = Date.now(), limit = 500): number {
  const cutoff = now - UNPAID_ORDER_MS;
  return tx(ctx.db, () => {
    const abandoned = ctx.db
      .query<OrderRow, [number, number]>(
        `SELECT * FROM orders o WHERE status IN ('topay', 'wallet_spend') AND create_time <= ?1
           AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.create_time > ?1)
         ORDER BY create_time LIMIT ?2`,
      )
      .all(cutoff, limit);
    for (const order of abandoned)
      cancelOpenOrder(ctx.db, order, OrderMsg.expiredRefundDesc(order.desc), now);
    return abandoned.length;
  });
}

/** A short note on a paid or wallet-deducted order for the admins (seed 000 §5: at most 30 characters). */
export function orderFeedback(ctx: AppContext, userId: string, orderId: string, msg: string): Order {
  return tx(ctx.db, () => {
    const order = ownOrder(ctx.db, userId, orderId);
    if (order.status !== "paied" && order.status !== "wallet_spend")
      throw new RpcError(Code.badInput, "只有已支付或已抵扣的订单可以反馈");
    ctx.db.query("UPDATE orders SET user_feedback = ? WHERE id = ?").run(msg, orderId);
    return toOrder(findOrder(ctx.db, orderId) as OrderRow);
  });
}

export function listOrders(ctx: AppContext, userId: string): Order[] {
  return ctx.db
    .query<OrderRow, [string]>(
      "SELECT * FROM orders WHERE user_id = ? ORDER BY create_time DESC, id DESC LIMIT 1000",
    )
    .all(userId)
    .map(toOrder);
}

export function tradeStatus(ctx: AppContext, userId: string, orderId: string): TradeStatus {
  const order = ownOrder(ctx.db, userId, orderId);
  return { status: order.status, add_traffic: order.add_traffic, add_vip_duration: order.add_vip_duration };
}

// ---- back office ----

interface TradeRow extends OrderRow {
  email: string;
  trade_no: string | null;
  amount_fen: number | null;
  payment_device: string | null;
  third_pay_platform: string | null;
}

/**
 * Orders newest first with their latest payment attempt; filterStr matches e-mail, product, order or
 * trade number. `only` narrows to one account (exact e-mail) and/or one status (the CLI's filters).
 */
export function listTrades(
  ctx: AppContext,
  requestNumber: number,
  filterStr: string,
  only: { email?: string; status?: OrderStatus } = {},
): Trade[] {
  const like = `%${filterStr.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = ctx.db
    .query<TradeRow, [string, number, string | null, string | null]>(
      `SELECT o.*, u.email,
         p.trade_no, p.amount_fen, p.device AS payment_device, p.third_pay_platform
       FROM orders o
       JOIN users u ON u.id = o.user_id
       LEFT JOIN payments p ON p.trade_no = (
         SELECT trade_no FROM payments WHERE order_id = o.id ORDER BY (status = 'paid') DESC, create_time DESC LIMIT 1)
       WHERE (?1 = '%%' OR u.email LIKE ?1 ESCAPE '\\' OR o.desc LIKE ?1 ESCAPE '\\' OR o.id LIKE ?1 ESCAPE '\\'
          OR p.trade_no LIKE ?1 ESCAPE '\\' OR o.from_channel LIKE ?1 ESCAPE '\\')
         AND (?3 IS NULL OR u.email = ?3) AND (?4 IS NULL OR o.status = ?4)
       ORDER BY o.create_time DESC, o.id DESC
       LIMIT ?2`,
    )
    .all(like, requestNumber, only.email ?? null, only.status ?? null);
  return rows.map((row) => ({
    order_id: row.id,
    username: row.email,
    desc: row.desc,
    tradeno: row.trade_no ?? "",
    fromChannel: row.from_channel,
    request_pay_amound: fenToYuan(row.amount_fen ?? payableFen(row)),
    rewardMoney: fenToYuan(row.reward_fen),
    pay_mode: row.pay_mode,
    device: row.payment_device ?? row.device,
    third_pay_platform: row.third_pay_platform ?? "",
    status: row.status,
    create_time: row.create_time,
    add_traffic: row.add_traffic,
    add_vip_duration: row.add_vip_duration,
  }));
}

export function orderDetail(ctx: AppContext, orderId: string): OrderDetail {
  const order = findOrder(ctx.db, orderId);
  if (!order) throw new RpcError(Code.notFound, OrderMsg.notFound);
  return {
    desc: order.desc,
    order_money: fenToYuan(order.order_money_fen),
    coupon_name: order.coupon_name,
    coupon_discount: fenToYuan(order.coupon_discount_fen),
    wallet_spend: fenToYuan(order.wallet_spend_fen),
    status: order.status,
    create_time: order.create_time,
    user_feedback: order.user_feedback,
  };
}
