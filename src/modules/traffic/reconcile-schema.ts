/** Reconciliation per node and business day (issue 32): what the page, the CLI and the API show. */
/** A day is flagged when charged and expected differ by more than this share of expected (0.1 %). */
export const DIVERGENCE_LIMIT = 0.001;

/** The days shown: the business day of now and the 29 before it. */
export const RECONCILE_DAYS = 30;

export interface ReconcileDay {
  nodeId: string;
  nodeName: string;
  day: string;
  reports: number;
  /** Raw bytes (up + down) of the customers the node was given, as it reported them. */
  rawBytes: number;
  rawUpload: number;
  rawDownload: number;
  /** Raw bytes of customers the node was not given: kept as anomalies, never charged. */
  anomalyBytes: number;
  chargedBytes: number;
  /** Recomputed from the raw bytes and the multipliers in force, not by the charging code. */
  expectedChargedBytes: number;
  /** |charged − expected| beyond what rounding each charge to a byte explains, over expected. */
  divergenceRatio: number;
  flagged: boolean;
}
