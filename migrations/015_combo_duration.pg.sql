-- PostgreSQL twin of 015_combo_duration.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Seed 001 §3 Combo.duration (issue 26 item 24): how many days the traffic a combo sells stays
-- usable after the order is paid; 0 = it never expires (seed 000's traffic packages, the default).
ALTER TABLE combos ADD COLUMN duration BIGINT NOT NULL DEFAULT 0 CHECK (duration >= 0);

-- Fixed when the order is made, like the rest of what the order sells (DESIGN §7).
ALTER TABLE orders ADD COLUMN traffic_days BIGINT NOT NULL DEFAULT 0;

-- Traffic that expires rides on trial_grants (charged after today's quota and before permanent
-- traffic, soonest expiry first; what is left is removed when due). A grant bought with an order
-- names it here and has coupon_use_id ''; a trial voucher's grant has order_id NULL.
ALTER TABLE trial_grants ADD COLUMN order_id TEXT;
