import type { AppContext } from "../../context.ts";
import { recordError } from "./service.ts";

/**
 * Runs `round` now and then every `intervalMs` (the server's sweepers, probes and backups). A tick
 * that comes while the previous round is still running is skipped: rounds await the database and
 * the network, and two at once would do the same work twice (two backups into one file). A failing
 * round goes to the error log under `name` and the next one runs as planned. stop() aborts the
 * signal given to the round (a round that can stop early, a backup's pg_dump, does) and waits for
 * it to end.
 */
export async function startPeriodic(
  ctx: AppContext,
  name: string,
  intervalMs: number,
  round: (signal: AbortSignal) => unknown,
) {
  const abort = new AbortController();
  let running: Promise<void> | null = null;
  const run = () => {
    if (running || abort.signal.aborted) return;
    running = (async () => {
      try {
        await round(abort.signal);
      } catch (error) {
        if (!abort.signal.aborted) await recordError(ctx.db, name, error);
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
      abort.abort();
      await running;
    },
  };
}
