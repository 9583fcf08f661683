-- PostgreSQL twin of 009_telegram.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- The Telegram bot, the "messaging service" of seed 000 §2 (issue 13 §5).

-- One chat per account and one account per chat; binding again replaces the old row.
CREATE TABLE telegram_bindings (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  chat_id BIGINT NOT NULL UNIQUE,
  username TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL DEFAULT '',
  bind_time BIGINT NOT NULL
);

-- The code the profile shows in "/bind <userId> <code>": one live code per account, stored as a
-- SHA-256 of the user id and the code, single-use, void after expire_time or too many wrong tries.
CREATE TABLE telegram_bind_codes (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  failed_attempts BIGINT NOT NULL DEFAULT 0,
  create_time BIGINT NOT NULL,
  expire_time BIGINT NOT NULL
);

-- Messages waiting for the Bot API. Queued inside the transaction of the event they report;
-- status pending (next try at next_try_time), sent, or failed (given up: last_error says why).
-- dedupe_key makes a second queueing of the same event a no-op.
CREATE TABLE telegram_outbox (
  id TEXT PRIMARY KEY,
  chat_id BIGINT NOT NULL,
  text TEXT NOT NULL,
  dedupe_key TEXT UNIQUE,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  attempts BIGINT NOT NULL DEFAULT 0,
  create_time BIGINT NOT NULL,
  next_try_time BIGINT NOT NULL,
  sent_time BIGINT,
  last_error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX telegram_outbox_due ON telegram_outbox (status, next_try_time);
CREATE INDEX telegram_outbox_created ON telegram_outbox (create_time);

-- Where long polling goes on: the next getUpdates offset, for the bot (the token's numeric id) it
-- belongs to, so a new bot starts from its own first update. One row.
CREATE TABLE telegram_poll_state (
  id BIGINT PRIMARY KEY CHECK (id = 1),
  bot_id TEXT NOT NULL DEFAULT '',
  next_offset BIGINT NOT NULL DEFAULT 0
);
INSERT INTO telegram_poll_state (id, bot_id, next_offset) VALUES (1, '', 0);

-- Alerts found by the bot's periodic scan (traffic low / used up, time package ending, node 异常):
-- per kind and subject (a user or a node), the state last told (`ref`: the top-up ledger row, the
-- expiry, the last time the node was heard), so one state is told once. One row per kind and subject.
CREATE TABLE telegram_alerts (
  kind TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  ref TEXT NOT NULL,
  told_time BIGINT NOT NULL,
  PRIMARY KEY (kind, subject_id)
);
