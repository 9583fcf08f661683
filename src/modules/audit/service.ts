import { AsyncLocalStorage } from "node:async_hooks";
import { hostname } from "node:os";
import type { Db } from "../../db/db.ts";

/** Who is making a change: an account (email and id) from a back-office call, or an operator's CLI. */
export interface Actor {
  /** The account's email, or `cli@<host>`, or "system". */
  name: string;
  userId: string | null;
  ip: string;
}

export const SYSTEM_ACTOR: Actor = { name: "system", userId: null, ip: "" };

const actorScope = new AsyncLocalStorage<Actor>();
let processActor: Actor = SYSTEM_ACTOR;

/** Runs `fn` as `actor`: every audit row written inside names it (runCall wraps staff calls). */
export function runAs<T>(actor: Actor, fn: () => T): T {
  return actorScope.run(actor, fn);
}

/** The actor of a process that is one operator's command (the CLI): `cli@<host>`. */
export function actAsCli(): void {
  processActor = { name: `cli@${hostname()}`, userId: null, ip: "" };
}

export function currentActor(): Actor {
  return actorScope.getStore() ?? processActor;
}

export interface AuditEntry {
  /** "<area>.<verb>", for example "settings.update" or "combo.create". */
  action: string;
  /** What the change was made to (an id, an email, a key); "" when there is no one target. */
  target?: string;
  /** The change, already masked: secrets never reach the audit log. */
  diff?: Record<string, unknown>;
}

/**
 * Writes one audit row, in the transaction of the change it describes: a change that rolls back
 * leaves no row, and a row never exists without its change. Refuses to run outside a transaction.
 */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  if (!db.inTransaction)
    throw new Error(`audit row ${entry.action} written outside the change's transaction`);
  const actor = currentActor();
  await db.run(
    "INSERT INTO audit_log (time, actor, actor_id, ip, action, target, diff) VALUES (?, ?, ?, ?, ?, ?, ?)",
    Date.now(),
    actor.name,
    actor.userId,
    actor.ip,
    entry.action,
    entry.target ?? "",
    JSON.stringify(entry.diff ?? {}),
  );
}
