-- PostgreSQL twin of 013_report_writes.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Node reports (issue 18 §3). A report rewrote each charged user's whole users row (~300 bytes:
-- the password hash, keys, flags) to change four numbers; those numbers now live in a narrow
-- table of their own, one row per user, made with the user. users.traffic = SUM(traffic_change)
-- of the user's traffic records now reads balances.traffic.
CREATE TABLE balances (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  traffic BIGINT NOT NULL DEFAULT 0 CHECK (traffic >= 0),
  spend_traffic BIGINT NOT NULL DEFAULT 0,
  daily_usage BIGINT NOT NULL DEFAULT 0,
  daily_usage_day TEXT NOT NULL DEFAULT ''
);
INSERT INTO balances (user_id, traffic, spend_traffic, daily_usage, daily_usage_day)
  SELECT id, traffic, spend_traffic, daily_usage, daily_usage_day FROM users;
ALTER TABLE users DROP COLUMN traffic;
ALTER TABLE users DROP COLUMN spend_traffic;
ALTER TABLE users DROP COLUMN daily_usage;
ALTER TABLE users DROP COLUMN daily_usage_day;
CREATE FUNCTION users_balances() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO balances (user_id) VALUES (NEW.id);
  RETURN NULL;
END;
$$;
CREATE TRIGGER users_balances AFTER INSERT ON users FOR EACH ROW EXECUTE FUNCTION users_balances();

-- A report also updates each user's spend record of the day, and its update_time moved the user's
-- entry in traffic_records_user (user_id, update_time) every time. Readers filter a user's records
-- by day (the records page, newest day first), so the index is keyed by day, which a report never
-- changes.
DROP INDEX traffic_records_user;
CREATE INDEX traffic_records_user_day ON traffic_records (user_id, day);
