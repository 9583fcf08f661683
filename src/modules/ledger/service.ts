/**
 * The two ledgers (DESIGN §6). Every change of a user's permanent traffic, time-package expiry or
 * wallet goes through here, and each writes its ledger row in the caller's transaction, so that
 * balances.traffic = Σ traffic_change, users.vip_expire_time = Σ vip_change, users.wallet_fen = Σ change_fen.
 */
import type { Db } from "../../db/db.ts";
import { businessDay } from "../../lib/time.ts";
import type { TrafficRecordType } from "../traffic/schema.ts";

export type WalletEntryType =
  | "order_spend"
  | "order_refund"
  | "reward"
  | "withdraw"
  | "withdraw_refund"
  | "adjust";

function requireTransaction(db: Db) {
  if (!db.inTransaction) throw new Error("ledger changes must run inside tx()");
}

export interface TrafficChange {
  userId: string;
  type: TrafficRecordType;
  desc: string;
  /** Bytes added to (or, negative, taken from) permanent traffic. */
  traffic?: number;
  /** New time-package expiry; the record keeps the difference. */
  vipExpireTime?: number;
  /** New daily quota of the time package (bytes). */
  dailyLimit?: number | null;
  orderId?: string | null;
  now: number;
  timeZone: string;
}

/** Applies a traffic / time-package change and writes its traffic record. Returns the new balances. */
export async function changeTraffic(
  db: Db,
  change: TrafficChange,
): Promise<{ traffic: number; vipExpireTime: number }> {
  requireTransaction(db);
  const user = await db.get<{ traffic: number; spend_traffic: number; vip_expire_time: number }>(
    `SELECT (SELECT traffic FROM balances WHERE user_id = ?1) AS traffic,
         (SELECT spend_traffic FROM balances WHERE user_id = ?1) AS spend_traffic, vip_expire_time
       FROM users WHERE id = ?1`,
    change.userId,
  );
  if (!user) throw new Error(`no user ${change.userId}`);
  const trafficChange = change.traffic ?? 0;
  const traffic = user.traffic + trafficChange;
  const vipExpireTime = change.vipExpireTime ?? user.vip_expire_time;
  if (trafficChange !== 0) {
    await db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", traffic, change.userId);
  }
  if (vipExpireTime !== user.vip_expire_time || change.dailyLimit !== undefined) {
    await db.run(
      `UPDATE users SET vip_expire_time = ?1, daily_limit = CASE WHEN ?2 = 1 THEN ?3 ELSE daily_limit END
       WHERE id = ?4`,
      vipExpireTime,
      change.dailyLimit !== undefined ? 1 : 0,
      change.dailyLimit ?? null,
      change.userId,
    );
  }
  await db.run(
    `INSERT INTO traffic_records (user_id, type, "desc", traffic_change, vip_change, all_traffic, all_spend, order_id, day, update_time)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    change.userId,
    change.type,
    change.desc,
    trafficChange,
    vipExpireTime - user.vip_expire_time,
    traffic,
    user.spend_traffic,
    change.orderId ?? null,
    businessDay(change.now, change.timeZone),
    change.now,
  );
  return { traffic, vipExpireTime };
}

export interface WalletChange {
  userId: string;
  type: WalletEntryType;
  /** Fen added (positive) or taken (negative). The balance may never go below zero. */
  changeFen: number;
  desc: string;
  orderId?: string | null;
  now: number;
}

/** Applies a wallet change and writes its wallet entry. Returns the new balance in fen. */
export async function changeWallet(db: Db, change: WalletChange): Promise<number> {
  requireTransaction(db);
  if (change.changeFen === 0) throw new Error("a wallet entry must change the balance");
  const row = await db.get<{ wallet_fen: number }>(
    "UPDATE users SET wallet_fen = wallet_fen + ? WHERE id = ? RETURNING wallet_fen",
    change.changeFen,
    change.userId,
  );
  if (!row) throw new Error(`no user ${change.userId}`);
  await db.run(
    'INSERT INTO wallet_entries (user_id, type, change_fen, balance_fen, "desc", order_id, create_time) VALUES (?, ?, ?, ?, ?, ?, ?)',
    change.userId,
    change.type,
    change.changeFen,
    row.wallet_fen,
    change.desc,
    change.orderId ?? null,
    change.now,
  );
  return row.wallet_fen;
}
