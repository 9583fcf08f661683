-- PostgreSQL twin of 007_event_caps.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Logs strangers can reach (issue 11, finding 13): payment_events and error_logs count repeats
-- instead of storing them again. A row with a fingerprint stands for every event with that
-- fingerprint: repeat_count of them, the first at create_time, the latest at last_time. Rows
-- without one (credits) are never merged. Old rows expire (src/payments/events.ts, errors/service.ts).
ALTER TABLE payment_events ADD COLUMN fingerprint TEXT;
ALTER TABLE payment_events ADD COLUMN repeat_count BIGINT NOT NULL DEFAULT 1;
ALTER TABLE payment_events ADD COLUMN last_time BIGINT NOT NULL DEFAULT 0;
UPDATE payment_events SET last_time = create_time;
CREATE UNIQUE INDEX payment_events_fingerprint ON payment_events (fingerprint);
CREATE INDEX payment_events_source ON payment_events (provider, result, create_time);
CREATE INDEX payment_events_last_time ON payment_events (last_time);

ALTER TABLE error_logs ADD COLUMN fingerprint TEXT;
ALTER TABLE error_logs ADD COLUMN repeat_count BIGINT NOT NULL DEFAULT 1;
ALTER TABLE error_logs ADD COLUMN last_time BIGINT NOT NULL DEFAULT 0;
UPDATE error_logs SET last_time = create_time;
CREATE UNIQUE INDEX error_logs_fingerprint ON error_logs (fingerprint);
CREATE INDEX error_logs_source ON error_logs (name, create_time);
CREATE INDEX error_logs_last_time ON error_logs (last_time);
