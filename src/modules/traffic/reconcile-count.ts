/**
 * Counting a node report into its reconciliation (issue 32): one row per node and business day
 * (node_reconcile_days) and, for the expected figure, the raw bytes once more per multiplier tuple
 * in force (node_reconcile_scales). Called by applyNodeReport inside the report's transaction, so
 * a report is counted exactly when it is charged; a replayed report id never gets here.
 *
 * The minimum a report adds is figured here from the tuple (never from the charge the charging
 * code computed), so the expected figure (reconcile.ts) stays independent of chargeFor.
 */
import { type Db, leastSql } from "../../db/db.ts";

const SATURATED = Number.MAX_SAFE_INTEGER;

/** The report-wide multipliers (the line's, the global upload and download scales, the minimum in bytes). */
export interface ReportMultipliers {
  line: number;
  upload: number;
  download: number;
  minimum: number;
}

/** One admitted customer's raw bytes in the report, with the customer's own scale. */
export interface AdmittedBytes {
  upload: number;
  download: number;
  userScale: number;
}

export interface ReportTally {
  agentId: string;
  day: string;
  admitted: AdmittedBytes[];
  anomalyBytes: number;
  /** What the charging code charged for the report (Σ of its per-customer charges). */
  chargedBytes: number;
}

interface ScaleBucket {
  userScale: number;
  upload: number;
  download: number;
  charges: number;
  minimumAdded: number;
}

/** The report's customers summed per own scale; what the minimum adds is figured per customer. */
function scaleBuckets(multipliers: ReportMultipliers, admitted: AdmittedBytes[]): ScaleBucket[] {
  const buckets = new Map<number, ScaleBucket>();
  for (const { upload, download, userScale } of admitted) {
    if (upload + download <= 0) continue;
    const bucket = buckets.get(userScale) ?? {
      userScale,
      upload: 0,
      download: 0,
      charges: 0,
      minimumAdded: 0,
    };
    const scaled = Math.round(
      (upload * multipliers.upload + download * multipliers.download) * multipliers.line * userScale,
    );
    bucket.upload += upload;
    bucket.download += download;
    bucket.charges += 1;
    bucket.minimumAdded += Math.max(0, multipliers.minimum - scaled);
    buckets.set(userScale, bucket);
  }
  return [...buckets.values()];
}

/** Counts one applied report: one upsert of the day's row, one per multiplier tuple (nearly always one). */
export async function countReconcile(db: Db, multipliers: ReportMultipliers, tally: ReportTally) {
  const add = (column: string, param: string) =>
    `${column} = ${leastSql(db, `node_reconcile_days.${column} + ${param}`, "?8")}`;
  let upload = 0;
  let download = 0;
  for (const bytes of tally.admitted) {
    upload += bytes.upload;
    download += bytes.download;
  }
  await db.run(
    `INSERT INTO node_reconcile_days (agent_id, day, reports, raw_upload, raw_download, anomaly_bytes, charged_bytes)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
     ON CONFLICT (agent_id, day) DO UPDATE SET reports = node_reconcile_days.reports + ?3,
       ${add("raw_upload", "?4")}, ${add("raw_download", "?5")}, ${add("anomaly_bytes", "?6")}, ${add("charged_bytes", "?7")}`,
    tally.agentId,
    tally.day,
    1,
    upload,
    download,
    tally.anomalyBytes,
    tally.chargedBytes,
    SATURATED,
  );
  const buckets = scaleBuckets(multipliers, tally.admitted);
  const sum = (column: string, param: string) =>
    `${column} = ${leastSql(db, `node_reconcile_scales.${column} + ${param}`, "?12")}`;
  await db.runMany(
    `INSERT INTO node_reconcile_scales (agent_id, day, line_scale, user_scale, upload_scale, download_scale, minimum,
       raw_upload, raw_download, charges, minimum_added)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
     ON CONFLICT (agent_id, day, line_scale, user_scale, upload_scale, download_scale, minimum) DO UPDATE SET
       ${sum("raw_upload", "?8")}, ${sum("raw_download", "?9")}, ${sum("charges", "?10")}, ${sum("minimum_added", "?11")}`,
    buckets.map((bucket) => [
      tally.agentId,
      tally.day,
      multipliers.line,
      bucket.userScale,
      multipliers.upload,
      multipliers.download,
      multipliers.minimum,
      bucket.upload,
      bucket.download,
      bucket.charges,
      bucket.minimumAdded,
      SATURATED,
    ]),
  );
}
