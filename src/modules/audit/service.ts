import { AsyncLocalStorage } from "node:async_hooks";
import { hostname } from "node:os";
import { type Db, likeSql, type SqlValue } from "../../db/db.ts";
import type { AuditPage, AuditRow } from "./schema.ts";

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

/**
 * A diff is one entry per field: `{old, new}` on an edit (changed fields only), `{new}` on a
 * create, `{old}` on a delete. Values are as the back office shows them, secrets already masked.
 */
export type FieldChange = { old?: unknown; new?: unknown };
export type AuditDiff = Record<string, FieldChange>;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The fields of `after` that differ from `before`, as `{old, new}`; `omit` names fields left out. */
export function editDiff(before: object, after: object, omit: readonly string[] = []): AuditDiff {
  const diff: AuditDiff = {};
  const old = before as Record<string, unknown>;
  for (const [field, value] of Object.entries(after)) {
    if (omit.includes(field) || same(old[field], value)) continue;
    diff[field] = { old: old[field] ?? null, new: value };
  }
  return diff;
}

/** Every field of `record` but those in `omit`, each as `{[side]: value}`. */
function fieldsAs(record: object, omit: readonly string[], side: keyof FieldChange): AuditDiff {
  return Object.fromEntries(
    Object.entries(record)
      .filter(([field]) => !omit.includes(field))
      .map(([field, value]) => [field, { [side]: value }]),
  );
}

/** Every field of a created record, as `{new}`. */
export const createDiff = (record: object, omit: readonly string[] = []) => fieldsAs(record, omit, "new");

/** The key fields of a removed record, as `{old}`. */
export const deleteDiff = (record: object, omit: readonly string[] = []) => fieldsAs(record, omit, "old");

/**
 * Records a save of `<area>`: `<area>.create` with every field when there was no record before,
 * else `<area>.update` with the changed fields. An edit that changed nothing writes no row. The
 * target names the record, so its `_id` is left out of the diff.
 */
export async function recordSave(
  db: Db,
  area: string,
  target: string,
  before: object | null,
  after: object,
  omit: readonly string[] = [],
): Promise<void> {
  omit = ["_id", ...omit];
  if (before === null) {
    await recordAudit(db, { action: `${area}.create`, target, diff: createDiff(after, omit) });
    return;
  }
  const diff = editDiff(before, after, omit);
  if (Object.keys(diff).length === 0) return;
  await recordAudit(db, { action: `${area}.update`, target, diff });
}

/** Records the removal of a record of `<area>` (`<area>.delete`), with its key fields. */
export async function recordDelete(
  db: Db,
  area: string,
  target: string,
  record: object,
  omit: readonly string[] = [],
): Promise<void> {
  await recordAudit(db, { action: `${area}.delete`, target, diff: deleteDiff(record, ["_id", ...omit]) });
}

/**
 * Records a change only when a member of staff or an operator makes it (a back-office call or
 * the CLI), not when a customer or the system does: for services both sides share.
 */
export async function recordStaffAudit(db: Db, entry: AuditEntry): Promise<void> {
  if (currentActor() === SYSTEM_ACTOR) return;
  await recordAudit(db, entry);
}

export type { AuditRow as AuditRecord } from "./schema.ts";

export interface AuditFilter {
  /** Part of the actor's name (an email, `cli@host`). */
  who?: string;
  /** The action, or its area ("settings" matches "settings.update"). */
  action?: string;
  /** Part of the target. */
  target?: string;
  /** From this time (ms, inclusive). */
  since?: number;
  /** Until this time (ms, exclusive). */
  until?: number;
}

interface StoredAuditRow {
  id: number;
  time: number;
  actor: string;
  ip: string;
  action: string;
  target: string;
  diff: string;
}

function auditWhere(db: Db, filter: AuditFilter): { sql: string; params: SqlValue[] } {
  const like = likeSql(db);
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  const literal = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
  if (filter.who) {
    clauses.push(`actor ${like} ? ESCAPE '\\'`);
    params.push(`%${literal(filter.who)}%`);
  }
  if (filter.action) {
    clauses.push(`(action = ? OR action ${like} ? ESCAPE '\\')`);
    params.push(filter.action, `${literal(filter.action)}.%`);
  }
  if (filter.target) {
    clauses.push(`target ${like} ? ESCAPE '\\'`);
    params.push(`%${literal(filter.target)}%`);
  }
  if (filter.since !== undefined) {
    clauses.push("time >= ?");
    params.push(Math.floor(filter.since));
  }
  if (filter.until !== undefined) {
    clauses.push("time < ?");
    params.push(Math.floor(filter.until));
  }
  return { sql: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", params };
}

const toRecord = (row: StoredAuditRow): AuditRow => ({ ...row, diff: JSON.parse(row.diff) });

/** One page of the audit log, newest first, and how many rows the filter matches. */
export async function listAudit(
  db: Db,
  filter: AuditFilter,
  page: { offset: number; limit: number },
): Promise<AuditPage> {
  const where = auditWhere(db, filter);
  const total = await db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM audit_log ${where.sql}`,
    ...where.params,
  );
  const rows = await db.all<StoredAuditRow>(
    `SELECT id, time, actor, ip, action, target, diff FROM audit_log ${where.sql} ORDER BY time DESC, id DESC LIMIT ? OFFSET ?`,
    ...where.params,
    page.limit,
    page.offset,
  );
  return { list: rows.map(toRecord), total: Number(total?.n ?? 0) };
}

/** Every row the filter matches, newest first (`ferry audit`). */
export async function allAudit(db: Db, filter: AuditFilter): Promise<AuditRow[]> {
  const where = auditWhere(db, filter);
  const rows = await db.all<StoredAuditRow>(
    `SELECT id, time, actor, ip, action, target, diff FROM audit_log ${where.sql} ORDER BY time DESC, id DESC`,
    ...where.params,
  );
  return rows.map(toRecord);
}
