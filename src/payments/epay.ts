/**
 * EPay (彩虹易支付 v1, MD5) for alipay and wxpay: payments.md §2. Payments are created
 * server-to-server through `mapi.php` so the panel shows the QR itself; notifications arrive as
 * signed GETs; `api.php?act=order` answers the active query.
 */
import { createHash } from "node:crypto";
import type { AppContext } from "../context.ts";
import { formatYuan, parseYuan } from "../lib/money.ts";
import { outboundFetch } from "../lib/outbound.ts";
import { cutUtf8 } from "../lib/text.ts";
import { Code, RpcError } from "../rpc/codes.ts";
import { sameSecret } from "../rpc/ids.ts";
import { type PaymentAction, type PaymentProvider, type PaymentRequest, textAck } from "./provider.ts";

const CREATE_TIMEOUT_MS = 15_000;
const QUERY_TIMEOUT_MS = 5_000;
/** EPay cuts `name` at 127 bytes. */
const NAME_MAX_BYTES = 127;

/**
 * The EPay sign: every parameter except sign, sign_type and empty values, sorted by key, joined
 * as raw `k=v&…`, the key appended directly, MD5 lowercase hex.
 */
export function epaySign(params: Record<string, string>, key: string): string {
  const joined = Object.keys(params)
    .filter((k) => k !== "sign" && k !== "sign_type" && params[k] !== "")
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join("&");
  return createHash("md5")
    .update(joined + key, "utf8")
    .digest("hex");
}

export function epaySignMatches(params: Record<string, string>, key: string): boolean {
  return sameSecret((params.sign ?? "").toLowerCase(), epaySign(params, key));
}

export interface EpayConfig {
  /** Ends with "/". */
  apiUrl: string;
  pid: string;
  key: string;
}

export async function epayConfig(ctx: AppContext): Promise<EpayConfig | null> {
  const settings = await ctx.settings.all();
  const apiUrl = settings.epay_url.trim();
  const pid = settings.epay_pid.trim();
  const key = settings.epay_key.trim();
  if (!apiUrl || !pid || !key) return null;
  return { apiUrl: apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`, pid, key };
}

/** The signed parameters of submit.php / mapi.php (mapi adds clientip and device). */
function orderParams(config: EpayConfig, request: PaymentRequest): Record<string, string> {
  return {
    pid: config.pid,
    type: request.method,
    out_trade_no: request.tradeNo,
    notify_url: request.notifyUrl,
    return_url: request.returnUrl,
    name: cutUtf8(request.subject, NAME_MAX_BYTES),
    money: formatYuan(request.amountFen),
  };
}

function signed(params: Record<string, string>, key: string): Record<string, string> {
  return { ...params, sign: epaySign(params, key), sign_type: "MD5" };
}

interface MapiReply {
  code?: number | string;
  msg?: string;
  trade_no?: string;
  payurl?: string;
  qrcode?: string;
  urlscheme?: string;
  html?: string;
}

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

function actionFor(
  reply: MapiReply,
  config: EpayConfig,
  request: PaymentRequest,
  submitParams: Record<string, string>,
): PaymentAction {
  const mobile = request.isMobile || request.device !== "pc";
  if (nonEmpty(reply.qrcode)) return { kind: "qrcode", content: reply.qrcode };
  if (nonEmpty(reply.payurl))
    return mobile
      ? { kind: "redirect", url: reply.payurl }
      : { kind: "qrcode", content: reply.payurl, payUrl: reply.payurl };
  if (nonEmpty(reply.urlscheme)) return { kind: "url_scheme", url: reply.urlscheme };
  if (nonEmpty(reply.html)) {
    // Forks that answer with a page: send the customer to the same order on the cashier instead
    // (submit.php takes identical parameters, so EPay sees no "支付参数有变化").
    const url = new URL("submit.php", config.apiUrl);
    url.search = new URLSearchParams(signed(submitParams, config.key)).toString();
    return { kind: "redirect", url: url.toString() };
  }
  throw new Error("EPay mapi.php answered code 1 without payurl, qrcode, urlscheme or html");
}

/** IPv4-mapped IPv6 (::ffff:1.2.3.4) as the plain IPv4 address gateways expect. */
const plainIp = (ip: string) => ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "") || "127.0.0.1";

async function createPayment(ctx: AppContext, request: PaymentRequest): Promise<PaymentAction> {
  const config = await epayConfig(ctx);
  if (!config) throw new Error("EPay is not configured (epay_url, epay_pid, epay_key)");
  const submitParams = orderParams(config, request);
  const body = new URLSearchParams(
    signed({ ...submitParams, clientip: plainIp(request.clientIp), device: request.device }, config.key),
  );
  const response = await outboundFetch(
    new URL("mapi.php", config.apiUrl),
    {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body,
      signal: AbortSignal.timeout(CREATE_TIMEOUT_MS),
    },
    ctx.allowPrivateUrls,
  );
  const text = await response.text();
  if (!response.ok) throw new Error(`EPay mapi.php answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  let reply: MapiReply;
  try {
    reply = JSON.parse(text) as MapiReply;
  } catch {
    throw new Error(`EPay mapi.php answered something other than JSON: ${text.slice(0, 200)}`);
  }
  if (Number(reply.code) !== 1) {
    // The gateway refused the order and said why: the customer sees the reason (1000, not 999).
    const reason = (reply.msg ?? "").trim().slice(0, 100) || `code ${String(reply.code)}`;
    throw new RpcError(Code.badInput, `支付网关错误: ${reason}`);
  }
  return actionFor(reply, config, request, submitParams);
}

/** Failure acks must not contain "success" (彩虹 counts any body containing it as delivered). */
const ackSuccess = textAck("success");
const ackFail = textAck("fail");

export const epayProvider: PaymentProvider = {
  id: "epay",
  label: "易支付",
  callbacks: true,
  serves: async (ctx, method) =>
    (method === "alipay" || method === "wxpay") &&
    (await ctx.settings.get(method)) === "epay" &&
    (await epayConfig(ctx)) !== null,
  createPayment,
  // Late notifications are still verified when alipay/wxpay have since moved away from EPay.
  async verifyNotify(ctx, request) {
    const config = await epayConfig(ctx);
    if (!config) return { ok: false, reason: "EPay is not configured", ack: ackFail };
    const params = request.params;
    if (!epaySignMatches(params, config.key)) return { ok: false, reason: "bad signature", ack: ackFail };
    if (params.pid !== config.pid)
      return { ok: false, reason: `pid ${params.pid ?? ""} is not ours`, ack: ackFail };
    if (params.trade_status !== "TRADE_SUCCESS")
      return { ok: false, reason: `trade_status ${params.trade_status ?? ""}`, ack: ackFail };
    const fen = parseYuan(params.money ?? "");
    if (fen === null || !params.out_trade_no || !params.trade_no)
      return { ok: false, reason: "missing out_trade_no, trade_no or money", ack: ackFail };
    return {
      ok: true,
      payment: {
        tradeNo: params.out_trade_no,
        gatewayTradeNo: params.trade_no,
        amount: { currency: "CNY", minor: fen },
        status: "paid",
      },
      ack: ackSuccess,
    };
  },
  async queryPayment(ctx, tradeNo) {
    const config = await epayConfig(ctx);
    if (!config) return null;
    // The key travels in the URL (that is the protocol): it must never reach a log or an error text.
    const url = new URL("api.php", config.apiUrl);
    url.search = new URLSearchParams({
      act: "order",
      pid: config.pid,
      key: config.key,
      out_trade_no: tradeNo,
    }).toString();
    let response: Response;
    try {
      response = await outboundFetch(
        url,
        { signal: AbortSignal.timeout(QUERY_TIMEOUT_MS) },
        ctx.allowPrivateUrls,
      );
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new Error(`EPay order query failed: ${reason.split(config.key).join("***")}`);
    }
    if (!response.ok) throw new Error(`EPay order query answered HTTP ${response.status}`);
    const reply = (await response.json()) as {
      code?: number | string;
      trade_no?: string;
      out_trade_no?: string;
      money?: string | number;
      status?: number | string;
    };
    if (Number(reply.code) !== 1 || reply.out_trade_no !== tradeNo || !nonEmpty(reply.trade_no)) return null;
    const fen = parseYuan(String(reply.money ?? ""));
    if (fen === null) throw new Error(`EPay order query: unreadable money ${String(reply.money)}`);
    return {
      tradeNo,
      gatewayTradeNo: reply.trade_no,
      amount: { currency: "CNY", minor: fen },
      status: Number(reply.status) === 1 ? "paid" : "pending",
    };
  },
};
