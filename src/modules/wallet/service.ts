/**
 * The wallet and USDT withdrawals (issue 15 §4–§6). A withdrawal takes the whole balance out of
 * the wallet when it is requested (wallet entry "withdraw"), so the same yuan cannot also pay an
 * order; an admin then settles it (paid) after sending the USDT, or refuses it, which returns the
 * money ("withdraw_refund"). At most one request per user is open (withdrawals_one_open).
 */
import type { AppContext } from "../../context.ts";
import { rowOrderSql, tx } from "../../db/db.ts";
import { fenToYuan, formatYuan, yuanToFen } from "../../lib/money.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { recordAudit } from "../audit/service.ts";
import { changeWallet } from "../ledger/service.ts";
import { createNotice } from "../notice/service.ts";
import { queueAdminMessage, queueUserMessage } from "../telegram/outbox.ts";
import { queueWebhookEvent } from "../webhook/outbox.ts";
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

async function walletFen(ctx: AppContext, userId: string): Promise<number> {
  const row = await ctx.db.get<{ wallet_fen: number }>("SELECT wallet_fen FROM users WHERE id = ?", userId);
  if (!row) throw new RpcError(Code.notFound, WalletMsg.userNotFound);
  return row.wallet_fen;
}

async function addressOf(ctx: AppContext, userId: string): Promise<AddressRow | null> {
  return await ctx.db.get<AddressRow>(
    "SELECT address_type, address FROM wallet_addresses WHERE user_id = ?",
    userId,
  );
}

/** `/api/wallet/mywallet`: the balance, the payee address and the minimum withdrawal (yuan). */
export async function getWallet(ctx: AppContext, userId: string): Promise<Wallet> {
  const address = await addressOf(ctx, userId);
  return {
    money: fenToYuan(await walletFen(ctx, userId)),
    address: address?.address ?? "",
    addressType: address?.address_type ?? "",
    min_charge_money: await ctx.settings.get("min_charge_money"),
  };
}

/** Stores the payee address after checking its checksum (1000 with the reason otherwise). */
export async function changeAddress(
  ctx: AppContext,
  userId: string,
  input: ChangeAddressInput,
  now = Date.now(),
): Promise<Wallet> {
  const problem = addressProblem(input.addressType, input.address);
  if (problem) throw new RpcError(Code.badInput, problem);
  await ctx.db.run(
    `INSERT INTO wallet_addresses (user_id, address_type, address, update_time) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (user_id) DO UPDATE SET address_type = ?2, address = ?3, update_time = ?4`,
    userId,
    input.addressType,
    input.address,
    now,
  );
  return await getWallet(ctx, userId);
}

/**
 * `/api/wallet/make_charge`: withdraws the whole balance to the stored address. 1012 without an
 * address, while another request is open, or below min_charge_money. The balance is read and
 * taken inside one immediate transaction, so concurrent requests and wallet payments queue.
 */
export async function requestWithdrawal(
  ctx: AppContext,
  userId: string,
  now = Date.now(),
): Promise<Withdrawal> {
  const row = await tx(ctx.db, async () => {
    const address = await addressOf(ctx, userId);
    if (!address) throw new RpcError(Code.withdrawRefused, WalletMsg.noAddress);
    const open = await ctx.db.get<{ id: string }>(
      "SELECT id FROM withdrawals WHERE user_id = ? AND status = 'request'",
      userId,
    );
    if (open) throw new RpcError(Code.withdrawRefused, WalletMsg.alreadyOpen);
    const balance = await walletFen(ctx, userId);
    const minYuan = await ctx.settings.get("min_charge_money");
    if (balance <= 0 || balance < yuanToFen(minYuan)) {
      throw new RpcError(Code.withdrawRefused, WalletMsg.belowMinimum(minYuan));
    }
    const left = await changeWallet(ctx.db, {
      userId,
      type: "withdraw",
      changeFen: -balance,
      desc: WalletMsg.withdrawDesc(address.address),
      now,
    });
    const inserted = (await ctx.db.get<WithdrawalRow>(
      `INSERT INTO withdrawals (id, user_id, money_fen, address_type, address, left_fen, request_time)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      newId(now),
      userId,
      balance,
      address.address_type,
      address.address,
      left,
      now,
    )) as WithdrawalRow;
    const email = await ctx.db.get<{ email: string }>("SELECT email FROM users WHERE id = ?", userId);
    await queueAdminMessage(
      ctx,
      WalletMsg.requestedAdmin(email?.email ?? userId, formatYuan(balance), address.address_type),
      `withdraw-request:${inserted.id}`,
    );
    await queueWebhookEvent(ctx, "withdrawal.requested", withdrawalData(inserted, email?.email), now);
    return inserted;
  });
  return toWithdrawal(row);
}

/** `/api/wallet/charge_list`: the caller's withdrawals, newest first. */
export async function listWithdrawals(ctx: AppContext, userId: string): Promise<Withdrawal[]> {
  return (
    await ctx.db.all<WithdrawalRow>(
      `SELECT * FROM withdrawals WHERE user_id = ? ORDER BY request_time DESC, ${rowOrderSql(ctx.db)} DESC LIMIT ?`,
      userId,
      LIST_LIMIT,
    )
  ).map(toWithdrawal);
}

/** `/api/wallet/spend_list`: the caller's wallet ledger, newest first. */
export async function listSpendEntries(ctx: AppContext, userId: string): Promise<SpendEntry[]> {
  return (
    await ctx.db.all<{
      id: number;
      type: string;
      change_fen: number;
      balance_fen: number;
      desc: string;
      create_time: number;
    }>(
      `SELECT id, type, change_fen, balance_fen, "desc", create_time FROM wallet_entries
       WHERE user_id = ? ORDER BY create_time DESC, id DESC LIMIT ?`,
      userId,
      LIST_LIMIT,
    )
  ).map((row) => ({
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
export async function listCharges(
  ctx: AppContext,
  filter: { status?: WithdrawalStatus } = {},
): Promise<Charge[]> {
  const where = filter.status ? "WHERE w.status = ?1" : "WHERE CAST(?1 AS TEXT) IS NULL";
  return (
    await ctx.db.all<ChargeRow>(
      `${CHARGE_SELECT} ${where} ORDER BY w.request_time DESC, ${rowOrderSql(ctx.db, "w")} DESC LIMIT ?2`,
      filter.status ?? null,
      LIST_LIMIT,
    )
  ).map(toCharge);
}

export async function findCharge(ctx: AppContext, id: string): Promise<Charge> {
  const row = await ctx.db.get<ChargeRow>(`${CHARGE_SELECT} WHERE w.id = ?`, id);
  if (!row) throw new RpcError(Code.notFound, WalletMsg.chargeNotFound);
  return toCharge(row);
}

/** Moves an open request to `status`; a request already settled or refused is 1012, an unknown one 1004. */
async function closeRequest(
  ctx: AppContext,
  id: string,
  status: "paid" | "refused",
  fields: { msg?: string; txid?: string },
  now: number,
): Promise<WithdrawalRow> {
  const row = await ctx.db.get<WithdrawalRow>(
    `UPDATE withdrawals SET status = ?1,
         paid_time = CASE WHEN ?1 = 'paid' THEN ?2 ELSE paid_time END,
         refuse_time = CASE WHEN ?1 = 'refused' THEN ?2 ELSE refuse_time END,
         msg = COALESCE(?3, msg), txid = COALESCE(?4, txid)
       WHERE id = ?5 AND status = 'request' RETURNING *`,
    status,
    now,
    fields.msg ?? null,
    fields.txid ?? null,
    id,
  );
  if (row) return row;
  const existing = await findCharge(ctx, id);
  throw new RpcError(Code.withdrawRefused, WalletMsg.notOpen(WITHDRAWAL_STATUS_TEXT[existing.status]));
}

/** The data of withdrawal.requested and withdrawal.settled (README "Webhooks"). */
function withdrawalData(row: WithdrawalRow, email: string | undefined) {
  return {
    withdrawalId: row.id,
    userId: row.user_id,
    email,
    moneyFen: row.money_fen,
    addressType: row.address_type,
    address: row.address,
    status: row.status,
    requestTime: row.request_time,
    paidTime: row.paid_time,
    refuseTime: row.refuse_time,
    txid: row.txid,
    msg: row.msg,
  };
}

/** The customer is told (bell and bot), and webhooks get withdrawal.settled (paid or refused). */
async function tellCustomer(ctx: AppContext, row: WithdrawalRow, text: string) {
  await createNotice(ctx, { userId: row.user_id, desc: text, href: WALLET_HREF });
  await queueUserMessage(ctx, row.user_id, text, `withdraw-${row.status}:${row.id}`);
  await queueWebhookEvent(ctx, "withdrawal.settled", async () =>
    withdrawalData(
      row,
      (await ctx.db.get<{ email: string }>("SELECT email FROM users WHERE id = ?", row.user_id))?.email,
    ),
  );
}

/** `/api/admin/charge/checkout_charge`: the USDT was sent; records the settle time and the txid. */
export async function settleCharge(
  ctx: AppContext,
  id: string,
  txid = "",
  now = Date.now(),
): Promise<Charge> {
  await tx(ctx.db, async () => {
    const row = await closeRequest(ctx, id, "paid", { txid }, now);
    await tellCustomer(ctx, row, WalletMsg.settledNotice(formatYuan(row.money_fen)));
    await recordAudit(ctx.db, {
      action: "withdrawal.checkout",
      target: id,
      diff: {
        status: { old: "request", new: "paid" },
        money: { new: fenToYuan(row.money_fen) },
        txid: { new: txid },
      },
    });
  });
  return await findCharge(ctx, id);
}

/** Refuses an open request: the money goes back to the wallet; the reason becomes its message. */
export async function refuseCharge(
  ctx: AppContext,
  id: string,
  reason: string,
  now = Date.now(),
): Promise<Charge> {
  await tx(ctx.db, async () => {
    const row = await closeRequest(ctx, id, "refused", { msg: reason }, now);
    await changeWallet(ctx.db, {
      userId: row.user_id,
      type: "withdraw_refund",
      changeFen: row.money_fen,
      desc: WalletMsg.refundDesc(reason),
      now,
    });
    await tellCustomer(ctx, row, WalletMsg.refusedNotice(formatYuan(row.money_fen), reason));
    await recordAudit(ctx.db, {
      action: "withdrawal.refuse",
      target: id,
      diff: {
        status: { old: "request", new: "refused" },
        money: { new: fenToYuan(row.money_fen) },
        reason: { new: reason },
      },
    });
  });
  return await findCharge(ctx, id);
}

/** `/api/admin/charge/message`: a message the customer sees on the withdrawal, in any status. */
export async function messageCharge(ctx: AppContext, id: string, msg: string): Promise<Charge> {
  await tx(ctx.db, async () => {
    const before = await findCharge(ctx, id);
    await ctx.db.run("UPDATE withdrawals SET msg = ? WHERE id = ?", msg, id);
    if (before.msg === msg) return;
    await recordAudit(ctx.db, {
      action: "notice.withdrawal_message",
      target: id,
      diff: { msg: { old: before.msg, new: msg } },
    });
  });
  return await findCharge(ctx, id);
}

/** `/api/admin/charge/wallet`: a user's balance and payee address. */
export async function adminWallet(ctx: AppContext, userId: string): Promise<AdminWallet> {
  const wallet = await getWallet(ctx, userId);
  return { money: wallet.money, addressType: wallet.addressType, address: wallet.address };
}
