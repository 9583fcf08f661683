/**
 * `/api/shop/dobuy`: pick the provider for the pay mode, record a payment attempt for the order's
 * remainder, and ask the provider how to collect it. A remainder of zero (wallet or coupon covered
 * everything) is settled at once through markPaid. The open attempt of an unchanged order is shown
 * again rather than asking the gateway anew, and new attempts are rate limited (issue 26); a dobuy
 * on another replica than the one asking the gateway waits for the answer stored on the attempt
 * (issue 28).
 */
import type { AppContext } from "../context.ts";
import { onRollback, tx } from "../db/db.ts";
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
import type { RateRule } from "../rpc/rate-limit.ts";
import { settleWithoutGateway } from "./credit.ts";
import {
  type Device,
  newTradeNo,
  type PaymentAction,
  type PaymentProvider,
  type PaymentRow,
  paidReturnPath,
} from "./provider.ts";
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
  return `${bases.back}${paidReturnPath(orderId)}`;
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

/** New payment attempts an order may make a minute, and an account an hour (issue 26). */
export const PAY_ATTEMPTS_PER_ORDER: RateRule = { name: "pay-attempts-order", max: 5, windowMs: 60_000 };
export const PAY_ATTEMPTS_PER_ACCOUNT: RateRule = {
  name: "pay-attempts-account",
  max: 30,
  windowMs: 60 * 60_000,
};
/**
 * An open attempt of an unchanged order is shown again instead of asking the gateway anew for this
 * long after it was made (gateways keep a QR code payable for 2 hours and more), and a USDT amount
 * while it has REUSE_MIN_LEFT_MS left before it expires.
 */
export const PAYMENT_REUSE_MS = 10 * 60_000;
const REUSE_MIN_LEFT_MS = 5 * 60_000;

/** The provider's answer for a new attempt, which a concurrent dobuy of the same order waits for. */
interface Answer {
  promise: Promise<PaymentAction>;
  resolve(action: PaymentAction): void;
  reject(error: unknown): void;
  /** When it came (0 while it is on its way). */
  cameAt: number;
}

/**
 * Per server: trade number → the provider's answer for the attempt. It is promised inside the
 * transaction that makes the attempt, so nobody on this server can see the attempt before its
 * promise, and kept PAYMENT_REUSE_MS after it came: on PostgreSQL a concurrent dobuy's snapshot may
 * still show the attempt without the answer stored on it. Other replicas have no promise of it and
 * wait for the answer stored on the attempt (answerStoredElsewhere).
 */
const answersByServer = new WeakMap<AppContext, Map<string, Answer>>();

function answersOf(ctx: AppContext): Map<string, Answer> {
  let answers = answersByServer.get(ctx);
  if (!answers) {
    answers = new Map();
    answersByServer.set(ctx, answers);
  }
  return answers;
}

/** Promises the answer for a new attempt (and forgets the answers past their reuse). */
function promiseAnswer(ctx: AppContext, tradeNo: string): Answer {
  const answers = answersOf(ctx);
  const now = Date.now();
  for (const [key, answer] of answers) {
    if (answer.cameAt !== 0 && now - answer.cameAt >= PAYMENT_REUSE_MS) answers.delete(key);
  }
  const { promise, resolve, reject } = Promise.withResolvers<PaymentAction>();
  promise.catch(() => {}); // the dobuy that made the attempt gets the error; nobody else may wait
  const answer: Answer = { promise, resolve, reject, cameAt: 0 };
  answers.set(tradeNo, answer);
  // An attempt whose transaction rolls back (or is run again) was never made.
  onRollback(ctx.db, () => answers.delete(tradeNo));
  return answer;
}

/**
 * How long a dobuy waits for the answer another replica is getting for the attempt it made: longer
 * than any provider takes to answer (EPay's create request times out after 15 s).
 */
export const ELSEWHERE_WAIT_MS = 20_000;
const ELSEWHERE_POLL_MS = 100;

/** An open attempt to show again: its answer, stored, on its way here, or on its way to another replica. */
type Reusable = { action: PaymentAction | Promise<PaymentAction> } | { askedElsewhere: string };

/**
 * The order's open attempt when this dobuy would make the same one again: same provider, pay
 * mode, device and amount, recent, and with the provider's answer stored or on its way. An attempt
 * without its answer and no promise of it here was made by another replica (behind the same load
 * balancer), which is asking the provider now; unless this dobuy already waited for one.
 */
async function reusableAttempt(
  ctx: AppContext,
  orderId: string,
  wanted: { provider: PaymentProvider; payMode: PayMode; device: Device; amountFen: number },
  now: number,
  waited: boolean,
): Promise<Reusable | null> {
  const attempt = await ctx.db.get<PaymentRow>(
    "SELECT * FROM payments WHERE order_id = ? AND status = 'pending' ORDER BY create_time DESC LIMIT 1",
    orderId,
  );
  if (
    !attempt ||
    attempt.provider !== wanted.provider.id ||
    attempt.method !== wanted.payMode ||
    attempt.device !== wanted.device ||
    attempt.amount_fen !== wanted.amountFen ||
    now - attempt.create_time >= PAYMENT_REUSE_MS ||
    (attempt.expire_time !== null && attempt.expire_time - now < REUSE_MIN_LEFT_MS)
  )
    return null;
  if (attempt.action) return { action: JSON.parse(attempt.action) as PaymentAction };
  // Boxed: awaiting the answer here would hold the transaction open while the gateway thinks.
  const answer = answersOf(ctx).get(attempt.trade_no);
  if (answer) return { action: answer.promise };
  return waited ? null : { askedElsewhere: attempt.trade_no };
}

/**
 * Waits (outside any transaction) for the answer another replica stores on its attempt; null when
 * the attempt is closed or paid meanwhile, or no answer comes within ELSEWHERE_WAIT_MS (the replica
 * asking may have died): then this dobuy goes on as if there were no such attempt.
 */
async function answerStoredElsewhere(ctx: AppContext, tradeNo: string): Promise<PaymentAction | null> {
  const deadline = Date.now() + ELSEWHERE_WAIT_MS;
  while (Date.now() < deadline) {
    await Bun.sleep(ELSEWHERE_POLL_MS);
    const attempt = await ctx.db.get<Pick<PaymentRow, "status" | "action">>(
      "SELECT status, action FROM payments WHERE trade_no = ?",
      tradeNo,
    );
    if (attempt?.status !== "pending") return null;
    if (attempt.action) return JSON.parse(attempt.action) as PaymentAction;
  }
  return null;
}

/**
 * Takes one new attempt from the order's and the account's budgets, or refuses with 1005. Counted
 * in the caller's transaction: an attempt rolled back (never made) rolls its count back too.
 */
async function countNewAttempt(ctx: AppContext, userId: string, orderId: string): Promise<void> {
  const taken = await ctx.limiter.reserve([
    { rule: PAY_ATTEMPTS_PER_ORDER, key: orderId },
    { rule: PAY_ATTEMPTS_PER_ACCOUNT, key: userId },
  ]);
  if (!taken) throw new RpcError(Code.tooManyRequests, OrderMsg.tooManyPayAttempts);
}

interface NewAttempt {
  order: OrderRow;
  provider: PaymentProvider;
  tradeNo: string;
  amount: number;
}

/** A new attempt to ask the provider about, with what the request needs. */
interface Asking {
  input: CheckoutInput;
  attempt: NewAttempt;
  bases: CallbackBases | null;
  now: number;
}

/**
 * Asks the provider how to collect a new attempt and stores its answer on the attempt. A failure
 * closes the attempt, is logged, and comes back as the RpcError every waiting dobuy gets.
 */
async function askProvider(ctx: AppContext, { input, attempt, bases, now }: Asking): Promise<PaymentAction> {
  const { order, provider, tradeNo, amount } = attempt;
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
    await ctx.db.run("UPDATE payments SET action = ? WHERE trade_no = ?", JSON.stringify(action), tradeNo);
    return action;
  } catch (error) {
    await ctx.db.run(
      "UPDATE payments SET status = 'closed' WHERE trade_no = ? AND status = 'pending'",
      tradeNo,
    );
    if (error instanceof RpcError) throw error;
    await recordError(ctx.db, `pay ${provider.id} ${payModeText(input.payMode)}`, error);
    if (error instanceof UnsafePayLinkError) throw new RpcError(Code.badInput, OrderMsg.unsafePayLink);
    throw new RpcError(Code.internal, OrderMsg.buyFailed);
  }
}

/** Asks the provider and keeps the promise of the answer, so that a dobuy arriving meanwhile gets the same. */
function startAsking(ctx: AppContext, asking: Asking, answer: Answer): Promise<PaymentAction> {
  askProvider(ctx, asking)
    .then(answer.resolve, answer.reject)
    .finally(() => {
      answer.cameAt = Date.now();
    });
  return answer.promise;
}

export async function checkout(
  ctx: AppContext,
  input: CheckoutInput,
  now = Date.now(),
  waited = false,
): Promise<PayResult> {
  const bases = callbackBases(await ctx.settings.all());
  const prepared = await tx(ctx.db, async () => {
    const order = await ownOrder(ctx.db, input.userId, input.orderId);
    if (order.status === "paied") return { kind: "paid" as const, order };
    if (!isOpen(order)) throw new RpcError(Code.badInput, OrderMsg.notPayable);
    if (order.coupon_use_id) {
      // The coupon may have expired or been limited since it was put on the order (seed: 1017 also on buy).
      const use = await ctx.db.get<{ coupon_id: string }>(
        "SELECT coupon_id FROM coupon_uses WHERE id = ?",
        order.coupon_use_id,
      );
      await checkOrderCoupon(
        ctx.db,
        use ? await findCouponById(ctx.db, use.coupon_id) : null,
        input.userId,
        now,
        1,
      );
    }
    const amount = payableFen(order);
    if (amount === 0) {
      await settleWithoutGateway(ctx, order.id, "wallet", "wallet", now);
      return { kind: "paid" as const, order: (await findOrder(ctx.db, order.id)) as OrderRow };
    }
    const provider = await providerFor(ctx, input.payMode);
    if (!provider) throw new RpcError(Code.badInput, OrderMsg.payModeOff);
    if (provider.callbacks && !bases) return { kind: "refused" as const, provider };
    const wanted = { provider, payMode: input.payMode, device: input.device, amountFen: amount };
    const reused = await reusableAttempt(ctx, order.id, wanted, now, waited);
    if (reused && "askedElsewhere" in reused)
      return { kind: "elsewhere" as const, order, provider, amount, tradeNo: reused.askedElsewhere };
    if (reused) return { kind: "reused" as const, order, provider, amount, action: reused.action };
    await countNewAttempt(ctx, input.userId, order.id);
    const tradeNo = newTradeNo(now);
    const answer = promiseAnswer(ctx, tradeNo);
    // A new attempt supersedes the older ones (EPay refuses a reused number with other parameters).
    await closePendingPayments(ctx.db, order.id);
    await ctx.db.run(
      `INSERT INTO payments (trade_no, order_id, user_id, provider, method, amount_fen, device, client_ip, third_pay_platform, create_time)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    await ctx.db.run(
      "UPDATE orders SET pay_mode = ?, device = ? WHERE id = ?",
      input.payMode,
      input.device,
      order.id,
    );
    return { kind: "new" as const, order, provider, amount, tradeNo, answer };
  });
  switch (prepared.kind) {
    case "paid":
      return paidResult(prepared.order, "钱包");
    case "refused":
      // The customer learns that the admin must act; the admin learns why from the error log.
      await recordError(
        ctx.db,
        `pay ${prepared.provider.id} ${payModeText(input.payMode)}`,
        new Error(
          "未设置站点地址（site_url）：支付网关的回调地址无从生成，已拒绝创建支付。请在配置管理中填写站点地址",
        ),
      );
      throw new RpcError(Code.badInput, OrderMsg.noSiteOrigin);
    case "reused":
      return toPayResult(prepared.order, prepared.provider, prepared.amount, await prepared.action);
    case "elsewhere": {
      const started = Date.now();
      const action = await answerStoredElsewhere(ctx, prepared.tradeNo);
      if (action) return toPayResult(prepared.order, prepared.provider, prepared.amount, action);
      return await checkout(ctx, input, now + (Date.now() - started), true);
    }
    case "new": {
      const action = await startAsking(ctx, { input, attempt: prepared, bases, now }, prepared.answer);
      return toPayResult(prepared.order, prepared.provider, prepared.amount, action);
    }
  }
}
