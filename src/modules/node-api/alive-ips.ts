/**
 * Online IPs per user across nodes, for device limits (node-protocol.md §1.6), in the database
 * (`alive_ips`, issue 28): a node's report may reach any replica and alivelist may be asked of
 * another. A reported IP counts for ALIVE_TTL_MS. Bounded: a node's report replaces its rows for
 * each user it names, and names only users it was given (keepAlive), at most ALIVE_MAX_IPS each,
 * so at most (users × nodes × ALIVE_MAX_IPS) rows; expired ones are deleted with the next report
 * naming their user, and by the retention job.
 */
import { type Db, pgArray, tx } from "../../db/db.ts";

/** How long a reported online IP counts for device limits (Xboard: 300 s). */
export const ALIVE_TTL_MS = 300_000;

/** Replaces what this node reported before for each user it names, in one transaction. */
export async function recordAliveIps(
  db: Db,
  agentId: string,
  users: Iterable<[userNo: number, ips: string[]]>,
  now = Date.now(),
): Promise<void> {
  const named: number[] = [];
  const rows: { userNo: number; ip: string }[] = [];
  for (const [userNo, ips] of users) {
    named.push(userNo);
    for (const ip of new Set(ips.map(storedIp))) rows.push({ userNo, ip });
  }
  if (named.length === 0) return;
  const expire = now + ALIVE_TTL_MS;
  await tx(db, async () => {
    if (db.engine === "postgres") await replaceSetBased(db, agentId, named, rows, now, expire);
    else await replacePerRow(db, agentId, named, rows, now, expire);
  });
}

const DELETE_NAMED_SQL = "DELETE FROM alive_ips WHERE user_no = ?1 AND (agent_id = ?2 OR expire_time <= ?3)";
const INSERT_SQL = `INSERT INTO alive_ips (user_no, agent_id, ip, expire_time) VALUES (?, ?, ?, ?)
  ON CONFLICT (user_no, agent_id, ip) DO UPDATE SET expire_time = excluded.expire_time`;

/** SQLite: prepared per-row statements (microseconds each there). */
async function replacePerRow(
  db: Db,
  agentId: string,
  named: number[],
  rows: { userNo: number; ip: string }[],
  now: number,
  expire: number,
) {
  await db.runMany(
    DELETE_NAMED_SQL,
    named.map((userNo) => [userNo, agentId, now]),
  );
  await db.runMany(
    INSERT_SQL,
    rows.map(({ userNo, ip }) => [userNo, agentId, ip, expire]),
  );
}

/** PostgreSQL: one statement per table for the whole report (a node may name thousands of users). */
async function replaceSetBased(
  db: Db,
  agentId: string,
  named: number[],
  rows: { userNo: number; ip: string }[],
  now: number,
  expire: number,
) {
  await db.run(
    `DELETE FROM alive_ips WHERE user_no IN (SELECT unnest(?1::bigint[])) AND (agent_id = ?2 OR expire_time <= ?3)`,
    pgArray(db, named),
    agentId,
    now,
  );
  if (rows.length === 0) return;
  await db.run(
    `INSERT INTO alive_ips (user_no, agent_id, ip, expire_time)
       SELECT v.user_no, ?3, v.ip, ?4 FROM unnest(?1::bigint[], ?2::text[]) AS v(user_no, ip)
     ON CONFLICT (user_no, agent_id, ip) DO UPDATE SET expire_time = excluded.expire_time`,
    pgArray(
      db,
      rows.map((row) => row.userNo),
    ),
    pgArray(
      db,
      rows.map((row) => row.ip),
    ),
    agentId,
    expire,
  );
}

/** Distinct IPs seen per user within the TTL, across all nodes (and every replica they reported to). */
export async function aliveCounts(db: Db, now = Date.now()): Promise<Record<string, number>> {
  const rows = await db.all<{ user_no: number; n: number }>(
    "SELECT user_no, COUNT(DISTINCT ip) AS n FROM alive_ips WHERE expire_time > ? GROUP BY user_no",
    now,
  );
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.user_no] = row.n;
  return counts;
}

/**
 * "1.2.3.4:5678" → "1.2.3.4", "[::1]:80" → "::1" (Xboard strips ports and brackets). A NUL, which
 * PostgreSQL text cannot hold, becomes U+FFFD on both engines (as db.ts does for parameters).
 */
function storedIp(ip: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(ip);
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(ip);
  const bare = bracketed?.[1] || (v4?.[1] ?? ip);
  return bare.slice(0, 64).replaceAll("\0", "\uFFFD");
}
