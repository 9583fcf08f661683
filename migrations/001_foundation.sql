-- Accounts, sessions, e-mail confirmations, settings, error log, permissions and notices.

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  type TEXT NOT NULL DEFAULT 'normal' CHECK (type IN ('normal', 'channel', 'yunying', 'admin')),
  is_agency INTEGER NOT NULL DEFAULT 0,
  disabled INTEGER NOT NULL DEFAULT 0,
  email_verified INTEGER NOT NULL DEFAULT 0,
  icon TEXT NOT NULL DEFAULT '',
  userkey TEXT NOT NULL UNIQUE,
  proxy_secret TEXT NOT NULL UNIQUE,
  scale REAL NOT NULL DEFAULT 1,
  channel_code TEXT NOT NULL DEFAULT '',
  paid_user INTEGER NOT NULL DEFAULT 0,
  traffic INTEGER NOT NULL DEFAULT 0 CHECK (traffic >= 0),
  spend_traffic INTEGER NOT NULL DEFAULT 0,
  vip_expire_time INTEGER NOT NULL DEFAULT 0,
  daily_limit INTEGER,
  daily_usage INTEGER NOT NULL DEFAULT 0,
  daily_usage_day TEXT NOT NULL DEFAULT '',
  wallet_fen INTEGER NOT NULL DEFAULT 0 CHECK (wallet_fen >= 0),
  in_xinjiang INTEGER NOT NULL DEFAULT 0,
  in_foreign INTEGER NOT NULL DEFAULT 0,
  use_english_node INTEGER NOT NULL DEFAULT 0,
  can_change_describe_key INTEGER NOT NULL DEFAULT 1,
  can_change_password INTEGER NOT NULL DEFAULT 1,
  normal_permission INTEGER NOT NULL DEFAULT 0,
  special_daily_unlimit_traffic INTEGER NOT NULL DEFAULT 0,
  daily_unlimit_traffic INTEGER NOT NULL DEFAULT 0,
  force_reward INTEGER NOT NULL DEFAULT 0,
  create_time INTEGER NOT NULL,
  last_active_time INTEGER NOT NULL DEFAULT 0,
  first_url TEXT NOT NULL DEFAULT '',
  last_url TEXT NOT NULL DEFAULT ''
);

CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  create_time INTEGER NOT NULL,
  expire_time INTEGER NOT NULL,
  ip TEXT NOT NULL DEFAULT '',
  user_agent TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user ON sessions (user_id);

-- One row per e-mailed confirmation link (sign-up or password change). Only the key's hash is kept.
CREATE TABLE email_tokens (
  serial_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  action TEXT NOT NULL CHECK (action IN ('signup_confirm', 'change_password')),
  key_hash TEXT NOT NULL,
  new_password_hash TEXT,
  create_time INTEGER NOT NULL,
  expire_time INTEGER NOT NULL,
  used_time INTEGER
);

CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  update_time INTEGER NOT NULL
);

CREATE TABLE error_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  create_time INTEGER NOT NULL,
  name TEXT NOT NULL,
  msg TEXT NOT NULL,
  stack TEXT NOT NULL DEFAULT ''
);
CREATE INDEX error_logs_time ON error_logs (create_time);

CREATE TABLE permissions (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  desc TEXT NOT NULL DEFAULT '',
  create_time INTEGER NOT NULL
);

CREATE TABLE user_permissions (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  permission_id TEXT NOT NULL REFERENCES permissions (id) ON DELETE CASCADE,
  expire_time INTEGER NOT NULL,
  PRIMARY KEY (user_id, permission_id)
);

-- Bell notices: user_id NULL means every user sees it until they click it.
CREATE TABLE notices (
  id TEXT PRIMARY KEY,
  user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
  href TEXT NOT NULL DEFAULT '',
  desc TEXT NOT NULL,
  create_time INTEGER NOT NULL
);
CREATE TABLE notice_clicks (
  notice_id TEXT NOT NULL REFERENCES notices (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  click_time INTEGER NOT NULL,
  PRIMARY KEY (notice_id, user_id)
);
