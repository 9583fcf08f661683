-- PostgreSQL twin of 006_node_anomalies.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Node reports hardened (issue 11 §4–6): a node charges only the users it was given, and what it
-- reports for anyone else is kept, summed per node, user and day, for the admin to see.

-- The users each node was served on its user list (GET user). delisted_time is NULL while the user
-- is on the list the node holds now, else when the node was first served a list without them;
-- the node may still report them for a grace period after that (src/modules/node-api/admission.ts).
CREATE TABLE node_admissions (
  agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  user_no BIGINT NOT NULL,
  delisted_time BIGINT,
  PRIMARY KEY (agent_id, user_no)
);

-- The ETag of the list the node holds now: an unchanged list is not compared again.
ALTER TABLE agents ADD COLUMN served_users_etag TEXT NOT NULL DEFAULT '';

-- Nodes running when this panel was upgraded have never been served a list the panel remembers,
-- and may push before their next pull: until then, for at most 15 minutes, they charge as before
-- (any user). New nodes get 0 and always pull first.
ALTER TABLE agents ADD COLUMN admit_all_until BIGINT NOT NULL DEFAULT 0;
UPDATE agents SET admit_all_until = (floor(extract(epoch FROM now()))::bigint + 900) * 1000;

-- Traffic a node reported for users it was not given (not charged). One row per node, business day
-- and reported user id; past a node's daily cap of distinct users the rest sum into user_no 0.
-- Rows older than 30 days go when the node next reports one.
CREATE TABLE node_anomalies (
  agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  day TEXT NOT NULL,
  user_no BIGINT NOT NULL,
  reason TEXT NOT NULL CHECK (reason IN ('not_admitted', 'unknown_user', 'others')),
  upload BIGINT NOT NULL,
  download BIGINT NOT NULL,
  reports BIGINT NOT NULL,
  first_time BIGINT NOT NULL,
  last_time BIGINT NOT NULL,
  PRIMARY KEY (agent_id, day, user_no)
);
