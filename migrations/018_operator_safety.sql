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
-- ===== end of two-factor login =====


-- ===== Webhooks =====
-- ===== end of webhooks =====


-- ===== Off-box backups =====
-- ===== end of off-box backups =====
