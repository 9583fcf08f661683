-- Operator safety (issue 30): two-factor login, the audit trail, webhooks, off-box backups.
-- Each part has its own section below; the PostgreSQL twin (018_operator_safety.pg.sql) keeps the
-- same sections in the same order.

-- ===== Audit trail =====
-- One row per change an admin, a yunying or an operator's CLI command made, written in the
-- transaction of the change (src/modules/audit/service.ts). The app never edits or deletes a row:
-- the triggers refuse it, and no retention job touches this table.
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time INTEGER NOT NULL,
  -- The account's email, or "cli@<host>" for an operator command, or "system".
  actor TEXT NOT NULL,
  actor_id TEXT,
  ip TEXT NOT NULL DEFAULT '',
  -- What was done, as "<area>.<verb>" (for example "settings.update", "combo.create").
  action TEXT NOT NULL,
  -- What it was done to (an id, an email, a key); '' when the action has no single target.
  target TEXT NOT NULL DEFAULT '',
  -- JSON: the change, secrets masked.
  diff TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_actor_time ON audit_log (actor, time);
CREATE INDEX audit_log_action_time ON audit_log (action, time);
CREATE INDEX audit_log_target_time ON audit_log (target, time);
CREATE TRIGGER audit_log_never_updated BEFORE UPDATE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log rows are never edited');
END;
CREATE TRIGGER audit_log_never_deleted BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log rows are never deleted');
END;
-- ===== end of audit trail =====


-- ===== Two-factor login =====
-- TOTP (RFC 6238) per account (src/modules/user/two-factor.ts). enabled_time is NULL while the
-- secret is set up but not yet confirmed with a code. last_step is the highest 30-second time step
-- a code was accepted for: a code is taken only for a later step (compare-and-set in the database),
-- so each code works once, on every replica.
CREATE TABLE user_totp (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  enabled_time INTEGER,
  last_step INTEGER NOT NULL DEFAULT 0,
  create_time INTEGER NOT NULL
);
-- The ten one-time recovery codes shown once at enrolment: only their SHA-256 is kept.
CREATE TABLE totp_recovery_codes (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  used_time INTEGER,
  PRIMARY KEY (user_id, code_hash)
);
-- The second step of a login: a password was right for an enrolled account. Only the token's
-- SHA-256 is kept; it lives a few minutes and dies after a few wrong codes.
CREATE TABLE login_challenges (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  create_time INTEGER NOT NULL,
  expire_time INTEGER NOT NULL,
  tries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX login_challenges_user ON login_challenges (user_id);
CREATE INDEX login_challenges_expire ON login_challenges (expire_time);
-- Passkeys (WebAuthn) of an account with TOTP on: another second factor at login. The public key
-- as SPKI DER (base64); sign_count as the authenticator last reported it.
CREATE TABLE passkeys (
  credential_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  public_key TEXT NOT NULL,
  sign_count INTEGER NOT NULL DEFAULT 0,
  create_time INTEGER NOT NULL,
  last_used_time INTEGER
);
CREATE INDEX passkeys_user ON passkeys (user_id);
-- The challenge of a passkey being added (one at a time per account, a few minutes).
CREATE TABLE passkey_registrations (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  challenge TEXT NOT NULL,
  expire_time INTEGER NOT NULL
);
-- ===== end of two-factor login =====


-- ===== Webhooks =====
-- The webhook outbox (issue 30 §3, src/modules/webhook/): one row per event and webhook that wanted
-- it, written in the transaction of the event (queueWebhookEvent); the webhook-sender job posts it,
-- retries with backoff until 24 h after the event, and marks it delivered or given up. Rows done
-- (delivered or given up) are pruned by the retention job after WEBHOOK_LOG_KEEP_MS.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  -- The event's id, the `id` of the body: the same for every webhook the event goes to.
  event_id TEXT NOT NULL,
  -- The webhook's id in the setting `webhooks`, and its URL when the event was queued (for the log).
  webhook_id TEXT NOT NULL,
  url TEXT NOT NULL,
  type TEXT NOT NULL,
  event_time INTEGER NOT NULL,
  -- The JSON body {id, type, time, data}, sent as it is on every attempt.
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_try_time INTEGER NOT NULL,
  last_try_time INTEGER NOT NULL DEFAULT 0,
  -- The last attempt's HTTP status (0: no answer) and error ('' when none).
  last_status INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  delivered_time INTEGER NOT NULL DEFAULT 0,
  given_up_time INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_try_time)
  WHERE delivered_time = 0 AND given_up_time = 0;
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, event_time);
CREATE INDEX webhook_deliveries_event_time ON webhook_deliveries (event_time);
-- node.down / node.up: when the panel last saw the node go silent (0: not down). The webhook
-- sender's scan sets it (and queues node.down); the node's next call clears it (and queues node.up).
ALTER TABLE agents ADD COLUMN down_since INTEGER NOT NULL DEFAULT 0;
-- ===== end of webhooks =====


-- ===== Off-box backups =====
-- ===== end of off-box backups =====
