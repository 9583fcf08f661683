/**
 * The sandbox provider for demos and tests: off unless the setting sandbox_pay or FERRY_SANDBOX_PAY=1
 * turns it on. Its "gateway" is a page on the panel itself, visibly marked 沙箱, whose button
 * sends a notification through the same notify route and markPaid as a real gateway. It collects
 * alipay / wxpay when the setting names it, and, with the variable on, wherever no real gateway
 * does (registry.ts providerFor), so a fresh demo install can sell without any setting.
 */
import type { AppContext } from "../context.ts";
import { escapeHtml } from "../lib/html.ts";
import { formatYuan, parseYuan } from "../lib/money.ts";
import type { PaymentRow } from "./provider.ts";
import { type PaymentProvider, textAck } from "./provider.ts";

/** The variable that turns the sandbox on for the whole process (demos, tests). */
export const SANDBOX_ENV = "FERRY_SANDBOX_PAY";

export const sandboxByEnvironment = (): boolean => process.env[SANDBOX_ENV] === "1";

export async function sandboxEnabled(ctx: AppContext): Promise<boolean> {
  return (await ctx.settings.get("sandbox_pay")) || sandboxByEnvironment();
}

export const sandboxProvider: PaymentProvider = {
  id: "sandbox",
  label: "沙箱支付",
  callbacks: false,
  async serves(ctx, method) {
    if (!(await sandboxEnabled(ctx))) return false;
    const settings = await ctx.settings.all();
    if (method === "alipay") return settings.alipay === "sandbox";
    return method === "wxpay" && settings.wxpay === "sandbox";
  },
  async createPayment(_ctx, request) {
    const url = `${request.panelOrigin}/pay/sandbox/${request.tradeNo}`;
    return { kind: "qrcode", content: url, payUrl: url };
  },
  async verifyNotify(ctx, request) {
    if (!(await sandboxEnabled(ctx)))
      return { ok: false, reason: "sandbox is off", ack: textAck("fail", 403) };
    const tradeNo = request.params.trade_no ?? "";
    const fen = parseYuan(request.params.money ?? "");
    if (!tradeNo || fen === null)
      return { ok: false, reason: "missing trade_no or money", ack: textAck("fail", 400) };
    return {
      ok: true,
      payment: {
        tradeNo,
        gatewayTradeNo: `SANDBOX-${tradeNo}`,
        amount: { currency: "CNY", minor: fen },
        status: "paid",
      },
      ack: () =>
        new Response(null, {
          status: 303,
          headers: { location: `/pay/sandbox/${encodeURIComponent(tradeNo)}?done=1` },
        }),
    };
  },
};

/** The cashier page's style, a file of its own because the Content-Security-Policy allows no inline style. */
export const SANDBOX_CSS_PATH = "/pay/sandbox.css";
export const SANDBOX_CSS = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1f2937}
.banner{background:#fef3c7;border:2px dashed #d97706;color:#92400e;padding:.75rem;border-radius:.5rem;font-weight:700}
button{font-size:1rem;padding:.6rem 1.4rem;background:#2563eb;color:#fff;border:0;border-radius:.4rem;cursor:pointer}
.ok{color:#047857;font-weight:700}
`;

/** The sandbox cashier page. */
export function sandboxPage(payment: PaymentRow | null, subject: string, done: boolean): string {
  const body = !payment
    ? "<p>支付单不存在</p>"
    : payment.status === "paid"
      ? `<p class="ok">支付完成，请回到商店页面</p>`
      : payment.status === "closed"
        ? "<p>该支付单已关闭</p>"
        : done
          ? "<p>支付未成功：订单可能已取消</p>"
          : `<p>商品：${escapeHtml(subject)}</p>
<p>金额：<strong>¥${formatYuan(payment.amount_fen)}</strong></p>
<p>交易号：${escapeHtml(payment.trade_no)}</p>
<form method="post" action="/api/pay/notify/sandbox">
<input type="hidden" name="trade_no" value="${escapeHtml(payment.trade_no)}">
<input type="hidden" name="money" value="${formatYuan(payment.amount_fen)}">
<button type="submit">确认支付（沙箱）</button>
</form>`;
  return `<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>沙箱支付 - 飞渡</title><link rel="icon" href="/logo.svg">
<link rel="stylesheet" href="${SANDBOX_CSS_PATH}"></head>
<body><div class="banner" role="alert">沙箱环境：仅用于演示和测试，不会真实扣款</div>
<h1>沙箱支付</h1>${body}</body></html>`;
}
