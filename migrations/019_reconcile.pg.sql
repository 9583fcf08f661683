-- Reconciliation per node and business day (issue 32): what each node's applied reports brought
-- and what was charged for them, counted in the transaction of each applied report
-- (src/modules/traffic/charge.ts, and charge-sets.ts on PostgreSQL). A replayed report id counts
-- nothing, like it charges nothing.

-- ===== Per node and day =====
CREATE TABLE node_reconcile_days (
  agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  -- The business day (setting `timezone`) of the panel's receive time of the report.
  day TEXT NOT NULL,
  -- Reports applied (replays excluded).
  reports BIGINT NOT NULL DEFAULT 0,
  -- Raw bytes of the customers the node was given (admitted), as the node reported them.
  raw_upload BIGINT NOT NULL DEFAULT 0,
  raw_download BIGINT NOT NULL DEFAULT 0,
  -- Raw bytes (up + down) of customers the node was not given: stored as anomalies, not charged.
  anomaly_bytes BIGINT NOT NULL DEFAULT 0,
  -- Bytes charged to balances for these reports, after the line, user and global multipliers.
  charged_bytes BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, day)
);
CREATE INDEX node_reconcile_days_day ON node_reconcile_days (day);
-- ===== end of per node and day =====


-- ===== What the expected figure is recomputed from =====
-- ===== end of what the expected figure is recomputed from =====
