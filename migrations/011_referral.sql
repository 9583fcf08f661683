-- Referral money (issue 15): channels, their rebates, withdrawal addresses and withdrawals. Every
-- change of a wallet is also a wallet_entries row (ledger/service.ts changeWallet).

-- A channel belongs to one user, who is then of type channel (seed 001 §3 Channel). Customers who
-- signed up with its code carry it in users.channel_code. reward_rate 0–0.5 of what an invited
-- customer pays; consumer_duration: days after the customer's sign-up during which orders earn.
CREATE TABLE channels (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  code TEXT NOT NULL UNIQUE COLLATE NOCASE,
  reward_rate REAL NOT NULL CHECK (reward_rate >= 0 AND reward_rate <= 0.5),
  consumer_duration INTEGER NOT NULL CHECK (consumer_duration >= 0),
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
);

-- One rebate per paid order (order_id UNIQUE: exactly once, whatever path credits the order),
-- written in the crediting transaction together with the channel owner's wallet entry.
-- consumer_email is kept so the record survives the customer; left_fen: the wallet after it.
CREATE TABLE channel_rewards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  consumer_user_id TEXT REFERENCES users (id) ON DELETE SET NULL,
  consumer_email TEXT NOT NULL,
  order_id TEXT NOT NULL UNIQUE,
  desc TEXT NOT NULL DEFAULT '',
  user_spend_fen INTEGER NOT NULL CHECK (user_spend_fen >= 0),
  reward_rate REAL NOT NULL,
  reward_fen INTEGER NOT NULL CHECK (reward_fen > 0),
  left_fen INTEGER NOT NULL,
  buy_time INTEGER NOT NULL
);
CREATE INDEX channel_rewards_channel ON channel_rewards (channel_user_id, buy_time);

-- Where a user's withdrawals are paid (seed 000 §3 Wallet: addressType, address).
CREATE TABLE wallet_addresses (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  address_type TEXT NOT NULL CHECK (address_type IN ('USDT-ERC20', 'USDT-TRC20')),
  address TEXT NOT NULL,
  update_time INTEGER NOT NULL
);

-- Withdrawals (seed 001 §3 Withdrawal). The money leaves the wallet when requested (wallet entry
-- 'withdraw'), so it cannot be spent twice; a refusal returns it ('withdraw_refund'). The address
-- is copied at request time. status: request → paid (settled) or refused. At most one open
-- request per user.
CREATE TABLE withdrawals (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  money_fen INTEGER NOT NULL CHECK (money_fen > 0),
  address_type TEXT NOT NULL,
  address TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'request' CHECK (status IN ('request', 'paid', 'refused')),
  msg TEXT NOT NULL DEFAULT '',
  txid TEXT NOT NULL DEFAULT '',
  left_fen INTEGER NOT NULL,
  request_time INTEGER NOT NULL,
  paid_time INTEGER,
  refuse_time INTEGER
);
CREATE INDEX withdrawals_user ON withdrawals (user_id, request_time);
CREATE INDEX withdrawals_status ON withdrawals (status, request_time);
CREATE UNIQUE INDEX withdrawals_one_open ON withdrawals (user_id) WHERE status = 'request';
