/**
 * The wallet and USDT withdrawals (issue 15 §4–§6). A withdrawal takes the whole balance out of
 * the wallet when it is requested (wallet entry "withdraw"), so the same yuan cannot also pay an
 * order; an admin then settles it (paid) after sending the USDT, or refuses it, which returns the
 * money ("withdraw_refund"). At most one request per user is open (withdrawals_one_open).
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { fenToYuan, formatYuan, yuanToFen } from "../../lib/money.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { changeWallet } from "../ledger/service.ts";
import { createNotice } from "../notice/service.ts";
import { queueAdminMessage, queueUserMessage } from "../telegram/outbox.ts";
import { addressProblem } from "./address.ts";
import {
  type AddressType,
  type AdminWallet,
  type ChangeAddressInput,
  type Charge,
  type SpendEntry,
  type Wallet,
  WalletMsg,
  WITHDRAWAL_STATUS_TEXT,
  type Withdrawal,
  type WithdrawalStatus,
} from "./schema.ts";

const WALLET_HREF = "/#/wallet";
const LIST_LIMIT = 500;

interface WithdrawalRow {
  id: string;
  user_id: string;
  money_fen: number;
  address_type: string;
  address: string;
  status: WithdrawalStatus;
  msg: string;
  txid: string;
  left_fen: number;
  request_time: number;
  paid_time: number | null;
  refuse_time: number | null;
}

interface AddressRow {
  address_type: AddressType;
  address: string;
}

function toWithdrawal(row: WithdrawalRow): Withdrawal {
  return {
    _id: row.id,
    money: fenToYuan(row.money_fen),
    msg: row.msg,
    requestTime: row.request_time,
    paidTime: row.paid_time ?? 0,
    left: fenToYuan(row.left_fen),
    status: row.status,
    txid: row.txid,
    addressType: row.address_type,
    address: row.address,
  };
}

function walletFen(ctx: AppContext, userId: string): number {
  const row = ctx.db
    .query<{ wallet_fen: number }, [string]>("SELECT wallet_fen FROM users WHERE id = ?")
    .get(userId);
  if (!row) throw new RpcError(Code.notFound, WalletMsg.userNotFound);
  return row.wallet_fen;
}

function addressOf(ctx: AppContext, userId: string): AddressRow | null {
  return ctx.db
    .query<AddressRow, [string]>("SELECT address_type, address FROM wallet_addresses WHERE user_id = ?")
    .get(userId);
}

/** `/api/wallet/mywallet`: the balance, the payee address and the minimum withdrawal (yuan). */
export function getWallet(ctx: AppContext, userId: string): Wallet {
  const address = addressOf(ctx, userId);
  return {
    money: fenToYuan(walletFen(ctx, userId)),
    address: address?.address ?? "",
    addressType: address?.address_type ?? "",
    min_charge_money: ctx.settings.get("min_charge_money"),
  };
}

/** Stores the payee address after checking its checksum (1000 with the reason otherwise). */
export function changeAddress(
  ctx: AppContext,
  userId: string,
  input: ChangeAddressInput,
  now = Date.now(),
): Wallet {
  const problem = addressProblem(input.addressType, input.address);
  if (problem) throw new RpcError(Code.badInput, problem);
  ctx.db
    .query(
      `INSERT INTO wallet_addresses (user_id, address_type, address, update_time) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (user_id) DO UPDATE SET address_type = ?2, address = ?3, update_time = ?4`,
    )
    .run(userId, input.addressType, input.address, now);
  return getWallet(ctx, userId);
}

/**
 * `/api/wallet/make_charge`: withdraws the whole balance to the stored address. 1012 without an
 * address, while another request is open, or below min_charge_money. The balance is read and
 * taken inside one immediate transaction, so concurrent requests and wallet payments queue.
 */
export function requestWithdrawal(ctx: AppContext, userId: string, now = Date.now()): Withdrawal {
  const row = tx(ctx.db, () => {
    const address = addressOf(ctx, userId);
    if (!address) throw new RpcError(Code.withdrawRefused, WalletMsg.noAddress);
    const open = ctx.db
      .query<{ id: string }, [string]>("SELECT id FROM withdrawals WHERE user_id = ? AND status = 'request'")
      .get(userId);
    if (open) throw new RpcError(Code.withdrawRefused, WalletMsg.alreadyOpen);
    const balance = walletFen(ctx, userId);
    const minYuan = ctx.settings.get("min_charge_money");
    if (balance <= 0 || balance < yuanToFen(minYuan)) {
      throw new RpcError(Code.withdrawRefused, WalletMsg.belowMinimum(minYuan));
    }
    const left = changeWallet(ctx.db, {
      userId,
      type: "withdraw",
      changeFen: -balance,
      desc: WalletMsg.withdrawDesc(address.address),
      now,
    });
    const inserted = ctx.db
      .query<WithdrawalRow, [string, string, number, string, string, number, number]>(
        `INSERT INTO withdrawals (id, user_id, money_fen, address_type, address, left_fen, request_time)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(newId(now), userId, balance, address.address_type, address.address, left, now) as WithdrawalRow;
    const email = ctx.db
      .query<{ email: string }, [string]>("SELECT email FROM users WHERE id = ?")
      .get(userId);
    queueAdminMessage(
      ctx,
      WalletMsg.requestedAdmin(email?.email ?? userId, formatYuan(balance), address.address_type),
      `withdraw-request:${inserted.id}`,
    );
    return inserted;
  });
  return toWithdrawal(row);
}

/** `/api/wallet/charge_list`: the caller's withdrawals, newest first. */
export function listWithdrawals(ctx: AppContext, userId: string): Withdrawal[] {
  return ctx.db
    .query<WithdrawalRow, [string, number]>(
      "SELECT * FROM withdrawals WHERE user_id = ? ORDER BY request_time DESC, rowid DESC LIMIT ?",
    )
    .all(userId, LIST_LIMIT)
    .map(toWithdrawal);
}

/** `/api/wallet/spend_list`: the caller's wallet ledger, newest first. */
export function listSpendEntries(ctx: AppContext, userId: string): SpendEntry[] {
  return ctx.db
    .query<
      {
        id: number;
        type: string;
        change_fen: number;
        balance_fen: number;
        desc: string;
        create_time: number;
      },
      [string, number]
    >(
      `SELECT id, type, change_fen, balance_fen, desc, create_time FROM wallet_entries
       WHERE user_id = ? ORDER BY create_time DESC, id DESC LIMIT ?`,
    )
    .all(userId, LIST_LIMIT)
    .map((row) => ({
      _id: row.id,
      spendMoney: fenToYuan(row.change_fen),
      desc: row.desc,
      time: row.create_time,
      left: fenToYuan(row.balance_fen),
      type: row.type,
    }));
}

type ChargeRow = WithdrawalRow & { email: string };

function toCharge(row: ChargeRow): Charge {
  return { ...toWithdrawal(row), uid: row.user_id, email: row.email, refuseTime: row.refuse_time ?? 0 };
}

const CHARGE_SELECT = "SELECT w.*, u.email FROM withdrawals w JOIN users u ON u.id = w.user_id";

/** `/api/admin/charge/charge_list`: every withdrawal (or those of one status), newest first. */
export function listCharges(ctx: AppContext, filter: { status?: WithdrawalStatus } = {}): Charge[] {
  const where = filter.status ? "WHERE w.status = ?1" : "WHERE ?1 IS NULL";
  return ctx.db
    .query<ChargeRow, [string | null, number]>(
      `${CHARGE_SELECT} ${where} ORDER BY w.request_time DESC, w.rowid DESC LIMIT ?2`,
    )
    .all(filter.status ?? null, LIST_LIMIT)
    .map(toCharge);
}

export function findCharge(ctx: AppContext, id: string): Charge {
  const row = ctx.db.query<ChargeRow, [string]>(`${CHARGE_SELECT} WHERE w.id = ?`).get(id);
  if (!row) throw new RpcError(Code.notFound, WalletMsg.chargeNotFound);
  return toCharge(row);
}

/** Moves an open request to `status`; a request already settled or refused is 1012, an unknown one 1004. */
function closeRequest(
  ctx: AppContext,
  id: string,
  status: "paid" | "refused",
  fields: { msg?: string; txid?: string },
  now: number,
): WithdrawalRow {
  const row = ctx.db
    .query<WithdrawalRow, [string, number, string | null, string | null, string]>(
      `UPDATE withdrawals SET status = ?1,
         paid_time = CASE WHEN ?1 = 'paid' THEN ?2 ELSE paid_time END,
         refuse_time = CASE WHEN ?1 = 'refused' THEN ?2 ELSE refuse_time END,
         msg = COALESCE(?3, msg), txid = COALESCE(?4, txid)
       WHERE id = ?5 AND status = 'request' RETURNING *`,
    )
    .get(status, now, fields.msg ?? null, fields.txid ?? null, id);
  if (row) return row;
  const existing = findCharge(ctx, id);
  throw new RpcError(Code.withdrawRefused, WalletMsg.notOpen(WITHDRAWAL_STATUS_TEXT[existing.status]));
}

function tellCustomer(ctx: AppContext, row: WithdrawalRow, text: string) {
  createNotice(ctx, { userId: row.user_id, desc: text, href: WALLET_HREF });
  queueUserMessage(ctx, row.user_id, text, `withdraw-${row.status}:${row.id}`);
}

/** `/api/admin/charge/checkout_charge`: the USDT was sent; records the settle time and the txid. */
export function settleCharge(ctx: AppContext, id: string, txid = "", now = Date.now()): Charge {
  tx(ctx.db, () => {
    const row = closeRequest(ctx, id, "paid", { txid }, now);
    tellCustomer(ctx, row, WalletMsg.settledNotice(formatYuan(row.money_fen)));
  });
  return findCharge(ctx, id);
}

/** Refuses an open request: the money goes back to the wallet; the reason becomes its message. */
export function refuseCharge(ctx: AppContext, id: string, reason: string, now = Date.now()): Charge {
  tx(ctx.db, () => {
    const row = closeRequest(ctx, id, "refused", { msg: reason }, now);
    changeWallet(ctx.db, {
      userId: row.user_id,
      type: "withdraw_refund",
      changeFen: row.money_fen,
      desc: WalletMsg.refundDesc(reason),
      now,
    });
    tellCustomer(ctx, row, WalletMsg.refusedNotice(formatYuan(row.money_fen), reason));
  });
  return findCharge(ctx, id);
}

/** `/api/admin/charge/message`: a message the customer sees on the withdrawal, in any status. */
export function messageCharge(ctx: AppContext, id: string, msg: string): Charge {
  const changed = ctx.db.query("UPDATE withdrawals SET msg = ? WHERE id = ?").run(msg, id);
  if (changed.changes === 0) throw new RpcError(Code.notFound, WalletMsg.chargeNotFound);
  return findCharge(ctx, id);
}

/** `/api/admin/charge/wallet`: a user's balance and payee address. */
export function adminWallet(ctx: AppContext, userId: string): AdminWallet {
  const wallet = getWallet(ctx, userId);
  return { money: wallet.money, addressType: wallet.addressType, address: wallet.address };
}
