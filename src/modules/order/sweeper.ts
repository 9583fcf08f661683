/**
 * The server's order sweeper: every ten minutes it cancels the orders left unpaid for a day
 * (cancelAbandonedOrders), giving back their coupon use and wallet part. A failing round goes to
 * the error log as "order sweeper".
 */
import type { AppContext } from "../../context.ts";
import { startPeriodic } from "../errors/periodic.ts";
import { cancelAbandonedOrders } from "./service.ts";

export const ORDER_SWEEP_INTERVAL_MS = 10 * 60_000;

export async function startOrderSweeper(ctx: AppContext, intervalMs = ORDER_SWEEP_INTERVAL_MS) {
  return await startPeriodic(ctx, "order sweeper", intervalMs, async () => await cancelAbandonedOrders(ctx));
}
