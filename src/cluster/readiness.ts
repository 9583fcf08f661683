/**
 * `/readyz`, for a load balancer: 200 `ready` only while the database answers (within a short
 * timeout) with the schema version this build migrated it to; 503 otherwise, so the balancer
 * sends requests elsewhere. `/healthz` stays the liveness answer (server.ts).
 */
import type { Db } from "../db/db.ts";

export const READY_TIMEOUT_MS = 2_000;

const notReady = (reason: string) =>
  new Response(reason, { status: 503, headers: { "cache-control": "no-store", "retry-after": "1" } });

/**
 * The answer: `ready`; or 503 `database unreachable` (no answer, or not within timeoutMs); or 503
 * naming the schema version when another build migrated the database since (an older replica
 * during a rolling upgrade stops taking requests; it refuses to start again on that database).
 */
export async function readiness(
  db: Db,
  schemaVersion: number,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<Response> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const row = await Promise.race([
      db.get<{ version: number | null }>("SELECT MAX(version) AS version FROM schema_migrations"),
      timeout,
    ]);
    if (row === "timeout") return notReady("database unreachable");
    const version = row?.version ?? 0;
    if (version !== schemaVersion) {
      return notReady(`database schema version ${version}, this build's ${schemaVersion}`);
    }
    return new Response("ready", { headers: { "cache-control": "no-store" } });
  } catch {
    return notReady("database unreachable");
  } finally {
    clearTimeout(timer);
  }
}
