/**
 * The retention job: rows that only matter until a time are deleted once it has passed, so the
 * tables several replicas share stay small. Expired rate-limit windows and online IPs are already
 * ignored by their readers; replicas not seen for a day (killed, never stopped cleanly) go too.
 */
import type { AppContext } from "../context.ts";
import type { Db } from "../db/db.ts";
import { DAY_MS } from "../lib/time.ts";
import { startPeriodic } from "../modules/errors/periodic.ts";

export const RETENTION_INTERVAL_MS = 10 * 60_000;
/** A replica's row stays this long after it was last seen (shown 离线 meanwhile). */
export const DEAD_REPLICA_KEEP_MS = DAY_MS;
/** A webhook delivery stays in the delivery log this long after it was delivered or given up. */
export const WEBHOOK_LOG_KEEP_MS = 7 * DAY_MS;

/** Deletes what has expired at `now`; answers how many rows of each kind went. */
export async function pruneExpired(db: Db, now = Date.now()) {
  const rateCounters = (await db.run("DELETE FROM rate_counters WHERE reset_time <= ?", now)).changes;
  const aliveIps = (await db.run("DELETE FROM alive_ips WHERE expire_time <= ?", now)).changes;
  const replicas = (await db.run("DELETE FROM replicas WHERE last_seen <= ?", now - DEAD_REPLICA_KEEP_MS))
    .changes;
  const webhookDeliveries = (
    await db.run(
      "DELETE FROM webhook_deliveries WHERE (delivered_time > 0 AND delivered_time <= ?1) OR (given_up_time > 0 AND given_up_time <= ?1)",
      now - WEBHOOK_LOG_KEEP_MS,
    )
  ).changes;
  return { rateCounters, aliveIps, replicas, webhookDeliveries };
}

/** Prunes at start and then every intervalMs. */
export async function startRetention(ctx: AppContext, intervalMs = RETENTION_INTERVAL_MS) {
  return await startPeriodic(ctx, "retention", intervalMs, async () => await pruneExpired(ctx.db));
}
