/**
 * Which users a node may report (issue 11 §5): one stolen node token must not reach every
 * customer's balance, so a node charges only users it was given.
 *
 * The rule, exactly: a user is admitted to a node's report while they are on the last user list
 * the node was served (GET user, answered 200 or 304), and for ADMISSION_GRACE_INTERVALS × (push
 * interval + pull interval) after the node was first served a list without them. The node learns
 * of a removal at that pull; its last counters for the user follow with the next push (our agent
 * reads them right after taking the user off the core; XrayR and V2bX with their next push), and
 * the factor 2 lets one failed push be retried. While a node does not pull (say the panel is
 * unreachable) its list does not change, so reports it spooled meanwhile are still admitted.
 *
 * Lists are kept as rows per node and user, and only a changed list (a new ETag) is compared, so
 * a poll that changes nothing writes nothing.
 *
 * A node that was running when the panel was upgraded to these rules has no remembered list until
 * its next pull; until then, and for at most 15 minutes after the upgrade (agents.admit_all_until,
 * migration 006), it charges any user, as it did before, so the upgrade loses no traffic.
 */
import type { AppContext } from "../../context.ts";
import { inTurn, jsonValuesSql, tx } from "../../db/db.ts";
import type { AgentRow } from "../node-record/service.ts";

const ADMISSION_GRACE_INTERVALS = 2;

export async function admissionGraceMs(ctx: AppContext): Promise<number> {
  const seconds =
    (await ctx.settings.get("trafficStasticDuration")) + (await ctx.settings.get("updateV2rayDuration"));
  return ADMISSION_GRACE_INTERVALS * seconds * 1000;
}

/**
 * The turn (inTurn, an advisory lock on PostgreSQL) node reports and the records of served lists
 * take: both read a node's admitted customers and write what the others read.
 */
export const NODE_REPORT_TURN = 0x6e6f6465; // "node"

/** The node now holds the list `userNos` with this ETag (it was served it, or answered 304 for it). */
export async function recordServedList(
  ctx: AppContext,
  row: Pick<AgentRow, "id" | "served_users_etag">,
  userNos: number[],
  etag: string,
  now: number,
): Promise<void> {
  if (row.served_users_etag === etag) return;
  const db = ctx.db;
  const list = JSON.stringify(userNos);
  await inTurn(db, NODE_REPORT_TURN, () =>
    tx(db, async () => {
      await db.run(
        `UPDATE node_admissions SET delisted_time = ?3
       WHERE agent_id = ?1 AND delisted_time IS NULL AND user_no NOT IN ${jsonValuesSql(ctx.db, "?2", "bigint")}`,
        row.id,
        list,
        now,
      );
      await db.run(
        `INSERT INTO node_admissions (agent_id, user_no, delisted_time)
       SELECT ?1, value, NULL FROM ${jsonValuesSql(ctx.db, "?2", "bigint")} AS listed
       WHERE value NOT IN (SELECT user_no FROM node_admissions WHERE agent_id = ?1 AND delisted_time IS NULL)
       ON CONFLICT (agent_id, user_no) DO UPDATE SET delisted_time = NULL`,
        row.id,
        list,
      );
      await db.run(
        "DELETE FROM node_admissions WHERE agent_id = ? AND delisted_time < ?",
        row.id,
        await admittedSince(ctx, now),
      );
      await db.run("UPDATE agents SET served_users_etag = ? WHERE id = ?", etag, row.id);
    }),
  );
  row.served_users_etag = etag;
}

/** Delisted users still count as admitted if they were delisted at or after this instant. */
export async function admittedSince(ctx: AppContext, now: number): Promise<number> {
  return now - (await admissionGraceMs(ctx));
}

/**
 * SQL: the user numbered `userNo` is admitted to node `agentId` at `now` (see admittedSince for
 * `since`), or the node is still in its upgrade window. The node's admitted users are one
 * uncorrelated subquery, which both engines read once for a whole report (PostgreSQL hashes it:
 * 10,000 users took a quarter of the time of one index probe per user, issue 31).
 */
export function admittedSql(userNo: string, agentId: string, since: string, now: string): string {
  return `(${userNo} IN (SELECT a.user_no FROM node_admissions a WHERE a.agent_id = ${agentId}
      AND (a.delisted_time IS NULL OR a.delisted_time >= ${since}))
    OR EXISTS (SELECT 1 FROM agents g WHERE g.id = ${agentId} AND g.served_users_etag = '' AND g.admit_all_until > ${now}))`;
}

/** Of `userNos`, those the node may report at `now`. */
export async function admittedUserNos(
  ctx: AppContext,
  agentId: string,
  userNos: number[],
  now: number,
): Promise<Set<number>> {
  if (userNos.length === 0) return new Set();
  const rows = await ctx.db.all<{ user_no: number }>(
    `SELECT value AS user_no FROM ${jsonValuesSql(ctx.db, "?2", "bigint")} AS reported WHERE ${admittedSql("value", "?1", "?3", "?4")}`,
    agentId,
    JSON.stringify(userNos),
    await admittedSince(ctx, now),
    now,
  );
  return new Set(rows.map((row) => row.user_no));
}
