-- PostgreSQL twin of 005_auth.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Log-in hardening (issue 11): browsers trusted by an account, one-time login links, and a bound on
-- the password tries a mailed reset link takes. Only SHA-256 hashes of the secrets are stored.

-- A browser that logged in to an account with its password (OWASP "device cookie"). One cookie
-- value may be trusted by several accounts used in the same browser.
CREATE TABLE trusted_devices (
  token_hash TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  create_time BIGINT NOT NULL,
  expire_time BIGINT NOT NULL,
  PRIMARY KEY (token_hash, user_id)
);
CREATE INDEX trusted_devices_user ON trusted_devices (user_id, expire_time);

-- One-time login links (the `token` parameter of the site root) minted for mail or bot messages; using one deletes it.
CREATE TABLE login_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  create_time BIGINT NOT NULL,
  expire_time BIGINT NOT NULL
);
CREATE INDEX login_tokens_expire ON login_tokens (expire_time);

-- Wrong passwords typed on a password-change confirmation page.
ALTER TABLE email_tokens ADD COLUMN tries BIGINT NOT NULL DEFAULT 0;
