-- PostgreSQL twin of 016_replicas.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Several replicas on one database (issue 28): what one replica kept in its own memory or disk
-- lives here, so any request can land on any replica, and each background job runs on one.

-- Rate-limit counters, one fixed window per bucket ("<rule name> NUL <key>"). Expired rows are
-- taken over by the next try of their bucket and deleted by the retention job.
CREATE TABLE rate_counters (
  bucket TEXT PRIMARY KEY,
  count BIGINT NOT NULL CHECK (count >= 0),
  reset_time BIGINT NOT NULL
);
CREATE INDEX rate_counters_reset ON rate_counters (reset_time);

-- Online IPs nodes report through alive (node-protocol.md §1.6): per user, node and address,
-- until expire_time. A node's report replaces its rows for each user it names.
CREATE TABLE alive_ips (
  user_no BIGINT NOT NULL,
  agent_id TEXT NOT NULL,
  ip TEXT NOT NULL,
  expire_time BIGINT NOT NULL,
  PRIMARY KEY (user_no, agent_id, ip)
);
CREATE INDEX alive_ips_expire ON alive_ips (expire_time);

-- Each `ferry serve` process while it runs: registered at start, last_seen renewed by its
-- heartbeat, deleted at a clean stop (a killed one ages out).
CREATE TABLE replicas (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  port BIGINT NOT NULL,
  pid BIGINT NOT NULL,
  version TEXT NOT NULL,
  started_time BIGINT NOT NULL,
  last_seen BIGINT NOT NULL
);

-- One row per background job: the replica holding it until expire_time (renewed while it runs).
-- Another replica takes a job only once its lease has expired.
CREATE TABLE leases (
  job TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  acquired_time BIGINT NOT NULL,
  expire_time BIGINT NOT NULL
);

-- The bytes of uploaded images, so every replica serves them. Uploads made before this migration
-- on SQLite stay files in <data>/uploads and are read from there.
CREATE TABLE upload_blobs (
  filename TEXT PRIMARY KEY REFERENCES uploads (filename) ON DELETE CASCADE,
  bytes BYTEA NOT NULL
);

-- When a payment was last asked about at its gateway (payments/query.ts), claimed by one replica.
ALTER TABLE payments ADD COLUMN query_time BIGINT;

-- What getMe answered (the bot's id and @username), for the profile page on every replica.
ALTER TABLE telegram_poll_state ADD COLUMN me_bot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE telegram_poll_state ADD COLUMN me_username TEXT NOT NULL DEFAULT '';

-- The day's scheduled backup, claimed by the replica that writes it, so a day is backed up once
-- across replicas (and once again after a failover).
CREATE TABLE scheduled_backups (
  day TEXT PRIMARY KEY,
  replica_id TEXT NOT NULL,
  host TEXT NOT NULL,
  file TEXT NOT NULL,
  create_time BIGINT NOT NULL
);
