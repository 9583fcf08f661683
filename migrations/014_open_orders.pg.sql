-- PostgreSQL twin of 014_open_orders.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Open orders and payment attempts are reused (issue 26, items 4 and 5).
-- What the provider answered for an attempt (the QR text, pay link or USDT amount, as JSON), so a
-- second dobuy of an unchanged order shows the same attempt instead of asking the gateway again.
ALTER TABLE payments ADD COLUMN action TEXT;
-- The sweeper looks for unpaid orders older than a day; paid and cancelled ones are most rows.
CREATE INDEX orders_open ON orders (create_time) WHERE status IN ('topay', 'wallet_spend');
