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
  reports INTEGER NOT NULL DEFAULT 0,
  -- Raw bytes of the customers the node was given (admitted), as the node reported them.
  raw_upload INTEGER NOT NULL DEFAULT 0,
  raw_download INTEGER NOT NULL DEFAULT 0,
  -- Raw bytes (up + down) of customers the node was not given: stored as anomalies, not charged.
  anomaly_bytes INTEGER NOT NULL DEFAULT 0,
  -- Bytes charged to balances for these reports, after the line, user and global multipliers.
  charged_bytes INTEGER NOT NULL DEFAULT 0,
  -- When bound admins were told by the bot that this day diverges (0: not told); once per node and day.
  told_time INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, day)
);
CREATE INDEX node_reconcile_days_day ON node_reconcile_days (day);
-- ===== end of per node and day =====


-- ===== What the expected figure is recomputed from =====
-- The raw bytes of admitted customers once more, per multiplier tuple in force when they were
-- charged: the line's scale, the customer's own scale, the global upload and download scales and
-- the per-report minimum (bytes). The expected charge of a day is recomputed from these rows alone
-- (src/modules/traffic/reconcile.ts), never by the charging code: Σ round((raw_upload × upload_scale
-- + raw_download × download_scale) × line_scale × user_scale) + minimum_added. A report writes
-- one row per distinct tuple among its customers (nearly always one).
CREATE TABLE node_reconcile_scales (
  agent_id TEXT NOT NULL,
  day TEXT NOT NULL,
  line_scale REAL NOT NULL,
  user_scale REAL NOT NULL,
  upload_scale REAL NOT NULL,
  download_scale REAL NOT NULL,
  minimum INTEGER NOT NULL,
  raw_upload INTEGER NOT NULL DEFAULT 0,
  raw_download INTEGER NOT NULL DEFAULT 0,
  -- Customer charges counted (one per customer with traffic per report): each may round half a byte.
  charges INTEGER NOT NULL DEFAULT 0,
  -- What the per-report minimum added over the scaled bytes, figured from this row's tuple.
  minimum_added INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, day, line_scale, user_scale, upload_scale, download_scale, minimum),
  FOREIGN KEY (agent_id, day) REFERENCES node_reconcile_days (agent_id, day) ON DELETE CASCADE
);
-- ===== end of what the expected figure is recomputed from =====
