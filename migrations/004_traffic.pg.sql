-- PostgreSQL twin of 004_traffic.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Node API and traffic accounting (issue 5): numeric ids for UniProxy clients, applied node
-- reports (a report id is charged once), per-user per-day usage, and the one spend record per
-- user and business day that node traffic keeps up to date.

-- UniProxy clients (XrayR, V2bX, our agent) key users and nodes by integers.
ALTER TABLE users ADD COLUMN node_uid BIGINT;
-- SQLite numbers existing rows by rowid (insertion order); here by sign-up time.
UPDATE users SET node_uid = numbered.no
  FROM (SELECT id, row_number() OVER (ORDER BY create_time, id) AS no FROM users) AS numbered
  WHERE users.id = numbered.id;
CREATE UNIQUE INDEX users_node_uid ON users (node_uid);
-- A new user without one gets the next number of a sequence (SQLite takes MAX + 1 under its one
-- writer). MAX + 1 here would let two concurrent transactions read the same MAX from their
-- snapshots, even under a lock, and collide; a sequence never hands out a number twice and never
-- waits. ferry db copy sets it past the highest number it copied.
CREATE SEQUENCE users_node_uid_seq OWNED BY users.node_uid;
SELECT setval('users_node_uid_seq', COALESCE(MAX(node_uid), 0) + 1, false) FROM users;
CREATE FUNCTION users_node_uid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.node_uid := nextval('users_node_uid_seq');
  RETURN NEW;
END;
$$;
CREATE TRIGGER users_node_uid BEFORE INSERT ON users
  FOR EACH ROW WHEN (NEW.node_uid IS NULL) EXECUTE FUNCTION users_node_uid();

ALTER TABLE agents ADD COLUMN node_no BIGINT;
UPDATE agents SET node_no = numbered.no
  FROM (SELECT id, row_number() OVER (ORDER BY create_time, id) AS no FROM agents) AS numbered
  WHERE agents.id = numbered.id;
CREATE UNIQUE INDEX agents_node_no ON agents (node_no);
-- The same for nodes.
CREATE SEQUENCE agents_node_no_seq OWNED BY agents.node_no;
SELECT setval('agents_node_no_seq', COALESCE(MAX(node_no), 0) + 1, false) FROM agents;
CREATE FUNCTION agents_node_no() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.node_no := nextval('agents_node_no_seq');
  RETURN NEW;
END;
$$;
CREATE TRIGGER agents_node_no BEFORE INSERT ON agents
  FOR EACH ROW WHEN (NEW.node_no IS NULL) EXECUTE FUNCTION agents_node_no();

ALTER TABLE agents ADD COLUMN last_push_time BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN online_users BIGINT NOT NULL DEFAULT 0;

-- A report id seen from a node; a resent report finds its row and changes nothing.
CREATE TABLE node_reports (
  agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  report_id TEXT NOT NULL,
  users BIGINT NOT NULL,
  create_time BIGINT NOT NULL,
  PRIMARY KEY (agent_id, report_id)
);
CREATE INDEX node_reports_time ON node_reports (create_time);

-- What each user moved and paid per business day (the statistics page reads these).
-- upload/download are the node's raw bytes; quota/permanent are the scaled charge by source;
-- overdraft is charge that found neither left (the user is dropped at the next sync).
CREATE TABLE usage_days (
  day TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  upload BIGINT NOT NULL DEFAULT 0,
  download BIGINT NOT NULL DEFAULT 0,
  quota BIGINT NOT NULL DEFAULT 0,
  permanent BIGINT NOT NULL DEFAULT 0,
  overdraft BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (day, user_id)
);

-- Node traffic keeps one spend record per user and day up to date instead of one per report.
CREATE UNIQUE INDEX traffic_records_spend_day ON traffic_records (user_id, day) WHERE type = 'spend';
