/**
 * `/api/shop/dobuy`: pick the provider for the pay mode, record a payment attempt for the order's
 * remainder, and ask the provider how to collect it. A remainder of zero (wallet or coupon covered
 * everything) is settled at once through markPaid.
 */
import type { AppContext } from "../context.ts";
import { tx } from "../db/db.ts";
import { isPayLink, linkSchemeForLog } from "../lib/links.ts";
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
import { type Settings, siteOrigin } from "../modules/settings/schema.ts";
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
  /** The SPA's return URL; only used when it points back at the trusted site origin. */
  returnUrl: string;
}

interface CallbackBases {
  /** Where the gateway calls back. */
  notify: string;
  /** Where the customer's browser comes back. */
  back: string;
  /** The trusted site origin, when configured. */
  site: string | null;
}

const trimBase = (setting: string) => setting.trim().replace(/\/+$/, "") || null;

/**
 * The settings notify_url and return_url, else the trusted site origin (siteOrigin), never the
 * request's Host header, which anyone can forge. Null when one of them cannot be made.
 */
function callbackBases(settings: Settings): CallbackBases | null {
  const site = siteOrigin(settings);
  const notify = trimBase(settings.notify_url) ?? site;
  const back = trimBase(settings.return_url) ?? site;
  return notify && back ? { notify, back, site } : null;
}

/** The customer's own return URL when it points at the site (or the return base), else ours. */
function returnUrlFor(bases: CallbackBases, wanted: string, orderId: string): string {
  const trusted = [new URL(bases.back).origin, bases.site];
  try {
    const url = new URL(wanted);
    if (trusted.includes(url.origin)) return url.toString();
  } catch {
    // not a URL: use ours
  }
  return `${bases.back}/#/order?payment=success&order=${orderId}`;
}

/** Thrown when a provider hands back a link with a scheme the panel never shows (javascript:, data:, …). */
class UnsafePayLinkError extends Error {}

/** Every link of the action must be http(s) or a wallet app's scheme (src/lib/links.ts). */
function checkPayLinks(providerId: string, action: PaymentAction): void {
  const links =
    action.kind === "redirect"
      ? [action.url]
      : action.kind === "qrcode"
        ? [action.content, action.payUrl ?? ""]
        : action.kind === "url_scheme"
          ? [action.url, action.fallbackQr ?? ""]
          : [];
  for (const link of links) {
    if (link !== "" && !isPayLink(link))
      throw new UnsafePayLinkError(
        `${providerId} returned a pay link with the refused scheme ${linkSchemeForLog(link)}: ${link.slice(0, 200)}`,
      );
  }
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
  const bases = callbackBases(ctx.settings.all());
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
    if (provider.callbacks && !bases)
      return { order, paid: false as const, provider, refused: true as const };
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
    return { order, paid: false as const, provider, refused: false as const, tradeNo, amount };
  });
  if (prepared.paid) return paidResult(prepared.order, "钱包");
  if (prepared.refused) {
    // The customer learns that the admin must act; the admin learns why from the error log.
    recordError(
      ctx.db,
      `pay ${prepared.provider.id} ${payModeText(input.payMode)}`,
      new Error(
        "未设置站点地址（site_url）：支付网关的回调地址无从生成，已拒绝创建支付。请在配置管理中填写站点地址",
      ),
    );
    throw new RpcError(Code.badInput, OrderMsg.noSiteOrigin);
  }

  const { order, provider, tradeNo, amount } = prepared;
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
      notifyUrl: bases ? `${bases.notify}/api/pay/notify/${provider.id}` : "",
      returnUrl: bases ? returnUrlFor(bases, input.returnUrl, order.id) : "",
      panelOrigin: bases?.site ?? "",
      now,
    });
    checkPayLinks(provider.id, action);
    return toPayResult(order, provider, amount, action);
  } catch (error) {
    ctx.db
      .query("UPDATE payments SET status = 'closed' WHERE trade_no = ? AND status = 'pending'")
      .run(tradeNo);
    if (error instanceof RpcError) throw error;
    recordError(ctx.db, `pay ${provider.id} ${payModeText(input.payMode)}`, error);
    if (error instanceof UnsafePayLinkError) throw new RpcError(Code.badInput, OrderMsg.unsafePayLink);
    throw new RpcError(Code.internal, OrderMsg.buyFailed);
  }
}
