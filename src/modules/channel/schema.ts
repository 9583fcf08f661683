/**
 * Channels (referral partners) and their rebates: seed 000 §3 Channel info / reward entry / invited
 * user, §7 /api/channel/*; seed 001 §3 Channel, §5 bounds, §7 get_user_channel / update_channel.
 * The seed's spellings (chanelInfo, comsumerDuration, comsumer_name) stay on the wire.
 */
import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";
import { EMAIL_PATTERN } from "../user/schema.ts";

export const CHANNEL_CODE_LENGTH = 6;
export const CHANNEL_CODE_PATTERN = /^[A-Za-z0-9]{6}$/;
/** Seed 001 §5: a channel's reward rate lies in 0–0.5. */
export const MAX_REWARD_RATE = 0.5;

export const ChannelMsg = {
  codeFormat: "渠道码须为6位字母或数字",
  codeReserved: "该渠道码为系统保留，请换一个",
  codeTaken: "该渠道码已被其他渠道使用，请换一个",
  userNotFound: "用户不存在",
  rateRange: "返利比例须在 0 到 0.5 之间",
  daysRange: "返利期限须为不小于 0 的整数天数",
  notChannel: "您还不是渠道用户",
  closed: "邀请返利活动已关闭",
} as const;

/** A channel as the back office sees it (seed 001 §3 Channel). */
export interface Channel {
  email: string;
  name: string;
  code: string;
  rewardRate: number;
  comsumerDuration: number;
}

export const getUserChannelInput = z.object({ user_id: recordId("user_id 错误") });

export const updateChannelInput = z.object({
  email: z
    .string()
    .trim()
    .regex(EMAIL_PATTERN, "邮件不正确")
    .transform((value) => value.toLowerCase()),
  /** Omitted: the current name ("" for a new channel). */
  name: z.string().trim().max(50, "渠道名称最多50个字").optional(),
  /** Empty: a random code (a new channel) or the current one (an existing channel). */
  code: z
    .string()
    .trim()
    .refine((code) => code === "" || CHANNEL_CODE_PATTERN.test(code), ChannelMsg.codeFormat)
    .transform((code) => code.toUpperCase())
    .default(""),
  /** Omitted: the setting channelRewardRate (new) or the current rate. */
  rewardRate: z.number().min(0, ChannelMsg.rateRange).max(MAX_REWARD_RATE, ChannelMsg.rateRange).optional(),
  /** Omitted: the setting channelConsumerDuration (new) or the current duration. */
  comsumerDuration: z.number().int(ChannelMsg.daysRange).min(0, ChannelMsg.daysRange).max(36_500).optional(),
});
export type UpdateChannelInput = z.input<typeof updateChannelInput>;

/** `/api/channel/channel_info` (seed 000 §7). */
export interface ChannelInfo {
  chanelInfo: { code: string; rewardRate: number; comsumerDuration: number; name: string } | null;
  /** Yuan: the least a withdrawal may be. */
  min_charge_money: number;
  /** The programme's text, shown as plain text. */
  inviteRule: string;
  /** Off: no new rebates are earned; money already in wallets stays withdrawable. */
  openChannel: boolean;
  /** `${site origin}/?c=CODE#/register`; null without a channel or without a configured origin. */
  inviteLink: string | null;
}

/** A customer who signed up with the channel's code (seed 000 §3 Invited user). */
export interface InvitedUser {
  createTime: number;
  /** Masked: ab***@example.com. */
  email: string;
}

export interface InvitedUsers {
  count: number;
  list: InvitedUser[];
}

/** A rebate (seed 000 §3 Reward entry). Money in yuan. */
export interface RewardEntry {
  comsumer_name: string;
  desc: string;
  userSpend: number;
  reward: number;
  buyTime: number;
  /** The channel's wallet right after this rebate. */
  left: number;
}

export interface RewardList {
  count: number;
  /** Yuan: every rebate of the channel. */
  totalReward: number;
  list: RewardEntry[];
}

/** ab***@example.com: the first two characters of the name (one when it is that short). */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at < 0) return "***";
  const name = email.slice(0, at);
  return `${name.slice(0, name.length > 2 ? 2 : 1)}***${email.slice(at)}`;
}

/**
 * A rebate in fen: rate × spend rounded half up. The rate goes through basis points so that float
 * noise (0.15 × 1010 = 151.49999…) cannot flip the rounding.
 */
export function rewardFen(rate: number, spendFen: number): number {
  const basisPoints = Math.round(Math.min(MAX_REWARD_RATE, Math.max(0, rate)) * 10_000);
  return Math.floor((spendFen * basisPoints + 5_000) / 10_000);
}
