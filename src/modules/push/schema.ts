/**
 * Traffic transfers (转赠, seed 000 §2 /push, §3 Push, §4, §5, §8, §9): the wire shape, the inputs
 * and the messages. Shared by the server and the SPA. Amounts are G on the wire, bytes inside.
 */
import { z } from "zod";

export const PUSH_STATES = ["created", "received", "returned"] as const;
/** created: waiting for a receiver; received: credited to one; returned: the full amount went back. */
export type PushState = (typeof PUSH_STATES)[number];

export const PUSH_STATE_TEXT: Record<PushState, string> = {
  created: "待领取",
  received: "已领取",
  returned: "已退回",
};

/** An unreceived transfer goes back to its sender after this many days (the sender may 撤回 sooner). */
export const PUSH_RETURN_DAYS = 7;
/** Codes: 12 characters of 32 (A–Z and 2–9 without I, O, 0, 1), 60 random bits. */
export const PUSH_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const PUSH_CODE_LENGTH = 12;
/** Transfers one account may create per hour (refused attempts do not count). */
export const PUSHES_PER_HOUR = 10;
/** Refused receive attempts one account may make per 10 minutes (against code guessing). */
export const RECEIVE_FAILURES_PER_10_MIN = 10;

export const PushMsg = {
  amountTooLow: (min: number) => `最低转赠${min}G`,
  amountNotWhole: "转赠量须为整数G",
  notEnough: (available: string) => `可转赠的永久流量不足（当前 ${available}G，体验流量不可转赠）`,
  tooFrequent: "转赠过于频繁，请稍后再试",
  receiveTooFrequent: "尝试次数过多，请稍后再试",
  codeInvalid: "转赠码不存在或已失效",
  ownCode: "不能领取自己的转赠码，如需取回请在列表中撤回",
  alreadyReceived: "该转赠已被领取，无法撤回",
  alreadyReturned: "该转赠已退回",
  agencyRefused: "代理用户不能转赠流量",
  codeEmpty: "请输入转赠码",
  amountEmpty: "请输入转赠量",
  // notices and bot messages
  receivedNotice: (sent: string, received: string) =>
    `您转赠的 ${sent}G 流量已被领取，对方实际到账 ${received}G`,
  expiredNotice: (sent: string) => `您转赠的 ${sent}G 流量 ${PUSH_RETURN_DAYS} 天无人领取，已全额退回`,
  // ledger descriptions
  spendDesc: (sent: string) => `转赠流量 ${sent}G`,
  receiveDesc: (received: string, sent: string, ratePercent: string) =>
    `接收转赠 ${received}G（转赠 ${sent}G，手续费 ${ratePercent}%）`,
  cancelDesc: (sent: string) => `转赠退回 ${sent}G（已撤回）`,
  expireDesc: (sent: string) => `转赠退回 ${sent}G（${PUSH_RETURN_DAYS}天未领取）`,
  // SPA
  created: "转赠成功，请把转赠码发给对方",
  received: (received: string) => `领取成功，${received}G 已到账`,
  cancelled: "已撤回，流量已退回",
  cancelConfirm: "撤回后转赠码立即失效，流量全额退回。确定撤回吗？",
  empty: "暂无转赠记录",
  loadFailed: "加载失败，请稍后重试",
} as const;

export type PushDirection = "sent" | "received";

/** One transfer as its sender or receiver sees it. */
export interface Push {
  _id: string;
  /** Sent: what the sender gave; received: what the receiver gave nothing for. G. */
  pushNumber: number;
  /** What the receiver gets (or got): pushNumber × (1 − the cost rate when it was created). G. */
  receiveNumber: number;
  /** Only the sender sees the code (""), so a receiver's list cannot leak it. */
  code: string;
  state: PushState;
  direction: PushDirection;
  createTime: number;
  /** When it was received or returned; 0 while waiting. */
  finishTime: number;
  /** When a waiting transfer goes back by itself; 0 once finished. */
  returnTime: number;
}

export interface PushList {
  /** G. */
  minPushNum: number;
  costRate: number;
  returnDays: number;
  pushList: Push[];
}

/** Whole G; the minimum and the balance are the service's (1037 / 1038), not the parser's. */
export const createPushInput = z.object({
  pushNumber: z.number(PushMsg.amountEmpty),
});

/** A code as typed or pasted: blanks dropped, letters upper-cased. */
export const pushCodeInput = z.object({
  code: z
    .string(PushMsg.codeEmpty)
    .transform((code) => code.replace(/\s+/g, "").toUpperCase())
    .pipe(z.string().min(1, PushMsg.codeEmpty).max(64, PushMsg.codeInvalid)),
});

/** What the receiver gets for `pushBytes` at `costRate`: whole bytes, rounded down. */
export function receiveBytes(pushBytes: number, costRate: number): number {
  return Math.floor(pushBytes * (1 - costRate));
}
