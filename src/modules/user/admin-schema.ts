/**
 * The back office's user management (seed 001 §2.5, §3 User, §7 /api/admin/users/*): the list,
 * one user, the editable fields and admin adjustments of traffic, time package and wallet.
 * Shared by the server, the CLI and the SPA. Wire names are the seed's.
 */
import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";
import { loginInput, type Role } from "./schema.ts";

/** Seed 001 §9: the user list asks for the newest 100 by default. */
export const DEFAULT_USER_LIST_COUNT = 100;
export const MAX_USER_LIST_COUNT = 5000;
/** A user's multiplier (scale) lies in 0–100. */
export const MAX_USER_SCALE = 100;
/** Bounds of one adjustment: traffic in G, days, wallet in yuan. */
export const MAX_ADJUST_G = 1_000_000;
export const MAX_ADJUST_DAYS = 36_500;
export const MAX_ADJUST_YUAN = 1_000_000;
export const MAX_DAILY_UNLIMIT_G = 1_000_000;
export const MAX_REASON_LENGTH = 200;

export const AdminUserMsg = {
  saved: "用户配置成功",
  saveFailed: "用户配置失败",
  channelSaved: "渠道配置成功",
  channelFailed: "渠道配置失败",
  passwordSaved: "密码已修改",
  notFound: "用户不存在",
  reasonRequired: "调整余额须填写原因",
  nothingToAdjust: "请填写要调整的流量、天数或余额",
  trafficBelowZero: "扣减后永久流量将小于 0（体验流量不可扣减）",
  daysBelowZero: "扣减的天数超过了剩余时长",
  walletBelowZero: "扣减后余额将小于 0",
  scaleRange: `倍率须在 0 到 ${MAX_USER_SCALE} 之间`,
  countRange: `数量须为 1 到 ${MAX_USER_LIST_COUNT} 的整数`,
} as const;

/** A row of `/api/admin/users/userlist` and the answer of `/api/admin/users/user`. Money in yuan, traffic in bytes. */
export interface AdminUser {
  _id: string;
  email: string;
  /** Seed 001 §3 User `disable`. */
  disable: boolean;
  /** The multiplier: what the user is charged per byte relative to others. */
  scale: number;
  /** "" when the user came without a channel. */
  channel_code: string;
  createTime: number;
  paidUser: boolean;
  /** The role as sessions resolve it (admin_id / yunying_list included). */
  type: Role;
  is_agency: boolean;
  /** The agency owner's e-mail (seed 001 §2.5 "secondary agent"), "" when none. */
  agency: string;
  wallet_money: number;
  spendTraffic: number;
  traffic: number;
  vipExpireTime: number;
  lastActiveTime: number;
  first_url: string;
  last_url: string;
  /** Admins see it: the debug-subscription link is built from it. */
  userkey: string;
  canChangeDescribeKey: boolean;
  canChangePassword: boolean;
  normalPermission: boolean;
  specialDailyUnlimitTraffic: boolean;
  /** G a day (the amount of the special limit; meaningful only with specialDailyUnlimitTraffic). */
  dailyUnlimitTraffic: number;
  forceReward: boolean;
}

const optionalTime = z.number().int().min(0).nullish();

export const userListInput = z.object({
  number: z
    .number()
    .int(AdminUserMsg.countRange)
    .min(1, AdminUserMsg.countRange)
    .max(MAX_USER_LIST_COUNT, AdminUserMsg.countRange)
    .default(DEFAULT_USER_LIST_COUNT),
  filterStr: z.string().trim().max(200, "筛选内容过长").default(""),
  /** Sign-up time from (ms, inclusive); null / 0 = open. */
  fromTimestamp: optionalTime,
  /** Sign-up time to (ms, inclusive); null / 0 = open. */
  toTimestamp: optionalTime,
});
export type UserListInput = z.input<typeof userListInput>;

const userId = recordId("uid 错误");
export const userInput = z.object({ uid: userId });

const signed = (max: number, message: string) =>
  z.number().finite().min(-max, message).max(max, message).default(0);

/** An adjustment of the balances: each amount added (negative: taken); a reason whenever one is not 0. */
export const adjustmentInput = z
  .object({
    trafficG: signed(MAX_ADJUST_G, `流量调整须在 ±${MAX_ADJUST_G} G 之内`),
    days: signed(MAX_ADJUST_DAYS, `天数调整须在 ±${MAX_ADJUST_DAYS} 天之内`).refine(
      Number.isInteger,
      "天数须为整数",
    ),
    walletYuan: signed(MAX_ADJUST_YUAN, `余额调整须在 ±${MAX_ADJUST_YUAN} 元之内`).refine(
      (yuan) => Math.abs(yuan * 100 - Math.round(yuan * 100)) < 1e-6,
      "余额最多两位小数",
    ),
    reason: z.string().trim().max(MAX_REASON_LENGTH, `原因最多${MAX_REASON_LENGTH}个字`).default(""),
  })
  .refine((a) => a.reason !== "" || (a.trafficG === 0 && a.days === 0 && a.walletYuan === 0), {
    message: AdminUserMsg.reasonRequired,
    path: ["reason"],
  });
export type AdjustmentInput = z.input<typeof adjustmentInput>;

/** `/api/admin/users/update_user`: the fields given are changed, the others kept. */
export const updateUserInput = z.object({
  _id: userId,
  disable: z.boolean().optional(),
  scale: z
    .number()
    .finite()
    .min(0, AdminUserMsg.scaleRange)
    .max(MAX_USER_SCALE, AdminUserMsg.scaleRange)
    .optional(),
  canChangeDescribeKey: z.boolean().optional(),
  canChangePassword: z.boolean().optional(),
  normalPermission: z.boolean().optional(),
  specialDailyUnlimitTraffic: z.boolean().optional(),
  dailyUnlimitTraffic: z
    .number()
    .finite()
    .min(0, "每日不限流量须不小于 0")
    .max(MAX_DAILY_UNLIMIT_G, `每日不限流量最多 ${MAX_DAILY_UNLIMIT_G} G`)
    .optional(),
  forceReward: z.boolean().optional(),
  adjust: adjustmentInput.optional(),
});
export type UpdateUserInput = z.input<typeof updateUserInput>;

/** `/api/admin/users/change_password`: the account's e-mail and the new transformed password. */
export const adminChangePasswordInput = loginInput;
export type AdminChangePasswordInput = z.input<typeof adminChangePasswordInput>;
