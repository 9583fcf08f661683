/**
 * The server's trial-traffic sweeper: every minute it expires the grants that are due and warns
 * about those expiring within a day. Node reports and user lists also expire due grants in their
 * own transaction, so the minute only bounds how late a bell notice or an idle customer's balance is.
 */
import type { AppContext } from "../../context.ts";
import { recordError } from "../errors/service.ts";
import { sweepTrials } from "./service.ts";

export const TRIAL_SWEEP_INTERVAL_MS = 60_000;

export function startTrialSweeper(ctx: AppContext, intervalMs = TRIAL_SWEEP_INTERVAL_MS) {
  const round = () => {
    try {
      sweepTrials(ctx);
    } catch (error) {
      recordError(ctx.db, "trial sweeper", error);
    }
  };
  const timer = setInterval(round, intervalMs);
  round();
  return {
    async stop() {
      clearInterval(timer);
    },
  };
}
