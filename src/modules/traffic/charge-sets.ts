/**
 * A node report's writes on PostgreSQL (issue 27 item 4): one statement per table for the whole
 * report, each row's values passed as arrays through `unnest`, instead of a round trip (~35 µs) per
 * user and table. charge.ts computes every user's split exactly as on SQLite and hands over the
 * rows; only the writing differs by engine. The values each row gets are those of charge.ts's
 * per-user statements on SQLite, so every reader sees the same answers.
 */
import { type Db, pgArray } from "../../db/db.ts";

/** One charged user's writes, as charge.ts computed them. */
export interface ChargeRow {
  userId: string;
  /** Whether anything was charged (quota, trial or permanent): then balances and the spend record change. */
  paid: boolean;
  /** balances after the charge. */
  traffic: number;
  spend: number;
  dailyUsage: number;
  /** Taken from running trial grants, soonest expiry first. */
  fromTrial: number;
  /** The spend record's additions: what left balances.traffic (≤ 0) and what the time package covered. */
  trafficChange: number;
  exemption: number;
  /** usage_days additions: raw bytes, then the charge by source. */
  upload: number;
  download: number;
  quota: number;
  permanent: number;
  overdraft: number;
}

/**
 * Writes a report's rows: the trial grants, then balances and the day's spend records (with the
 * day's usage) in one statement (issue 31: the rows are sent and unnested once for both tables).
 */
export async function writeChargeSets(
  db: Db,
  rows: ChargeRow[],
  day: string,
  now: number,
  saturated: number,
) {
  await spendTrialGrants(
    db,
    rows.filter((row) => row.paid && row.fromTrial > 0),
  );
  await writeBalancesAndDayRows(db, rows, day, now, saturated);
}

/** The values of one field of every row, as an array parameter. */
const column = <K extends keyof ChargeRow>(db: Db, rows: ChargeRow[], key: K) =>
  pgArray(
    db,
    rows.map((row) => row[key] as string | number | null),
  );

/**
 * Takes each user's `fromTrial` from their running grants, soonest expiry first (as charge.ts's
 * trialSpender does on SQLite): a grant gives what the grants before it left of the amount.
 */
async function spendTrialGrants(db: Db, rows: ChargeRow[]) {
  if (rows.length === 0) return;
  const taken = await db.all<{ user_id: string; taken: number }>(
    `WITH wanted AS (
       SELECT * FROM unnest(?1::text[], ?2::bigint[]) AS w(user_id, amount)
     ), running AS (
       SELECT g.id, g.remaining, w.amount,
              COALESCE(SUM(g.remaining) OVER (PARTITION BY g.user_id ORDER BY g.expire_time, g.id
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
       FROM trial_grants g JOIN wanted w ON w.user_id = g.user_id
       WHERE g.remaining > 0
     )
     UPDATE trial_grants AS t SET remaining = t.remaining - LEAST(r.remaining, r.amount - r.before)
     FROM running r WHERE t.id = r.id AND r.before < r.amount
     RETURNING t.user_id, LEAST(r.remaining, r.amount - r.before) AS taken`,
    column(db, rows, "userId"),
    column(db, rows, "fromTrial"),
  );
  const took = new Map<string, number>();
  for (const row of taken) took.set(row.user_id, (took.get(row.user_id) ?? 0) + row.taken);
  for (const row of rows) {
    const sum = took.get(row.userId) ?? 0;
    if (sum !== row.fromTrial)
      throw new Error(`trial grants of ${row.userId} hold ${sum} bytes, not ${row.fromTrial}`);
  }
}

/**
 * Each paid user's balances, and each user's spend record of the day, which holds the day's usage
 * too (migration 020): added to where it exists, inserted by the day's first report (the values
 * SQLite's writeCharges writes). A row is paid when it moves traffic_change (≤ 0) or
 * exemption_traffic (≥ 0); only then are balances written and all_traffic, all_spend and
 * update_time stamped. Usage sums saturate.
 *
 * Issue 31: the rows that exist are updated through their (day, type) index and a join on user_id
 * (the EXPLAIN of a day's first report and of a later one, with 1.2 million older records: an index
 * scan of today's rows, hash or merge joined; nothing scans the history), which took less backend
 * time than sending every row through ON CONFLICT. Only the users the UPDATE did not find are
 * inserted. That INSERT keeps its ON CONFLICT: a row a concurrent report inserted after this
 * transaction's snapshot is never doubled (the SERIALIZABLE transaction is refused and the report
 * runs again, db.ts).
 */
async function writeBalancesAndDayRows(
  db: Db,
  rows: ChargeRow[],
  day: string,
  now: number,
  saturated: number,
) {
  if (rows.length === 0) return;
  const paid = (row: string) => `(${row}.traffic_change <> 0 OR ${row}.exemption_traffic <> 0)`;
  const usage = ["upload", "download", "quota", "permanent", "overdraft"];
  const add = (name: string) => `${name} = LEAST(traffic_records.${name} + excluded.${name}, ?14::bigint)`;
  const stamp = (name: string) =>
    `${name} = CASE WHEN ${paid("excluded")} THEN excluded.${name} ELSE traffic_records.${name} END`;
  await db.run(
    `WITH v AS MATERIALIZED (
       SELECT * FROM unnest(?1::text[], ?2::bigint[], ?3::bigint[], ?4::bigint[], ?5::bigint[], ?6::bigint[],
         ?9::bigint[], ?10::bigint[], ?11::bigint[], ?12::bigint[], ?13::bigint[])
         AS v(user_id, traffic_change, exemption_traffic, traffic, spend, daily_usage,
           upload, download, quota, permanent, overdraft)
     ), balanced AS (
       UPDATE balances AS b SET traffic = v.traffic, spend_traffic = v.spend, daily_usage = v.daily_usage,
         daily_usage_day = ?7::text
       FROM v WHERE b.user_id = v.user_id AND ${paid("v")}
     ), updated AS (
       UPDATE traffic_records AS t SET
         traffic_change = t.traffic_change + v.traffic_change,
         exemption_traffic = t.exemption_traffic + v.exemption_traffic,
         all_traffic = CASE WHEN ${paid("v")} THEN v.traffic ELSE t.all_traffic END,
         all_spend = CASE WHEN ${paid("v")} THEN v.spend ELSE t.all_spend END,
         update_time = CASE WHEN ${paid("v")} THEN ?8::bigint ELSE t.update_time END,
         ${usage.map((name) => `${name} = LEAST(t.${name} + v.${name}, ?14::bigint)`).join(", ")}
       FROM v WHERE t.day = ?7::text AND t.type = 'spend' AND t.user_id = v.user_id
       RETURNING t.user_id
     )
     INSERT INTO traffic_records (user_id, type, "desc", traffic_change, exemption_traffic, all_traffic, all_spend,
       day, update_time, upload, download, quota, permanent, overdraft)
     SELECT v.user_id, 'spend', '节点流量', v.traffic_change, v.exemption_traffic, v.traffic, v.spend, ?7::text, ?8::bigint,
       v.upload, v.download, v.quota, v.permanent, v.overdraft
     FROM v WHERE NOT EXISTS (SELECT 1 FROM updated WHERE updated.user_id = v.user_id)
     ON CONFLICT (user_id, day) WHERE type = 'spend' DO UPDATE SET
       traffic_change = traffic_records.traffic_change + excluded.traffic_change,
       exemption_traffic = traffic_records.exemption_traffic + excluded.exemption_traffic,
       ${["all_traffic", "all_spend", "update_time"].map(stamp).join(", ")},
       ${usage.map(add).join(", ")}`,
    column(db, rows, "userId"),
    column(db, rows, "trafficChange"),
    column(db, rows, "exemption"),
    column(db, rows, "traffic"),
    column(db, rows, "spend"),
    column(db, rows, "dailyUsage"),
    day,
    now,
    column(db, rows, "upload"),
    column(db, rows, "download"),
    column(db, rows, "quota"),
    column(db, rows, "permanent"),
    column(db, rows, "overdraft"),
    saturated,
  );
}
