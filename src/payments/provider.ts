/**
 * One interface for every gateway (payments.md §7). A provider creates a payment for an order's
 * remainder and verifies what its gateway sends back; it never changes an order. Crediting is
 * markPaid's job (credit.ts), the same for push (notifications), pull (USDT, queries) and manual.
 */
import type { AppContext } from "../context.ts";
import type { PayMode } from "../modules/order/schema.ts";

export type ProviderId = "epay" | "usdt_trc20" | "sandbox" | "wallet" | "manual";

/** Device class from the User-Agent, as EPay's mapi wants it. */
export type Device = "pc" | "mobile" | "wechat" | "alipay";

/** A row of payments: one attempt to pay an order through one provider. */
export interface PaymentRow {
  trade_no: string;
  order_id: string;
  user_id: string;
  provider: ProviderId;
  method: string;
  amount_fen: number;
  usdt_units: number | null;
  usdt_address: string | null;
  usdt_rate_fen: number | null;
  device: string;
  client_ip: string;
  third_pay_platform: string;
  status: "pending" | "paid" | "closed";
  gateway_trade_no: string | null;
  create_time: number;
  expire_time: number | null;
  pay_time: number | null;
  /** The PaymentAction the provider answered, as JSON; null until it has answered. */
  action: string | null;
}

export interface PaymentRequest {
  tradeNo: string;
  orderId: string;
  userId: string;
  amountFen: number;
  subject: string;
  method: PayMode;
  clientIp: string;
  device: Device;
  isMobile: boolean;
  /**
   * Absolute URL the gateway calls back: `<base>/api/pay/notify/<provider>`, the base from the
   * setting notify_url or the trusted site origin. "" for providers without callbacks.
   */
  notifyUrl: string;
  /** Absolute URL the customer's browser returns to (display only); "" like notifyUrl. */
  returnUrl: string;
  /** The trusted site origin for links the panel itself serves (sandbox page); "" when unset: relative links. */
  panelOrigin: string;
  now: number;
}

/** What the SPA shows to collect the money (a generalised Xboard 0/1/-1). */
export type PaymentAction =
  | { kind: "redirect"; url: string }
  | { kind: "qrcode"; content: string; payUrl?: string }
  | { kind: "url_scheme"; url: string; fallbackQr?: string }
  | { kind: "crypto"; network: "TRC20"; token: "USDT"; address: string; units: number; expiresAt: number };

/** A gateway's statement about a payment, already authenticated. */
export interface VerifiedPayment {
  tradeNo: string;
  gatewayTradeNo: string;
  amount: { currency: "CNY" | "USDT"; minor: number };
  status: "paid" | "pending" | "closed";
}

export interface NotifyRequest {
  method: string;
  headers: Headers;
  rawBody: string;
  /** Query and form fields merged (form wins), decoded. */
  params: Record<string, string>;
}

export type NotifyVerdict =
  | { ok: true; payment: VerifiedPayment; ack: () => Response }
  | { ok: false; reason: string; ack: () => Response };

export interface PaymentProvider {
  id: ProviderId;
  /** Shown as third_pay_platform. */
  label: string;
  /** The gateway needs absolute notify and return URLs, so the site's own origin must be configured. */
  callbacks: boolean;
  /** Whether this provider is configured to collect a method right now. */
  serves(ctx: AppContext, method: PayMode): Promise<boolean>;
  createPayment(ctx: AppContext, request: PaymentRequest): Promise<PaymentAction>;
  /** Push gateways: authenticate a notification. */
  verifyNotify?(ctx: AppContext, request: NotifyRequest): Promise<NotifyVerdict>;
  /** Active query (the "我已支付" fallback): the gateway's view of a trade, or null when it does not know. */
  queryPayment?(ctx: AppContext, tradeNo: string): Promise<VerifiedPayment | null>;
}

/** Gateway acknowledgements. Failure bodies must not contain "success" or "ok" (payments.md §2). */
export const textAck =
  (body: string, status = 200) =>
  () =>
    new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

/** Where a paid customer's browser lands on the site: 订单记录 with the purchase-success toast. */
export const paidReturnPath = (orderId: string) => `/#/order?payment=success&order=${orderId}`;

const TRADE_NO_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** `P` + yyyyMMddHHmmss (UTC) + 6 random letters/digits: 21 characters, fits every gateway (payments.md §0). */
export function newTradeNo(now = Date.now()): string {
  const stamp = new Date(now).toISOString().replace(/\D/g, "").slice(0, 14);
  const random = crypto.getRandomValues(new Uint8Array(6));
  return `P${stamp}${Array.from(random, (b) => TRADE_NO_CHARS[b % TRADE_NO_CHARS.length]).join("")}`;
}

export function deviceFromUserAgent(userAgent: string, isMobile: boolean): Device {
  if (/MicroMessenger/i.test(userAgent)) return "wechat";
  if (/AlipayClient/i.test(userAgent)) return "alipay";
  if (isMobile || /Android|iPhone|iPad|Mobile/i.test(userAgent)) return "mobile";
  return "pc";
}
