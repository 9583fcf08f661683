/**
 * Orders (seed 000 §4/§5): create from a combo, put on or take off one coupon, the wallet
 * deduction, cancel, feedback, and the lists. Every change runs in one transaction with its
 * ledger rows; paying is in src/payments (markPaid → creditOrder).
 */
import type { AppContext } from "../../context.ts";
import { type Db, forUpdateSql, likeSql, nocaseEqualsSql, tx } from "../../db/db.ts";
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
  ORDER_FILTER_STATUSES,
  ORDER_LIST_MAX,
  type Order,
  type OrderDetail,
  type OrderFilter,
  type OrderListPage,
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

export async function findOrder(db: Db, orderId: string): Promise<OrderRow | null> {
  return await db.get<OrderRow>("SELECT * FROM orders WHERE id = ?", orderId);
}

/**
 * The user's own order, or 1004 (someone else's order looks exactly like a missing one). In a
 * transaction the order is locked until it ends: what it decides on stays as it was read.
 */
export async function ownOrder(db: Db, userId: string, orderId: string): Promise<OrderRow> {
  const order = await db.get<OrderRow>(`SELECT * FROM orders WHERE id = ?${forUpdateSql(db)}`, orderId);
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
async function reusableOrder(
  db: Db,
  userId: string,
  terms: OrderTerms,
  now: number,
): Promise<OrderRow | null> {
  const untouched = await db.all<OrderRow>(
    `SELECT * FROM orders WHERE user_id = ? AND combo_id = ? AND status = 'topay' AND coupon_use_id IS NULL
         AND create_time > ? ORDER BY create_time DESC, id DESC LIMIT 20`,
    userId,
    terms.combo_id,
    now - (UNPAID_ORDER_MS - REUSE_MARGIN_MS),
  );
  const keys = Object.keys(terms) as (keyof OrderTerms)[];
  return untouched.find((order) => keys.every((key) => order[key] === terms[key])) ?? null;
}

/**
 * Seed 000 §4 create_order. Opening the order dialog again hands back the customer's open order
 * for the same combo instead of making another (issue 26); a new one counts against ORDERS_PER_HOUR.
 */
export async function createOrder(
  ctx: AppContext,
  user: UserRow,
  comboId: string,
  now = Date.now(),
): Promise<Order> {
  if (user.is_agency) throw new RpcError(Code.forbidden, OrderMsg.agencyRefused);
  const combo = await findComboForUser(ctx, comboId, user.channel_code);
  // An order nobody can pay only leads the customer into a dead end (issue 12): refuse it unless the
  // wallet covers the price.
  if (combo.price_fen > user.wallet_fen && (await availablePayModes(ctx)).length === 0)
    throw new RpcError(Code.badInput, OrderMsg.noPayModes);
  const terms = orderTerms(combo, user.channel_code);
  return tx(ctx.db, async () => {
    const open = await reusableOrder(ctx.db, user.id, terms, now);
    if (open) return toOrder(open);
    // Counted in this transaction: if it rolls back, so does the count.
    if (!(await ctx.limiter.reserve([{ rule: ORDERS_PER_HOUR, key: user.id }], now)))
      throw new RpcError(Code.tooManyRequests, OrderMsg.tooManyOrders);
    const id = newId(now);
    await ctx.db.run(
      `INSERT INTO orders (id, user_id, combo_id, "desc", order_money_fen, add_traffic, add_vip_duration, daily_limit,
           gain_permissions, permission_duration, from_channel, create_time, traffic_days)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    return toOrder((await findOrder(ctx.db, id)) as OrderRow);
  });
}

/**
 * Payment attempts are made for the remainder at that moment; once a coupon or the wallet changes it,
 * they can no longer pay this order (markPaid refuses a paid one whose amount no longer matches).
 */
export async function closePendingPayments(db: Db, orderId: string) {
  await db.run("UPDATE payments SET status = 'closed' WHERE order_id = ? AND status = 'pending'", orderId);
}

const COUPON_TRIES = { name: "order-coupon", max: 10, windowMs: 60_000 };
/** Refused coupon tries per address: accounts made for guessing codes share their address's budget. */
export const COUPON_IP_FAILURES = { name: "order-coupon-ip-failures", max: 30, windowMs: 10 * 60_000 };

/**
 * Puts one cash or discount coupon on an unpaid order; the use counts until the order is
 * cancelled. Tries are limited per account and refused ones per client address (`ip`).
 */
export async function useOrderCoupon(
  ctx: AppContext,
  userId: string,
  orderId: string,
  code: string,
  ip: string,
  now = Date.now(),
): Promise<Order> {
  if (code === "") throw new RpcError(Code.badInput, OrderMsg.couponEmpty);
  if (!(await ctx.limiter.hit(COUPON_TRIES, userId)))
    throw new RpcError(Code.couponTooManyTries, OrderMsg.couponTooManyTries);
  // Taken outside the coupon's transaction, so that a refused try (it throws) still counts.
  const reservation = await ctx.limiter.reserve([{ rule: COUPON_IP_FAILURES, key: ip }]);
  if (!reservation) throw new RpcError(Code.couponTooManyTries, OrderMsg.couponTooManyTries);
  const order = await applyOrderCoupon(ctx, userId, orderId, code, now);
  await reservation.release(); // only refused tries count against the address
  return order;
}

async function applyOrderCoupon(
  ctx: AppContext,
  userId: string,
  orderId: string,
  code: string,
  now: number,
): Promise<Order> {
  return await tx(ctx.db, async () => {
    const order = await ownOrder(ctx.db, userId, orderId);
    if (order.status === "wallet_spend") throw new RpcError(Code.badInput, OrderMsg.walletLocked);
    if (order.status !== "topay") throw new RpcError(Code.badInput, OrderMsg.notPayable);
    if (order.coupon_use_id) throw new RpcError(Code.orderHasCoupon, OrderMsg.orderHasCoupon);
    const coupon = await checkOrderCoupon(ctx.db, await findCouponByCode(ctx.db, code), userId, now);
    const discount = couponDiscountFen(coupon, order.order_money_fen);
    const useId = await recordCouponUse(ctx.db, { coupon, userId, orderId, addMoneyFen: discount, now });
    await ctx.db.run(
      `UPDATE orders SET coupon_use_id = ?, coupon_code = ?, coupon_name = ?, coupon_type = ?, coupon_discount_fen = ?
         WHERE id = ?`,
      useId,
      coupon.code,
      coupon.name,
      coupon.type,
      discount,
      orderId,
    );
    await closePendingPayments(ctx.db, orderId);
    return toOrder((await findOrder(ctx.db, orderId)) as OrderRow);
  });
}

async function dropCoupon(db: Db, order: OrderRow, now: number) {
  if (!order.coupon_use_id) return;
  await restoreCouponUse(db, order.coupon_use_id, now);
  await db.run(
    `UPDATE orders SET coupon_use_id = NULL, coupon_code = '', coupon_name = '', coupon_type = '', coupon_discount_fen = 0
     WHERE id = ?`,
    order.id,
  );
  await closePendingPayments(db, order.id);
}

/** Takes the coupon off an unpaid order and gives its use back. */
export async function cancelOrderCoupon(
  ctx: AppContext,
  userId: string,
  orderId: string,
  now = Date.now(),
): Promise<Order> {
  return await tx(ctx.db, async () => {
    const order = await ownOrder(ctx.db, userId, orderId);
    if (order.status === "wallet_spend") throw new RpcError(Code.badInput, OrderMsg.walletLocked);
    if (order.status !== "topay") throw new RpcError(Code.badInput, OrderMsg.notPayable);
    await dropCoupon(ctx.db, order, now);
    return toOrder((await findOrder(ctx.db, orderId)) as OrderRow);
  });
}

/** Takes the seed's wallet deduction once; the order becomes wallet_spend. Calling again changes nothing. */
export async function walletCheck(
  ctx: AppContext,
  userId: string,
  orderId: string,
  now = Date.now(),
): Promise<Order> {
  return await tx(ctx.db, async () => {
    const order = await ownOrder(ctx.db, userId, orderId);
    if (!isOpen(order)) throw new RpcError(Code.badInput, OrderMsg.notPayable);
    if (order.status === "wallet_spend") return toOrder(order);
    const balance =
      (await ctx.db.get<{ wallet_fen: number }>("SELECT wallet_fen FROM users WHERE id = ?", userId))
        ?.wallet_fen ?? 0;
    const spend = walletDeductionFen(balance, payableFen(order));
    if (spend === 0) return toOrder(order);
    await changeWallet(ctx.db, {
      userId,
      type: "order_spend",
      changeFen: -spend,
      desc: `购买 ${order.desc}`,
      orderId,
      now,
    });
    await ctx.db.run(
      "UPDATE orders SET wallet_spend_fen = ?, status = 'wallet_spend' WHERE id = ?",
      spend,
      orderId,
    );
    await closePendingPayments(ctx.db, orderId);
    return toOrder((await findOrder(ctx.db, orderId)) as OrderRow);
  });
}

/** Cancels an open order in the caller's transaction: frees the coupon, returns the wallet part, closes its attempts. */
async function cancelOpenOrder(db: Db, order: OrderRow, walletDesc: string, now: number) {
  await dropCoupon(db, order, now);
  if (order.wallet_spend_fen > 0) {
    await changeWallet(db, {
      userId: order.user_id,
      type: "order_refund",
      changeFen: order.wallet_spend_fen,
      desc: walletDesc,
      orderId: order.id,
      now,
    });
  }
  await db.run(
    "UPDATE orders SET status = 'cancled', wallet_spend_fen = 0, cancel_time = ? WHERE id = ?",
    now,
    order.id,
  );
  await closePendingPayments(db, order.id);
}

/**
 * Cancels an unpaid order (topay or wallet_spend; 1026 otherwise): frees the coupon, returns the
 * wallet deduction, closes its pending payments. A late notification for it is then refused and logged.
 */
export async function cancelOrder(
  ctx: AppContext,
  userId: string,
  orderId: string,
  now = Date.now(),
): Promise<Order> {
  return await tx(ctx.db, async () => {
    const order = await ownOrder(ctx.db, userId, orderId);
    if (!isOpen(order)) throw new RpcError(Code.orderNotCancellable, OrderMsg.notCancellable);
    await cancelOpenOrder(ctx.db, order, `取消订单 ${order.desc}`, now);
    return toOrder((await findOrder(ctx.db, orderId)) as OrderRow);
  });
}

/**
 * The sweeper's round (sweeper.ts): cancels, as 取消 would, the unpaid orders made more than
 * UNPAID_ORDER_MS ago whose latest payment attempt is as old, so no gateway QR code or USDT amount
 * of theirs is still live. At most `limit` a round, oldest first; answers how many.
 */
export async function cancelAbandonedOrders(ctx: AppContext, now = Date.now(), limit = 500): Promise<number> {
  const cutoff = now - UNPAID_ORDER_MS;
  return await tx(ctx.db, async () => {
    const abandoned = await ctx.db.all<OrderRow>(
      `SELECT * FROM orders o WHERE status IN ('topay', 'wallet_spend') AND create_time <= ?1
           AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.create_time > ?1)
         ORDER BY create_time LIMIT ?2`,
      cutoff,
      limit,
    );
    for (const order of abandoned)
      await cancelOpenOrder(ctx.db, order, OrderMsg.expiredRefundDesc(order.desc), now);
    return abandoned.length;
  });
}

/** A short note on a paid or wallet-deducted order for the admins (seed 000 §5: at most 30 characters). */
export async function orderFeedback(
  ctx: AppContext,
  userId: string,
  orderId: string,
  msg: string,
): Promise<Order> {
  return await tx(ctx.db, async () => {
    const order = await ownOrder(ctx.db, userId, orderId);
    if (order.status !== "paied" && order.status !== "wallet_spend")
      throw new RpcError(Code.badInput, "只有已支付或已抵扣的订单可以反馈");
    await ctx.db.run("UPDATE orders SET user_feedback = ? WHERE id = ?", msg, orderId);
    return toOrder((await findOrder(ctx.db, orderId)) as OrderRow);
  });
}

export async function listOrders(ctx: AppContext, userId: string): Promise<Order[]> {
  return (
    await ctx.db.all<OrderRow>(
      "SELECT * FROM orders WHERE user_id = ? ORDER BY create_time DESC, id DESC LIMIT ?",
      userId,
      ORDER_LIST_MAX,
    )
  ).map(toOrder);
}

/** One page (1-based; size 0: 全部, up to ORDER_LIST_MAX) of the user's orders in a status group. */
export async function pageOrders(
  ctx: AppContext,
  userId: string,
  { page, pageSize, filter }: { page: number; pageSize: number; filter: OrderFilter },
): Promise<OrderListPage> {
  const statuses = ORDER_FILTER_STATUSES[filter];
  const inStatuses = `status IN (${statuses.map((_, i) => `?${i + 2}`).join(", ")})`;
  const counted = await ctx.db.get<{ total: number }>(
    `SELECT COUNT(*) AS total FROM orders WHERE user_id = ?1 AND ${inStatuses}`,
    userId,
    ...statuses,
  );
  const total = Number(counted?.total ?? 0);
  const size = pageSize === 0 ? ORDER_LIST_MAX : pageSize;
  const last = Math.max(1, Math.ceil(total / size));
  const answered = Math.min(page, last);
  const offset = (answered - 1) * size;
  const limit = statuses.length + 2;
  const rows = await ctx.db.all<OrderRow>(
    `SELECT * FROM orders WHERE user_id = ?1 AND ${inStatuses}
     ORDER BY create_time DESC, id DESC LIMIT ?${limit} OFFSET ?${limit + 1}`,
    userId,
    ...statuses,
    size,
    offset,
  );
  return { orders: rows.map(toOrder), total, page: answered };
}

export async function tradeStatus(ctx: AppContext, userId: string, orderId: string): Promise<TradeStatus> {
  const order = await ownOrder(ctx.db, userId, orderId);
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
export async function listTrades(
  ctx: AppContext,
  requestNumber: number,
  filterStr: string,
  only: { email?: string; status?: OrderStatus } = {},
): Promise<Trade[]> {
  const like = `%${filterStr.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await ctx.db.all<TradeRow>(
    `SELECT o.*, u.email,
         p.trade_no, p.amount_fen, p.device AS payment_device, p.third_pay_platform
       FROM orders o
       JOIN users u ON u.id = o.user_id
       LEFT JOIN payments p ON p.trade_no = (
         SELECT trade_no FROM payments WHERE order_id = o.id ORDER BY (status = 'paid') DESC, create_time DESC LIMIT 1)
       WHERE (?1 = '%%' OR u.email ${likeSql(ctx.db)} ?1 ESCAPE '\\' OR o.desc ${likeSql(ctx.db)} ?1 ESCAPE '\\' OR o.id ${likeSql(ctx.db)} ?1 ESCAPE '\\'
          OR p.trade_no ${likeSql(ctx.db)} ?1 ESCAPE '\\' OR o.from_channel ${likeSql(ctx.db)} ?1 ESCAPE '\\')
         AND (CAST(?3 AS TEXT) IS NULL OR ${nocaseEqualsSql(ctx.db, "u.email", "?3")}) AND (CAST(?4 AS TEXT) IS NULL OR o.status = ?4)
       ORDER BY o.create_time DESC, o.id DESC
       LIMIT ?2`,
    like,
    requestNumber,
    only.email ?? null,
    only.status ?? null,
  );
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

export async function orderDetail(ctx: AppContext, orderId: string): Promise<OrderDetail> {
  const order = await findOrder(ctx.db, orderId);
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
