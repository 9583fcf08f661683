import type { AppContext } from "../../context.ts";
import { recordError } from "./service.ts";

/**
 * Runs `round` now and then every `intervalMs` (the server's sweepers and probes). A failing round
 * goes to the error log under `name` and the next one runs as planned; stop() waits for a round
 * still running.
 */
export async function startPeriodic(ctx: AppContext, name: string, intervalMs: number, round: () => unknown) {
  let running: Promise<unknown> = Promise.resolve();
  const run = async () => {
    try {
      running = Promise.resolve(round()).catch(async (error) => await recordError(ctx.db, name, error));
    } catch (error) {
      await recordError(ctx.db, name, error);
    }
  };
  const timer = setInterval(run, intervalMs);
  await run();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
