-- Node API and traffic accounting (issue 5): numeric ids for UniProxy clients, applied node
-- reports (a report id is charged once), per-user per-day usage, and the one spend record per
-- user and business day that node traffic keeps up to date.

-- UniProxy clients (XrayR, V2bX, our agent) key users and nodes by integers.
ALTER TABLE users ADD COLUMN node_uid INTEGER;
UPDATE users SET node_uid = rowid;
CREATE UNIQUE INDEX users_node_uid ON users (node_uid);
CREATE TRIGGER users_node_uid AFTER INSERT ON users WHEN NEW.node_uid IS NULL
BEGIN
  UPDATE users SET node_uid = (SELECT COALESCE(MAX(node_uid), 0) + 1 FROM users) WHERE id = NEW.id;
END;

ALTER TABLE agents ADD COLUMN node_no INTEGER;
UPDATE agents SET node_no = rowid;
CREATE UNIQUE INDEX agents_node_no ON agents (node_no);
CREATE TRIGGER agents_node_no AFTER INSERT ON agents WHEN NEW.node_no IS NULL
BEGIN
  UPDATE agents SET node_no = (SELECT COALESCE(MAX(node_no), 0) + 1 FROM agents) WHERE id = NEW.id;
END;

ALTER TABLE agents ADD COLUMN last_push_time INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN online_users INTEGER NOT NULL DEFAULT 0;

-- A report id seen from a node; a resent report finds its row and changes nothing.
CREATE TABLE node_reports (
  agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  report_id TEXT NOT NULL,
  users INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  PRIMARY KEY (agent_id, report_id)
);
CREATE INDEX node_reports_time ON node_reports (create_time);

-- What each user moved and paid per business day (the statistics page reads these).
-- upload/download are the node's raw bytes; quota/permanent are the scaled charge by source;
-- overdraft is charge that found neither left (the user is dropped at the next sync).
CREATE TABLE usage_days (
  day TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  upload INTEGER NOT NULL DEFAULT 0,
  download INTEGER NOT NULL DEFAULT 0,
  quota INTEGER NOT NULL DEFAULT 0,
  permanent INTEGER NOT NULL DEFAULT 0,
  overdraft INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, user_id)
);

-- Node traffic keeps one spend record per user and day up to date instead of one per report.
CREATE UNIQUE INDEX traffic_records_spend_day ON traffic_records (user_id, day) WHERE type = 'spend';
