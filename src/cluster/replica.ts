/**
 * This process as one replica of the panel (issue 28): a random id per start, registered in
 * `replicas` at start, its `last_seen` renewed by a heartbeat every few seconds (the database's
 * clock), its row deleted at a clean stop. A killed replica's row stays, ages past OFFLINE_AFTER_MS
 * (shown 离线) and is deleted by the retention job after a day.
 */
import { hostname } from "node:os";
import pkg from "../../package.json" with { type: "json" };
import type { AppContext } from "../context.ts";
import { type Db, nowMsSql } from "../db/db.ts";
import { storageFailure } from "../db/write-health.ts";
import { recordError } from "../modules/errors/service.ts";
import { processAlive } from "../ops/pid-file.ts";
import { randomHex } from "../rpc/ids.ts";
import type { ReplicaView } from "./schema.ts";

/** How often a replica renews its `last_seen`. */
export const HEARTBEAT_MS = 5_000;
/** A replica not seen for longer than this is shown 离线 (six heartbeats missed). */
export const OFFLINE_AFTER_MS = 30_000;

export interface Replica {
  id: string;
  host: string;
  port: number;
  pid: number;
  version: string;
}

/** This process, listening on `port`, under a new random id. */
export function thisReplica(port: number): Replica {
  return { id: randomHex(8), host: hostname(), port, pid: process.pid, version: pkg.version };
}

/** The database's clock, in epoch milliseconds. */
export async function databaseNow(db: Db): Promise<number> {
  return (await db.get<{ now: number }>(`SELECT ${nowMsSql(db.engine)} AS now`))?.now ?? Date.now();
}

/** Registers the replica, or renews its `last_seen` (registering it again if its row was deleted). */
export async function announceReplica(db: Db, replica: Replica): Promise<void> {
  const now = nowMsSql(db.engine);
  await db.run(
    `INSERT INTO replicas (id, host, port, pid, version, started_time, last_seen)
       VALUES (?, ?, ?, ?, ?, ${now}, ${now})
       ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen`,
    replica.id,
    replica.host,
    replica.port,
    replica.pid,
    replica.version,
  );
}

/** A clean stop: the replica's row goes (its leases are released by their supervisors). */
export async function removeReplica(db: Db, id: string): Promise<void> {
  await db.run("DELETE FROM replicas WHERE id = ?", id);
}

/**
 * SQLite only, at start: the rows and leases of earlier processes on this machine that are no
 * longer running (a server killed and started again), so the new one takes its jobs at once
 * instead of waiting for the dead one's leases to expire. On PostgreSQL a pid seen from another
 * container could look dead while it runs, so there leases always run out by their time.
 */
export async function forgetDeadLocalReplicas(db: Db, host: string): Promise<number> {
  if (db.engine !== "sqlite") return 0;
  const rows = await db.all<{ id: string; pid: number }>("SELECT id, pid FROM replicas WHERE host = ?", host);
  const dead = rows.filter((row) => !processAlive(row.pid));
  for (const { id } of dead) {
    await db.run("DELETE FROM leases WHERE holder = ?", id);
    await removeReplica(db, id);
  }
  return dead.length;
}

/** Renews `last_seen` every intervalMs; a failed beat is logged (see below) and the next one runs as planned. */
export function startHeartbeat(ctx: AppContext, replica: Replica, intervalMs = HEARTBEAT_MS) {
  let beating: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (beating) return;
    beating = announceReplica(ctx.db, replica)
      // A database away is told by the requests that fail and /healthz; anything else is unexpected.
      .catch((error) => (storageFailure(error) ? undefined : recordError(ctx.db, "replica heartbeat", error)))
      .finally(() => {
        beating = null;
      });
  }, intervalMs);
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await beating;
    },
  };
}

/**
 * Every replica in the table, oldest first, with the jobs whose leases it holds now; `offline`
 * when it has not been seen for OFFLINE_AFTER_MS by the database's clock.
 */
export async function listReplicas(db: Db): Promise<ReplicaView[]> {
  const now = await databaseNow(db);
  const rows = await db.all<Omit<ReplicaView, "offline" | "leases">>(
    `SELECT id, host, port, pid, version, started_time AS "startedAt", last_seen AS "lastSeen"
       FROM replicas ORDER BY started_time, id`,
  );
  const leases = await db.all<{ job: string; holder: string }>(
    "SELECT job, holder FROM leases WHERE expire_time > ? ORDER BY job",
    now,
  );
  return rows.map((row) => ({
    ...row,
    offline: now - row.lastSeen > OFFLINE_AFTER_MS,
    leases: leases.filter((lease) => lease.holder === row.id).map((lease) => lease.job),
  }));
}
