-- PostgreSQL twin of 002_commerce.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Shop: combos, orders, coupons, payment attempts, USDT watching, and the two ledgers
-- (traffic records, wallet entries) that every change of traffic or money writes (DESIGN §6).

ALTER TABLE permissions ADD COLUMN use_times BIGINT NOT NULL DEFAULT 0;

CREATE TABLE combos (
  id TEXT PRIMARY KEY,
  sort_order BIGINT NOT NULL DEFAULT 0,
  name TEXT NOT NULL,
  price_fen BIGINT NOT NULL CHECK (price_fen >= 0),
  traffic BIGINT NOT NULL DEFAULT 0 CHECK (traffic >= 0),
  vip_duration BIGINT NOT NULL DEFAULT 0 CHECK (vip_duration >= 0),
  daily_limit BIGINT,
  addition_persend DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (addition_persend >= 0),
  device_num BIGINT NOT NULL DEFAULT 0,
  speed TEXT NOT NULL DEFAULT '',
  -- JSON array of permission ids
  permissions_gain TEXT NOT NULL DEFAULT '[]',
  permission_duration BIGINT NOT NULL DEFAULT 0,
  permissions_desc TEXT NOT NULL DEFAULT '',
  create_time BIGINT NOT NULL
);

CREATE TABLE coupons (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL CHECK (type IN ('freeUse', 'freeTime', 'cash', 'discount')),
  code TEXT NOT NULL,
  taobao BIGINT NOT NULL DEFAULT 0,
  traffic BIGINT NOT NULL DEFAULT 0,
  traffic_has_limit_time BIGINT NOT NULL DEFAULT 0,
  traffic_limit_hours BIGINT NOT NULL DEFAULT 0,
  vip_day BIGINT NOT NULL DEFAULT 0,
  for_money_fen BIGINT NOT NULL DEFAULT 0,
  discount DOUBLE PRECISION NOT NULL DEFAULT 1,
  use_num_per_user BIGINT NOT NULL DEFAULT 1,
  number_of_authorizations BIGINT NOT NULL DEFAULT 1,
  auth_times BIGINT NOT NULL DEFAULT 0 CHECK (auth_times >= 0),
  -- end of the expiry day in ms; 0 = never expires
  expire_time BIGINT NOT NULL DEFAULT 0,
  create_time BIGINT NOT NULL
);

-- SQLite: code UNIQUE COLLATE NOCASE. Queries compare lower(code) with the lowered value.
CREATE UNIQUE INDEX coupons_code_nocase ON coupons (lower(code));

-- One row per use of a coupon (an order discount or a redeemed trial); restored uses keep their row.
CREATE TABLE coupon_uses (
  id TEXT PRIMARY KEY,
  coupon_id TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  order_id TEXT,
  code TEXT NOT NULL,
  type TEXT NOT NULL,
  add_traffic BIGINT NOT NULL DEFAULT 0,
  add_day BIGINT NOT NULL DEFAULT 0,
  add_money_fen BIGINT NOT NULL DEFAULT 0,
  discount DOUBLE PRECISION NOT NULL DEFAULT 1,
  time BIGINT NOT NULL,
  is_delete BIGINT NOT NULL DEFAULT 0,
  restore_time BIGINT
);
CREATE INDEX coupon_uses_coupon ON coupon_uses (coupon_id, user_id);
CREATE INDEX coupon_uses_time ON coupon_uses (time);

CREATE TABLE orders (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  combo_id TEXT NOT NULL,
  "desc" TEXT NOT NULL,
  order_money_fen BIGINT NOT NULL CHECK (order_money_fen >= 0),
  coupon_use_id TEXT,
  coupon_code TEXT NOT NULL DEFAULT '',
  coupon_name TEXT NOT NULL DEFAULT '',
  coupon_type TEXT NOT NULL DEFAULT '',
  coupon_discount_fen BIGINT NOT NULL DEFAULT 0 CHECK (coupon_discount_fen >= 0),
  wallet_spend_fen BIGINT NOT NULL DEFAULT 0 CHECK (wallet_spend_fen >= 0),
  status TEXT NOT NULL DEFAULT 'topay' CHECK (status IN ('topay', 'wallet_spend', 'paied', 'cancled')),
  -- what paying credits, fixed when the order is made (DESIGN §7)
  add_traffic BIGINT NOT NULL DEFAULT 0,
  add_vip_duration BIGINT NOT NULL DEFAULT 0,
  daily_limit BIGINT,
  gain_permissions TEXT NOT NULL DEFAULT '[]',
  permission_duration BIGINT NOT NULL DEFAULT 0,
  from_channel TEXT NOT NULL DEFAULT '',
  reward_fen BIGINT NOT NULL DEFAULT 0,
  pay_mode TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '',
  user_feedback TEXT NOT NULL DEFAULT '',
  paid_by TEXT NOT NULL DEFAULT '',
  create_time BIGINT NOT NULL,
  pay_time BIGINT,
  cancel_time BIGINT,
  CHECK (coupon_discount_fen + wallet_spend_fen <= order_money_fen)
);
CREATE INDEX orders_user ON orders (user_id, create_time);
CREATE INDEX orders_time ON orders (create_time);

-- One row per attempt to collect an order's remainder through a gateway (each has its own trade number).
CREATE TABLE payments (
  trade_no TEXT PRIMARY KEY,
  order_id TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  method TEXT NOT NULL,
  amount_fen BIGINT NOT NULL CHECK (amount_fen >= 0),
  usdt_units BIGINT,
  usdt_address TEXT,
  usdt_rate_fen BIGINT,
  device TEXT NOT NULL DEFAULT '',
  client_ip TEXT NOT NULL DEFAULT '',
  third_pay_platform TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'paid', 'closed')),
  gateway_trade_no TEXT,
  create_time BIGINT NOT NULL,
  expire_time BIGINT,
  pay_time BIGINT
);
CREATE INDEX payments_order ON payments (order_id);
CREATE UNIQUE INDEX payments_gateway ON payments (provider, gateway_trade_no);
CREATE INDEX payments_pending ON payments (provider, status, create_time);

-- A USDT amount at an address is held by one payment until hold_until (expiry plus a grace period).
CREATE TABLE usdt_slots (
  address TEXT NOT NULL,
  units BIGINT NOT NULL,
  trade_no TEXT NOT NULL,
  hold_until BIGINT NOT NULL,
  PRIMARY KEY (address, units)
);

-- Every incoming TRC20 USDT transfer the watcher saw, matched or not; a tx id is used once.
CREATE TABLE usdt_transfers (
  tx_id TEXT PRIMARY KEY,
  from_address TEXT NOT NULL,
  to_address TEXT NOT NULL,
  units BIGINT NOT NULL,
  block_time BIGINT NOT NULL,
  trade_no TEXT,
  status TEXT NOT NULL CHECK (status IN ('matched', 'unmatched', 'rejected')),
  note TEXT NOT NULL DEFAULT '',
  create_time BIGINT NOT NULL
);

-- Audit of every notification, query answer and manual crediting, verified or not.
CREATE TABLE payment_events (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  provider TEXT NOT NULL,
  trade_no TEXT NOT NULL DEFAULT '',
  gateway_trade_no TEXT NOT NULL DEFAULT '',
  result TEXT NOT NULL CHECK (result IN ('credited', 'duplicate', 'rejected', 'anomaly')),
  reason TEXT NOT NULL DEFAULT '',
  raw TEXT NOT NULL DEFAULT '',
  create_time BIGINT NOT NULL
);
CREATE INDEX payment_events_trade ON payment_events (trade_no);

-- Ledger of permanent traffic and time-package days: users.traffic = SUM(traffic_change) and
-- users.vip_expire_time = SUM(vip_change) over a user's rows.
CREATE TABLE traffic_records (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  "desc" TEXT NOT NULL DEFAULT '',
  traffic_change BIGINT NOT NULL DEFAULT 0,
  exemption_traffic BIGINT NOT NULL DEFAULT 0,
  vip_change BIGINT NOT NULL DEFAULT 0,
  all_traffic BIGINT NOT NULL,
  all_spend BIGINT NOT NULL,
  order_id TEXT,
  day TEXT NOT NULL,
  update_time BIGINT NOT NULL
);
CREATE INDEX traffic_records_user ON traffic_records (user_id, update_time);
CREATE INDEX traffic_records_day ON traffic_records (day, type);

-- Ledger of the wallet: users.wallet_fen = SUM(change_fen) over a user's rows.
CREATE TABLE wallet_entries (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  change_fen BIGINT NOT NULL,
  balance_fen BIGINT NOT NULL CHECK (balance_fen >= 0),
  "desc" TEXT NOT NULL DEFAULT '',
  order_id TEXT,
  create_time BIGINT NOT NULL
);
CREATE INDEX wallet_entries_user ON wallet_entries (user_id, create_time);
