-- PostgreSQL twin of 017_devices.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Devices (issue 29): the device ids (HWID) client apps send with each subscription fetch, per
-- account, and the per-customer override of the device limit. The limit itself comes from the
-- packages the customer holds (combos.device_num); 0 means unlimited. New ids per account and hour
-- are counted in rate_counters (016), so a flood of random ids cannot grow this table.

-- One row per device of an account: at most 64 per account (src/modules/device/service.ts).
-- last_seen and last_ip are refreshed at most every few minutes, not on every fetch.
CREATE TABLE devices (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  hwid TEXT NOT NULL,
  platform TEXT NOT NULL DEFAULT '',
  os_version TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  user_agent TEXT NOT NULL DEFAULT '',
  first_seen BIGINT NOT NULL,
  last_seen BIGINT NOT NULL,
  last_ip TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (user_id, hwid)
);

-- NULL: the limit of the packages the customer holds; a number (0 = unlimited) set in 用户管理 or
-- by `ferry user set-devices` replaces it.
ALTER TABLE users ADD COLUMN device_limit BIGINT CHECK (device_limit >= 0);
