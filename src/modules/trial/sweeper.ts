/**
 * The server's trial-traffic sweeper: every minute it expires the grants that are due and warns
 * about those expiring within a day. Node reports and user lists also expire due grants in their
 * own transaction, so the minute only bounds how late a bell notice or an idle customer's balance is.
 */
import type { AppContext } from "../../context.ts";
import { startPeriodic } from "../errors/periodic.ts";
import { sweepTrials } from "./service.ts";

export const TRIAL_SWEEP_INTERVAL_MS = 60_000;

export async function startTrialSweeper(ctx: AppContext, intervalMs = TRIAL_SWEEP_INTERVAL_MS) {
  return await startPeriodic(ctx, "trial sweeper", intervalMs, async () => await sweepTrials(ctx));
}
