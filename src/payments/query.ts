/**
 * The active query fallback (payments.md §0): notifications get lost, so while the customer's
 * page polls `/api/shop/trade_status`, an open order's gateway payment is asked about directly.
 * At most once per QUERY_EVERY_MS per trade across all replicas (the replica that moves the
 * payment's query_time asks), and only once the payment is QUERY_AFTER_MS old (the notification
 * usually wins); a paid answer goes through the same markPaid.
 */
import type { AppContext } from "../context.ts";
import { recordError } from "../modules/errors/service.ts";
import { markPaid } from "./credit.ts";
import type { PaymentProvider, PaymentRow } from "./provider.ts";
import { providerById } from "./registry.ts";

export const QUERY_AFTER_MS = 10_000;
export const QUERY_EVERY_MS = 15_000;

/** Claims the trade's next gateway query: true for the one caller (on any replica) whose claim moved query_time. */
async function claimQuerySlot(ctx: AppContext, tradeNo: string, now: number): Promise<boolean> {
  const claimed = await ctx.db.run(
    "UPDATE payments SET query_time = ?1 WHERE trade_no = ?2 AND (query_time IS NULL OR query_time <= ?3)",
    now,
    tradeNo,
    now - QUERY_EVERY_MS,
  );
  return claimed.changes === 1;
}

/** Asks the gateway about the user's order's latest pending payment when one is due. Never rejects. */
export async function queryOpenPayment(
  ctx: AppContext,
  userId: string,
  orderId: string,
  now = Date.now(),
): Promise<void> {
  const payment = await ctx.db.get<Pick<PaymentRow, "trade_no" | "provider" | "create_time">>(
    `SELECT trade_no, provider, create_time FROM payments
       WHERE order_id = ? AND user_id = ? AND status = 'pending' ORDER BY create_time DESC LIMIT 1`,
    orderId,
    userId,
  );
  if (!payment || now - payment.create_time < QUERY_AFTER_MS) return;
  const provider = providerById(payment.provider);
  if (!provider?.queryPayment || !(await claimQuerySlot(ctx, payment.trade_no, now))) return;
  await queryAndCredit(ctx, provider, payment.trade_no);
}

async function queryAndCredit(ctx: AppContext, provider: PaymentProvider, tradeNo: string): Promise<void> {
  try {
    const answer = await provider.queryPayment?.(ctx, tradeNo);
    if (answer?.status !== "paid") return;
    await markPaid(ctx, { ...answer, provider: provider.id, raw: JSON.stringify(answer), source: "query" });
  } catch (error) {
    // One source per gateway, not per payment: ever-new sources would each get a budget (errors/service.ts).
    await recordError(ctx.db, `query ${provider.id}`, error);
  }
}
