/**
 * Ledger sums for tests: what an account's balances are, and what its ledger rows add up to
 * (traffic and time package in traffic_records, wallet money in wallet_entries). They must be equal.
 */
import type { Db } from "../src/db/db.ts";

export interface Footing {
  traffic: number;
  vip: number;
  wallet: number;
}

/** The account's balances as stored. */
export async function balancesOf(db: Db, userId: string): Promise<Footing> {
  const row = await db.get<{ traffic: number; vip_expire_time: number; wallet_fen: number }>(
    "SELECT b.traffic, u.vip_expire_time, u.wallet_fen FROM users u JOIN balances b ON b.user_id = u.id WHERE u.id = ?",
    userId,
  );
  if (!row) throw new Error(`no user ${userId}`);
  return { traffic: row.traffic, vip: row.vip_expire_time, wallet: row.wallet_fen };
}

/** What the account's ledger rows add up to. */
export async function ledgersOf(db: Db, userId: string): Promise<Footing> {
  const records = await db.get<{ traffic: number; vip: number }>(
    "SELECT COALESCE(SUM(traffic_change), 0) AS traffic, COALESCE(SUM(vip_change), 0) AS vip FROM traffic_records WHERE user_id = ?",
    userId,
  );
  const wallet = await db.get<{ fen: number }>(
    "SELECT COALESCE(SUM(change_fen), 0) AS fen FROM wallet_entries WHERE user_id = ?",
    userId,
  );
  return { traffic: records?.traffic ?? 0, vip: records?.vip ?? 0, wallet: wallet?.fen ?? 0 };
}

/** The accounts whose balances differ from their ledgers, with both (an empty list when all agree). */
export async function ledgerMismatches(
  db: Db,
  userIds: readonly string[],
): Promise<{ user: string; balances: Footing; ledgers: Footing }[]> {
  const mismatches = [];
  for (const user of userIds) {
    const balances = await balancesOf(db, user);
    const ledgers = await ledgersOf(db, user);
    if (JSON.stringify(balances) !== JSON.stringify(ledgers)) mismatches.push({ user, balances, ledgers });
  }
  return mismatches;
}
