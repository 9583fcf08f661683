import type { AppContext } from "../../context.ts";
import { recordError } from "./service.ts";

/**
 * Runs `round` now and then every `intervalMs` (the server's sweepers, probes and backups). A tick
 * that comes while the previous round is still running is skipped: rounds await the database and
 * the network, and two at once would do the same work twice (two backups into one file). A failing
 * round goes to the error log under `name` and the next one runs as planned; stop() waits for a
 * round still running.
 */
export async function startPeriodic(ctx: AppContext, name: string, intervalMs: number, round: () => unknown) {
  let running: Promise<void> | null = null;
  const run = () => {
    if (running) return;
    running = (async () => {
      try {
        await round();
      } catch (error) {
        await recordError(ctx.db, name, error);
      }
    })().finally(() => {
      running = null;
    });
  };
  const timer = setInterval(run, intervalMs);
  run();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
