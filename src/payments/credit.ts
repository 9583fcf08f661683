/**
 * The one way an order becomes paid (payments.md §0, DESIGN §7): check the payment attempt and the
 * amount, flip the attempt and the order with conditional updates, credit the user, and write the
 * ledger and the audit row, all in ONE transaction. Repeats find nothing left to flip and credit
 * nothing; every outcome, refused ones included, is logged in payment_events (events.ts).
 */
import type { AppContext } from "../context.ts";
import { type Db, greatestSql, tx } from "../db/db.ts";
import { DAY_MS } from "../lib/time.ts";
import { DEFAULT_DAILY_LIMIT } from "../lib/traffic.ts";
import { recordAudit } from "../modules/audit/service.ts";
import { payChannelRebate } from "../modules/channel/service.ts";
import { changeTraffic } from "../modules/ledger/service.ts";
import { countPayment } from "../modules/metrics/service.ts";
import {
  closePendingPayments,
  findOrder,
  isOpen,
  type OrderRow,
  payableFen,
} from "../modules/order/service.ts";
import { tellOrderPaid } from "../modules/telegram/alerts.ts";
import { addTrialGrant } from "../modules/trial/service.ts";
import { queueWebhookEvent } from "../modules/webhook/outbox.ts";
import { Code, RpcError } from "../rpc/codes.ts";
import { logPaymentEvent } from "./events.ts";
import { newTradeNo, type PaymentRow, type ProviderId, type VerifiedPayment } from "./provider.ts";

export type MarkPaidResult =
  | { result: "credited"; orderId: string }
  | { result: "duplicate"; orderId: string }
  | { result: "rejected" | "anomaly"; reason: string };

export async function findPayment(db: Db, tradeNo: string): Promise<PaymentRow | null> {
  return await db.get<PaymentRow>("SELECT * FROM payments WHERE trade_no = ?", tradeNo);
}

/**
 * A time package `days` longer, counted from its current expiry or from now when none runs. Days
 * added on top of a running package keep its larger daily quota (docs/decisions.md); null = 50 GB.
 */
export function extendedTimePackage(
  user: { vip_expire_time: number; daily_limit: number | null },
  days: number,
  dailyLimit: number | null,
  now: number,
): { vipExpireTime: number; dailyLimit: number } {
  const runningLimit = user.vip_expire_time > now ? (user.daily_limit ?? DEFAULT_DAILY_LIMIT) : 0;
  return {
    vipExpireTime: Math.max(now, user.vip_expire_time) + days * DAY_MS,
    dailyLimit: Math.max(dailyLimit ?? DEFAULT_DAILY_LIMIT, runningLimit),
  };
}

/**
 * Credits what the order was sold (DESIGN §7). Runs inside markPaid's transaction. Traffic of a
 * combo with a duration stays usable for that many days from now, then what is left of it goes.
 */
export async function creditOrder(ctx: AppContext, order: OrderRow, now: number): Promise<void> {
  const db = ctx.db;
  const user = await db.get<{ vip_expire_time: number; daily_limit: number | null }>(
    "SELECT vip_expire_time, daily_limit FROM users WHERE id = ?",
    order.user_id,
  );
  if (!user) throw new Error(`order ${order.id} has no user`);
  const extension =
    order.add_vip_duration > 0
      ? extendedTimePackage(user, order.add_vip_duration, order.daily_limit, now)
      : { vipExpireTime: undefined, dailyLimit: undefined };
  await changeTraffic(db, {
    userId: order.user_id,
    type: "buy",
    desc: `购买 ${order.desc}`,
    traffic: order.add_traffic,
    ...extension,
    orderId: order.id,
    now,
    timeZone: await ctx.settings.get("timezone"),
  });
  if (order.traffic_days > 0 && order.add_traffic > 0) {
    await addTrialGrant(db, {
      userId: order.user_id,
      orderId: order.id,
      amount: order.add_traffic,
      expireTime: now + order.traffic_days * DAY_MS,
      now,
    });
  }
  await db.run("UPDATE users SET paid_user = 1 WHERE id = ?", order.user_id);
  if (order.permission_duration > 0) {
    const grant = `INSERT INTO user_permissions (user_id, permission_id, expire_time) VALUES (?1, ?2, ?3 + ?4)
       ON CONFLICT (user_id, permission_id) DO UPDATE SET expire_time = ${greatestSql(db, "user_permissions.expire_time", "?3")} + ?4`;
    for (const permissionId of JSON.parse(order.gain_permissions) as string[]) {
      const bumped = (
        await db.run("UPDATE permissions SET use_times = use_times + 1 WHERE id = ?", permissionId)
      ).changes;
      if (bumped) await db.run(grant, order.user_id, permissionId, now, order.permission_duration * DAY_MS);
    }
  }
}

export interface PaidNotice extends VerifiedPayment {
  provider: ProviderId;
  /** What came over the wire, for the audit row. */
  raw: string;
  /** Who credited: "notify", "query", "watcher", "manual: <reason>", "wallet". */
  source: string;
}

async function refuse(
  db: Db,
  notice: PaidNotice,
  result: "rejected" | "anomaly",
  reason: string,
  now: number,
): Promise<MarkPaidResult> {
  await logPaymentEvent(db, { ...notice, result, reason }, now);
  return { result, reason };
}

/** Marks a payment attempt paid and credits its order exactly once. Never throws for a bad notice. */
export async function markPaid(
  ctx: AppContext,
  notice: PaidNotice,
  now = Date.now(),
): Promise<MarkPaidResult> {
  const db = ctx.db;
  const outcome = await tx(db, async (): Promise<MarkPaidResult> => {
    if (notice.status !== "paid")
      return await refuse(db, notice, "rejected", `gateway status ${notice.status}`, now);
    const payment = await findPayment(db, notice.tradeNo);
    if (!payment) return await refuse(db, notice, "rejected", "unknown trade number", now);
    if (payment.provider !== notice.provider)
      return await refuse(db, notice, "rejected", `trade belongs to ${payment.provider}`, now);
    const expected =
      notice.amount.currency === "USDT"
        ? payment.usdt_units
        : payment.method === "usdt"
          ? null
          : payment.amount_fen;
    if (expected === null || expected !== notice.amount.minor)
      return await refuse(
        db,
        notice,
        "anomaly",
        `amount ${notice.amount.minor} ${notice.amount.currency}, expected ${expected}`,
        now,
      );
    const order = await findOrder(db, payment.order_id);
    if (!order) return await refuse(db, notice, "rejected", "order missing", now);
    if (order.status === "paied") {
      if (payment.status === "paid") {
        await logPaymentEvent(db, { ...notice, result: "duplicate", reason: "already paid" }, now);
        return { result: "duplicate", orderId: order.id };
      }
      return await refuse(
        db,
        notice,
        "anomaly",
        "order already paid through another payment: refund by hand",
        now,
      );
    }
    if (!isOpen(order))
      return await refuse(
        db,
        notice,
        "anomaly",
        `order is ${order.status}: money received, nothing credited`,
        now,
      );
    // A coupon or wallet change after this attempt was made changed what the order still owes.
    if (payment.amount_fen !== payableFen(order))
      return await refuse(
        db,
        notice,
        "anomaly",
        `attempt was for ${payment.amount_fen} fen, order now owes ${payableFen(order)}: money received, nothing credited`,
        now,
      );
    if (payment.status === "closed") {
      // A superseded attempt (the customer switched method) that was paid anyway: still the order's money.
      await logPaymentEvent(
        db,
        { ...notice, result: "anomaly", reason: "paid a superseded attempt; crediting" },
        now,
      );
    }
    const flipped = (
      await db.run(
        "UPDATE payments SET status = 'paid', gateway_trade_no = ?, pay_time = ? WHERE trade_no = ? AND status != 'paid'",
        notice.gatewayTradeNo,
        now,
        payment.trade_no,
      )
    ).changes;
    const orderFlipped = (
      await db.run(
        `UPDATE orders SET status = 'paied', pay_time = ?, pay_mode = ?, paid_by = ?
         WHERE id = ? AND status IN ('topay', 'wallet_spend')`,
        now,
        payment.method,
        notice.source,
        order.id,
      )
    ).changes;
    if (flipped !== 1 || orderFlipped !== 1) throw new Error("payment state changed inside its transaction");
    // Other pending attempts of this order can no longer be paid for it.
    await closePendingPayments(db, order.id);
    await creditOrder(ctx, order, now);
    await payChannelRebate(ctx, order, now);
    await tellOrderPaid(ctx, order, payment.method);
    await queueWebhookEvent(
      ctx,
      "order.paid",
      async () => ({
        orderId: order.id,
        userId: order.user_id,
        email: (await db.get<{ email: string }>("SELECT email FROM users WHERE id = ?", order.user_id))
          ?.email,
        desc: order.desc,
        amountFen: payment.amount_fen,
        method: payment.method,
        provider: notice.provider,
        tradeNo: payment.trade_no,
        payTime: now,
      }),
      now,
    );
    await logPaymentEvent(db, { ...notice, result: "credited", reason: notice.source }, now);
    return { result: "credited", orderId: order.id };
  });
  countPayment(db, notice.provider, outcome.result);
  return outcome;
}

/**
 * Records a payment of the order's whole remainder that did not pass through a gateway (wallet or
 * coupon covering everything, or an operator crediting by hand) and marks it paid.
 */
export async function settleWithoutGateway(
  ctx: AppContext,
  orderId: string,
  provider: "wallet" | "manual",
  source: string,
  now = Date.now(),
): Promise<MarkPaidResult> {
  return await tx(ctx.db, async () => {
    const order = await findOrder(ctx.db, orderId);
    if (!order) throw new RpcError(Code.notFound, "订单不存在");
    if (!isOpen(order)) throw new RpcError(Code.badInput, `订单状态为 ${order.status}，不能标记为已支付`);
    const amount = payableFen(order);
    if (provider === "wallet" && amount !== 0) throw new Error("wallet settlement needs a zero remainder");
    const tradeNo = newTradeNo(now);
    await ctx.db.run(
      `INSERT INTO payments (trade_no, order_id, user_id, provider, method, amount_fen, third_pay_platform, create_time)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      tradeNo,
      order.id,
      order.user_id,
      provider,
      provider,
      amount,
      provider === "wallet" ? "钱包" : "人工",
      now,
    );
    const result = await markPaid(
      ctx,
      {
        provider,
        tradeNo,
        gatewayTradeNo: tradeNo,
        amount: { currency: "CNY", minor: amount },
        status: "paid",
        raw: source,
        source,
      },
      now,
    );
    // Money received outside a gateway is an operator's word (`ferry order mark-paid`): recorded.
    if (provider === "manual" && result.result === "credited")
      await recordAudit(ctx.db, {
        action: "order.mark_paid",
        target: orderId,
        diff: {
          status: { old: order.status, new: "paid" },
          amountFen: { new: amount },
          source: { new: source },
        },
      });
    return result;
  });
}
