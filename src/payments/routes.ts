/**
 * Payment HTTP edges that are not envelope calls: gateway notifications
 * (`/api/pay/notify/<provider>`, GET and POST, no auth: the signature is the auth) and the sandbox
 * cashier page.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { readBodyText } from "../lib/http.ts";
import { findOrder } from "../modules/order/service.ts";
import { findPayment, markPaid } from "./credit.ts";
import { logPaymentEvent } from "./events.ts";
import { paidReturnPath, textAck } from "./provider.ts";
import { providerById } from "./registry.ts";
import { SANDBOX_CSS, SANDBOX_CSS_PATH, sandboxPage } from "./sandbox.ts";

/** A gateway notification is a few hundred bytes of form fields; anything near this is not one. */
export const MAX_NOTIFY_BYTES = 64 * 1024;

/** Query and form fields merged (form wins). */
function readParams(url: URL, request: Request, rawBody: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [key, value] of url.searchParams) params[key] = value;
  const type = request.headers.get("content-type") ?? "";
  if (type.includes("application/x-www-form-urlencoded")) {
    for (const [key, value] of new URLSearchParams(rawBody)) params[key] = value;
  }
  return params;
}

export async function handleNotify(ctx: AppContext, providerId: string, request: Request): Promise<Response> {
  const provider = providerById(providerId);
  const url = new URL(request.url);
  const body =
    request.method === "GET"
      ? { ok: true as const, text: "" }
      : await readBodyText(request, MAX_NOTIFY_BYTES);
  // A sender that hung up gets no answer and leaves no row; an oversized body is refused unread.
  if (!body.ok) return textAck("fail", body.reason === "too_large" ? 413 : 400)();
  const rawBody = body.text;
  const raw = `${request.method} ${url.search} ${rawBody}`;
  if (!provider?.verifyNotify) {
    // One source for every unknown name, so made-up names share one cap (events.ts).
    await logPaymentEvent(ctx.db, {
      provider: "unknown",
      result: "rejected",
      reason: `no such provider ${providerId.slice(0, 40)}`,
      raw,
    });
    return textAck("fail", 404)();
  }
  const params = readParams(url, request, rawBody);
  const verdict = await provider.verifyNotify(ctx, {
    method: request.method,
    headers: request.headers,
    rawBody,
    params,
  });
  if (!verdict.ok) {
    await logPaymentEvent(ctx.db, {
      provider: provider.id,
      tradeNo: params.out_trade_no ?? params.trade_no ?? "",
      result: "rejected",
      reason: verdict.reason,
      raw,
    });
    return verdict.ack();
  }
  // Authentic: whatever markPaid decides is logged there, and the gateway gets its ACK so it stops retrying.
  await markPaid(ctx, { ...verdict.payment, provider: provider.id, raw, source: "notify" });
  return verdict.ack();
}

export function paymentRoutes(ctx: AppContext) {
  return new Elysia()
    .get("/api/pay/notify/:provider", ({ params, request }) => handleNotify(ctx, params.provider, request))
    .post("/api/pay/notify/:provider", ({ params, request }) => handleNotify(ctx, params.provider, request), {
      parse: "none",
    })
    .get(
      SANDBOX_CSS_PATH,
      () =>
        new Response(SANDBOX_CSS, {
          headers: { "content-type": "text/css; charset=utf-8", "cache-control": "no-cache" },
        }),
    )
    .get("/pay/sandbox/:tradeNo", async ({ params, request }) => {
      const payment = await findPayment(ctx.db, params.tradeNo);
      const visible = payment?.provider === "sandbox" ? payment : null;
      const subject = visible ? ((await findOrder(ctx.db, visible.order_id))?.desc ?? "") : "";
      const done = new URL(request.url).searchParams.get("done") === "1";
      // Paid: back to the site as a real gateway's return URL sends the customer (issue 26).
      if (done && visible?.status === "paid")
        return new Response(null, { status: 303, headers: { location: paidReturnPath(visible.order_id) } });
      return new Response(sandboxPage(visible, subject, done), {
        status: visible ? 200 : 404,
        headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
      });
    });
}
