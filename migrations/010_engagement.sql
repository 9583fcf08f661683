-- Growth and engagement (issue 14): daily check-in, trial traffic that expires, the lucky draw and
-- traffic transfers. Every balance change these make is also a traffic_records row.

-- One check-in per account and business day. streak is the run of consecutive days this check-in
-- completes (1 = a new run); when it reaches continueSignUseDay the bonus is paid (extra_reward = 1)
-- and the next day's check-in starts a new run at 1.
CREATE TABLE sign_uses (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  day TEXT NOT NULL,
  streak INTEGER NOT NULL CHECK (streak >= 1),
  add_traffic INTEGER NOT NULL CHECK (add_traffic >= 0),
  extra_reward INTEGER NOT NULL DEFAULT 0,
  create_time INTEGER NOT NULL,
  PRIMARY KEY (user_id, day)
);
CREATE INDEX sign_uses_day ON sign_uses (day);

-- Traffic with a time limit (a freeUse coupon with traffixHaveLimitTime). It is part of
-- users.traffic while remaining > 0; node charging takes it after today's time-package quota and
-- before permanent traffic, soonest expiry first; at expire_time what remains is removed with a
-- tiyan_expire record and remaining becomes 0. warned_time: the "about to expire" notice was sent.
CREATE TABLE trial_grants (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  coupon_use_id TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount > 0),
  remaining INTEGER NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
  expire_time INTEGER NOT NULL,
  warned_time INTEGER,
  expired_time INTEGER,
  create_time INTEGER NOT NULL
);
CREATE INDEX trial_grants_user ON trial_grants (user_id, expire_time) WHERE remaining > 0;
CREATE INDEX trial_grants_due ON trial_grants (expire_time) WHERE remaining > 0;

-- A coupon given to one customer (a lucky-draw discount coupon); NULL = anyone may use it.
ALTER TABLE coupons ADD COLUMN owner_user_id TEXT REFERENCES users (id) ON DELETE CASCADE;

-- Lucky-draw prizes (seed 001 §3 Prize). gain_traffic in bytes (G on the wire), gain_vip_days in
-- days of time package, weight an integer share of the draw, photo an upload's file name or ''.
CREATE TABLE prizes (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  gain_traffic INTEGER NOT NULL DEFAULT 0 CHECK (gain_traffic >= 0),
  gain_vip_days INTEGER NOT NULL DEFAULT 0 CHECK (gain_vip_days >= 0),
  weight INTEGER NOT NULL DEFAULT 1 CHECK (weight >= 0),
  desc TEXT NOT NULL DEFAULT '',
  has_discount_coupon INTEGER NOT NULL DEFAULT 0,
  discount_value REAL NOT NULL DEFAULT 1,
  discount_duration INTEGER NOT NULL DEFAULT 1,
  photo TEXT NOT NULL DEFAULT '',
  create_time INTEGER NOT NULL
);

-- One row per draw: what it cost and what it paid, kept when the prize is later edited or deleted.
CREATE TABLE prize_draws (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  prize_id TEXT NOT NULL,
  prize_name TEXT NOT NULL,
  cost INTEGER NOT NULL,
  gain_traffic INTEGER NOT NULL DEFAULT 0,
  gain_vip_days INTEGER NOT NULL DEFAULT 0,
  coupon_id TEXT,
  seat INTEGER NOT NULL,
  day TEXT NOT NULL,
  create_time INTEGER NOT NULL
);
CREATE INDEX prize_draws_user ON prize_draws (user_id, create_time);
CREATE INDEX prize_draws_day ON prize_draws (day);

-- Traffic transfers (seed 000 §3 Push). Bytes. state: created (waiting for a receiver), received,
-- or returned (the sender took it back, or nobody received it in time: the full amount went back).
CREATE TABLE pushes (
  id TEXT PRIMARY KEY,
  code TEXT NOT NULL UNIQUE,
  from_user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  to_user_id TEXT REFERENCES users (id) ON DELETE SET NULL,
  push_number INTEGER NOT NULL CHECK (push_number > 0),
  receive_number INTEGER NOT NULL CHECK (receive_number >= 0),
  state TEXT NOT NULL DEFAULT 'created' CHECK (state IN ('created', 'received', 'returned')),
  create_time INTEGER NOT NULL,
  finish_time INTEGER
);
CREATE INDEX pushes_from ON pushes (from_user_id, create_time);
CREATE INDEX pushes_to ON pushes (to_user_id, finish_time);
CREATE INDEX pushes_open ON pushes (create_time) WHERE state = 'created';
