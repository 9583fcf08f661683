/**
 * `/api/shop/dobuy`: pick the provider for the pay mode, record a payment attempt for the order's
 * remainder, and ask the provider how to collect it. A remainder of zero (wallet or coupon covered
 * everything) is settled at once through markPaid.
 */
import type { AppContext } from "../context.ts";
import { tx } from "../db/db.ts";
import { fenToYuan, formatUsdt } from "../lib/money.ts";
import { checkOrderCoupon, findCouponById } from "../modules/coupon/service.ts";
import { recordError } from "../modules/errors/service.ts";
import { OrderMsg, type PayMode, type PayResult, payModeText } from "../modules/order/schema.ts";
import {
  closePendingPayments,
  findOrder,
  isOpen,
  type OrderRow,
  ownOrder,
  payableFen,
} from "../modules/order/service.ts";
import { Code, RpcError } from "../rpc/codes.ts";
import { settleWithoutGateway } from "./credit.ts";
import { type Device, newTradeNo, type PaymentAction, type PaymentProvider } from "./provider.ts";
import { providerFor } from "./registry.ts";

export interface CheckoutInput {
  userId: string;
  orderId: string;
  payMode: PayMode;
  isMobile: boolean;
  device: Device;
  clientIp: string;
  /** Origin the request came to (https://panel.example); callback bases fall back to it. */
  origin: string;
  /** The SPA's return URL; only used when it points back at this panel. */
  returnUrl: string;
}

function baseUrl(setting: string, origin: string): string {
  return (setting.trim() || origin).replace(/\/+$/, "");
}

function returnUrlFor(ctx: AppContext, input: CheckoutInput, orderId: string): string {
  const base = baseUrl(ctx.settings.get("return_url"), input.origin);
  try {
    const wanted = new URL(input.returnUrl);
    if (wanted.origin === new URL(base).origin || wanted.origin === input.origin) return wanted.toString();
  } catch {
    // not a URL: use ours
  }
  return `${base}/#/order?payment=success&order=${orderId}`;
}

function paidResult(order: OrderRow, label: string): PayResult {
  return {
    _id: order.id,
    status: order.status,
    add_traffic: order.add_traffic,
    add_vip_duration: order.add_vip_duration,
    third_pay_platform: label,
    payurl: "",
    qrcode: "",
    urlscheme: "",
    usdtAdress: "",
    request_pay_amound: 0,
    request_pay_amound_usdt: "",
    usdtNetwork: "",
    expireTime: 0,
    sandbox: false,
  };
}

function toPayResult(
  order: OrderRow,
  provider: PaymentProvider,
  amountFen: number,
  action: PaymentAction,
): PayResult {
  const result: PayResult = {
    ...paidResult(order, provider.label),
    request_pay_amound: fenToYuan(amountFen),
    sandbox: provider.id === "sandbox",
  };
  switch (action.kind) {
    case "redirect":
      return { ...result, payurl: action.url };
    case "qrcode":
      return { ...result, qrcode: action.content, payurl: action.payUrl ?? "" };
    case "url_scheme":
      return { ...result, urlscheme: action.url, qrcode: action.fallbackQr ?? "" };
    case "crypto":
      return {
        ...result,
        usdtAdress: action.address,
        request_pay_amound_usdt: formatUsdt(action.units),
        usdtNetwork: action.network,
        expireTime: action.expiresAt,
      };
  }
}

export async function checkout(ctx: AppContext, input: CheckoutInput, now = Date.now()): Promise<PayResult> {
  const prepared = tx(ctx.db, () => {
    const order = ownOrder(ctx.db, input.userId, input.orderId);
    if (order.status === "paied") return { order, paid: true as const };
    if (!isOpen(order)) throw new RpcError(Code.badInput, OrderMsg.notPayable);
    if (order.coupon_use_id) {
      // The coupon may have expired or been limited since it was put on the order (seed: 1017 also on buy).
      const use = ctx.db
        .query<{ coupon_id: string }, [string]>("SELECT coupon_id FROM coupon_uses WHERE id = ?")
        .get(order.coupon_use_id);
      checkOrderCoupon(ctx.db, use ? findCouponById(ctx.db, use.coupon_id) : null, input.userId, now, 1);
    }
    const amount = payableFen(order);
    if (amount === 0) {
      settleWithoutGateway(ctx, order.id, "wallet", "wallet", now);
      return { order: findOrder(ctx.db, order.id) as OrderRow, paid: true as const };
    }
    const provider = providerFor(ctx, input.payMode);
    if (!provider) throw new RpcError(Code.badInput, OrderMsg.payModeOff);
    const tradeNo = newTradeNo(now);
    // A new attempt supersedes the older ones (EPay refuses a reused number with other parameters).
    closePendingPayments(ctx.db, order.id);
    ctx.db
      .query(
        `INSERT INTO payments (trade_no, order_id, user_id, provider, method, amount_fen, device, client_ip, third_pay_platform, create_time)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        tradeNo,
        order.id,
        input.userId,
        provider.id,
        input.payMode,
        amount,
        input.device,
        input.clientIp,
        provider.label,
        now,
      );
    ctx.db
      .query("UPDATE orders SET pay_mode = ?, device = ? WHERE id = ?")
      .run(input.payMode, input.device, order.id);
    return { order, paid: false as const, provider, tradeNo, amount };
  });
  if (prepared.paid) return paidResult(prepared.order, "钱包");

  const { order, provider, tradeNo, amount } = prepared;
  const notifyBase = baseUrl(ctx.settings.get("notify_url"), input.origin);
  try {
    const action = await provider.createPayment(ctx, {
      tradeNo,
      orderId: order.id,
      userId: input.userId,
      amountFen: amount,
      subject: order.desc,
      method: input.payMode,
      clientIp: input.clientIp,
      device: input.device,
      isMobile: input.isMobile,
      notifyUrl: `${notifyBase}/api/pay/notify/${provider.id}`,
      returnUrl: returnUrlFor(ctx, input, order.id),
      panelOrigin: input.origin,
      now,
    });
    return toPayResult(order, provider, amount, action);
  } catch (error) {
    ctx.db
      .query("UPDATE payments SET status = 'closed' WHERE trade_no = ? AND status = 'pending'")
      .run(tradeNo);
    if (error instanceof RpcError) throw error;
    recordError(ctx.db, `pay ${provider.id} ${payModeText(input.payMode)}`, error);
    throw new RpcError(Code.internal, OrderMsg.buyFailed);
  }
}
