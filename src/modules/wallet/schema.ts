/**
 * The wallet and its USDT withdrawals (seed 000 §2 /wallet, §3 Wallet, §4, §5, §7 /api/wallet/*,
 * §8 1012; seed 001 §2.7, §3 Withdrawal and Wallet, §7 /api/admin/charge/*, §8): wire shapes,
 * inputs and messages, shared by the server and the SPA. Money is yuan on the wire.
 */
import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";

export const ADDRESS_TYPES = ["USDT-TRC20", "USDT-ERC20"] as const;
export type AddressType = (typeof ADDRESS_TYPES)[number];

export const WITHDRAWAL_STATUSES = ["request", "paid", "refused"] as const;
/** request: waiting for an admin (the money already left the wallet); paid: settled; refused: returned. */
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

export const WITHDRAWAL_STATUS_TEXT: Record<WithdrawalStatus, string> = {
  request: "待结算",
  paid: "已结算",
  refused: "已拒绝",
};

export const WalletMsg = {
  noAddress: "请先填写并确认您的收款地址",
  belowMinimum: (minYuan: number) => `申请提现失败，最低提现金额:${minYuan}元`,
  alreadyOpen: "您已有一笔待结算的提现申请，请等待结算后再申请",
  addressEmpty: "请填写收款地址",
  addressTypeEmpty: "请选择地址类型（USDT-ERC20 或 USDT-TRC20）",
  badTrc20: "USDT-TRC20 地址无效：应为 T 开头的 34 位 TRON 地址，请检查是否抄错",
  badErc20Shape: "USDT-ERC20 地址无效：应为 0x 开头加 40 位十六进制字符",
  badErc20Checksum: "USDT-ERC20 地址校验失败：大小写与校验和不符，请直接复制原地址",
  chargeNotFound: "提现申请不存在",
  notOpen: (statusText: string) => `该提现申请${statusText}，不能再操作`,
  reasonEmpty: "请填写拒绝原因",
  msgEmpty: "留言不能为空",
  userNotFound: "用户不存在",
  // ledger descriptions, notices and bot messages
  withdrawDesc: (address: string) => `申请提现至 ${address}`,
  refundDesc: (reason: string) => `提现被拒绝，退回钱包：${reason}`,
  requestedAdmin: (email: string, yuan: string, type: string) =>
    `新的提现申请：${email} 申请提现 ${yuan} 元（${type}），请到提现管理结算`,
  settledNotice: (yuan: string) => `您的提现 ${yuan} 元已结算，请查收`,
  refusedNotice: (yuan: string, reason: string) => `您的提现 ${yuan} 元被拒绝，已退回钱包：${reason}`,
  // SPA
  addressSaved: "收款地址已保存",
  withdrawConfirm: (yuan: string, address: string) =>
    `确认将钱包余额 ${yuan} 元全部提现到 ${address}？提现申请提交后一个工作日内结算。`,
  withdrawn: "提现申请已提交，一个工作日内结算",
  settled: "结算成功",
  settleFailed: "结算失败",
  messaged: "留言成功",
  messageFailed: "留言失败",
  refused: "已拒绝，金额已退回用户钱包",
  refuseFailed: "拒绝失败",
} as const;

/** Seed 000 §3 Wallet. money and min_charge_money in yuan. */
export interface Wallet {
  money: number;
  address: string;
  addressType: AddressType | "";
  min_charge_money: number;
}

/** A withdrawal as its owner sees it (seed 000 §3 Withdrawal entry). */
export interface Withdrawal {
  _id: string;
  money: number;
  msg: string;
  requestTime: number;
  /** Settle time, 0 until settled. */
  paidTime: number;
  /** The wallet right after the request (yuan). */
  left: number;
  status: WithdrawalStatus;
  txid: string;
  addressType: string;
  address: string;
}

/** A withdrawal in the back office (seed 001 §3 Withdrawal), with whose it is. */
export interface Charge extends Withdrawal {
  uid: string;
  email: string;
  refuseTime: number;
}

/** Seed 000 §3 Spend entry: one wallet ledger row. */
export interface SpendEntry {
  _id: number;
  /** Yuan, negative when money left the wallet. */
  spendMoney: number;
  desc: string;
  time: number;
  left: number;
  type: string;
}

/** The admin's view of a payee (seed 001 §3 Wallet). */
export interface AdminWallet {
  money: number;
  addressType: AddressType | "";
  address: string;
}

const chargeId = recordId(WalletMsg.chargeNotFound);

export const changeAddressInput = z.object({
  addressType: z.enum(ADDRESS_TYPES, WalletMsg.addressTypeEmpty),
  address: z
    .string(WalletMsg.addressEmpty)
    .trim()
    .min(1, WalletMsg.addressEmpty)
    .max(100, WalletMsg.addressEmpty),
});
export type ChangeAddressInput = z.output<typeof changeAddressInput>;

export const chargeListInput = z.object({ status: z.enum(WITHDRAWAL_STATUSES).optional() });

export const checkoutChargeInput = z.object({
  charge_id: chargeId,
  txid: z.string().trim().max(200, "交易哈希过长").optional(),
});

export const chargeMessageInput = z.object({
  charge_id: chargeId,
  msg: z.string(WalletMsg.msgEmpty).trim().min(1, WalletMsg.msgEmpty).max(500, "留言不能超过500字"),
});

export const refuseChargeInput = z.object({
  charge_id: chargeId,
  reason: z
    .string(WalletMsg.reasonEmpty)
    .trim()
    .min(1, WalletMsg.reasonEmpty)
    .max(200, "拒绝原因不能超过200字"),
});

export const adminWalletInput = z.object({ uid: recordId(WalletMsg.userNotFound) });

const SHAPE: Record<AddressType, RegExp> = {
  "USDT-TRC20": /^T[1-9A-HJ-NP-Za-km-z]{33}$/,
  "USDT-ERC20": /^0x[0-9a-fA-F]{40}$/,
};

/** The SPA's shape check before sending; the checksum is the server's (wallet/address.ts). */
export function addressShapeProblem(type: AddressType, address: string): string | null {
  if (address.trim() === "") return WalletMsg.addressEmpty;
  if (SHAPE[type].test(address.trim())) return null;
  return type === "USDT-TRC20" ? WalletMsg.badTrc20 : WalletMsg.badErc20Shape;
}
