-- Back-office operations (issue 16): agencies, the audit of admin adjustments, and indexes the
-- user list and the statistics read by.

-- An agency owner (the user list's "secondary agent"). Customers attached to it carry its id in
-- users.agency_id and see the agency menu (users.is_agency = 1); the owner allocates its own
-- permanent traffic to them (agency_spend on the owner, agency_allocate on the customer).
CREATE TABLE agencies (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  create_time INTEGER NOT NULL
);
ALTER TABLE users ADD COLUMN agency_id TEXT REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX users_agency ON users (agency_id) WHERE agency_id IS NOT NULL;

-- Every change of a customer's traffic, time package or wallet made by an admin: who, why and
-- what, next to the ledger rows it wrote in the same transaction (traffic_records type
-- admin_adjust, wallet_entries type adjust).
CREATE TABLE admin_adjustments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  admin_id TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  traffic_change INTEGER NOT NULL DEFAULT 0,
  vip_change INTEGER NOT NULL DEFAULT 0,
  wallet_change_fen INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL,
  create_time INTEGER NOT NULL
);
CREATE INDEX admin_adjustments_user ON admin_adjustments (user_id, create_time);

CREATE INDEX users_create_time ON users (create_time);
CREATE INDEX users_channel_code ON users (channel_code);
CREATE INDEX orders_pay_time ON orders (pay_time) WHERE status = 'paied';
