import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";
import { imageRef } from "../file/schema.ts";
import { DEFAULT_ICON, NO_CHANNEL_CODE, TOKEN_PATTERN } from "./constants.ts";

/** Form rules and messages of seed 000 §5, shared by the SPA forms and the server. */
export const PASSWORD_MIN = 8;
export const SUBSCRIPTION_LINK_MIN = 8;
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const Msg = {
  accountDisabled: "账号已被禁用",
  emailEmpty: "邮件不能为空",
  passwordEmpty: "密码不能为空",
  passwordMismatch: "密码不一样",
  passwordTooShort: "密码长度至少8位",
  emailInvalid: "邮件不正确",
  resetPasswordEmpty: "请输入密码",
  subscriptionLinkInvalid: "订阅链接错误",
  subscriptionLinkFirst: "请先输入订阅链接",
  loginFailed: "用户不存在或密码错误",
  tooManyLoginFailures: "密码错误次数过多，请10分钟后再试",
  alreadyRegistered: "邮件已注册",
} as const;

/** Answers of the reset request and the mailed confirmation links, shared with the confirm page. */
export const ConfirmMsg = {
  emailMismatch: "邮箱与订阅链接不匹配",
  refused: "该账号不允许这样操作。",
  noMail: "邮件服务未配置，无法通过邮件确认，请联系管理员修改密码",
  noOrigin: "网站地址未设置，无法发送确认邮件，请联系管理员修改密码",
  /** 找回密码 when no mail can be sent (issue 12): said before any form instead of after it. */
  resetNeedsSupport: "本站未开通邮件服务，无法自助重置密码。请联系客服，由管理员为您设置新密码。",
  tooManyResets: "修改密码的申请过于频繁，请稍后再试",
  mailFailed: "确认邮件发送失败，请稍后重试",
  invalid: "链接无效",
  used: "链接已使用",
  expired: "链接已过期",
  passwordMismatch: (left: number) => `与申请时填写的新密码不一致，还可以再试 ${left} 次`,
  triesUsedUp: "新密码多次输入不一致，此链接已失效，请重新申请修改密码",
  typeAgain: "请在确认页面再次输入新密码完成修改",
  badPassword: "密码格式错误",
} as const;

/** Empty means empty string, null or undefined (seed 000 §5). */
export const isEmpty = (value: string | null | undefined) =>
  value === undefined || value === null || value === "";

export type FieldErrors<F extends string> = Partial<Record<F, string>>;

export function validateLoginForm(form: {
  email: string;
  password: string;
}): FieldErrors<"email" | "password"> {
  if (isEmpty(form.email)) return { email: Msg.emailEmpty };
  if (isEmpty(form.password)) return { password: Msg.passwordEmpty };
  return {};
}

export function validateRegisterForm(form: {
  email: string;
  password: string;
  confirm: string;
}): FieldErrors<"email" | "password" | "confirm"> {
  if (form.password !== form.confirm) return { confirm: Msg.passwordMismatch };
  if (isEmpty(form.password) || form.password.length < PASSWORD_MIN)
    return { password: Msg.passwordTooShort };
  if (!EMAIL_PATTERN.test(form.email)) return { email: Msg.emailInvalid };
  return {};
}

/** A new password typed twice (reset form, and again on the page its mailed link opens). */
export function validateNewPasswordForm(form: {
  password: string;
  confirm: string;
}): FieldErrors<"password" | "confirm"> {
  if (isEmpty(form.password) || isEmpty(form.confirm)) return { password: Msg.resetPasswordEmpty };
  if (form.password !== form.confirm) return { confirm: Msg.passwordMismatch };
  if (form.password.length < PASSWORD_MIN) return { password: Msg.passwordTooShort };
  return {};
}

export function validateResetForm(form: {
  link: string;
  email: string;
  password: string;
  confirm: string;
}): FieldErrors<"link" | "email" | "password" | "confirm"> {
  const password = validateNewPasswordForm(form);
  if (password.password || password.confirm) return password;
  if (!EMAIL_PATTERN.test(form.email)) return { email: Msg.emailInvalid };
  if (isEmpty(form.link) || form.link.length < SUBSCRIPTION_LINK_MIN)
    return { link: Msg.subscriptionLinkInvalid };
  return {};
}

// ---- wire payloads ----

// These live in a module without zod, for the SPA's first page.
export { DEFAULT_ICON, NO_CHANNEL_CODE, TOKEN_PATTERN };

const email = z
  .string()
  .trim()
  .max(254, "邮件过长")
  .regex(EMAIL_PATTERN, Msg.emailInvalid)
  .transform((value) => value.toLowerCase());
/** The transformed password: 64 lowercase hex characters. */
const passwordDigest = z.string().regex(/^[0-9a-f]{64}$/, "密码格式错误");
const describUrl = z.string().trim().max(2000);

export const loginInput = z.object({ email, password: passwordDigest });
export const signupInput = z.object({
  email,
  password: passwordDigest,
  icon_url: z.string().max(500).optional(),
  host: z.string().max(255).optional(),
});
export const resetPasswordInput = z.object({ email, password: passwordDigest, describUrl });
export const getEmailInput = z.object({ describUrl });
export const emptyInput = z.object({}).passthrough();
export const confirmQuery = z.object({
  serial_id: recordId("serial_id 错误"),
  key: z.string().regex(TOKEN_PATTERN, "key 错误"),
});
/** `POST /api/account/change_password`: the link's serial_id and key, and the new password typed again. */
export const confirmPasswordInput = confirmQuery.extend({ password: passwordDigest });
export type ConfirmPasswordInput = z.input<typeof confirmPasswordInput>;

export type Role = "normal" | "channel" | "yunying" | "admin";

export interface PermissionGrant {
  id: string;
  name: string;
  desc: string;
  expireTime: number;
}

/** `/api/user/userinfo` (seed 000 §3 User info). Traffic in bytes, times in ms. */
export interface UserInfo {
  _id: string;
  email: string;
  icon: string;
  type: Role;
  is_agency_user: boolean;
  /** Owns an agency: sees /agency, where it allocates traffic to its customers (issue 16). */
  agencyOwner: boolean;
  userkey: string;
  paidUser: boolean;
  traffic: number;
  spendTraffic: number;
  vipExpireTime: number;
  dailyTimePackageUsage: number;
  limit: number;
  haveContinueSignUseData: boolean;
  signUseToday: boolean;
  /** Part of `traffic` that is trial traffic with a time limit (bytes); 0 when none is running. */
  trialTraffic: number;
  /** When the soonest of that trial traffic expires (ms); 0 when none is running. */
  trialExpireTime: number;
  preferDomain: string;
  permissions: PermissionGrant[];
  signUseRewardInfo: { continueSignReward: number };
  channel_code: string;
  inXinjiang: boolean;
  in_foreign: boolean;
  use_english_node: boolean;
  describe_host: string;
  /**
   * Issue 30: two-factor login is mandatory for this staff account and it has not enrolled yet; the
   * SPA keeps it on /two_factor. Only /api/user/userinfo answers it.
   */
  mustEnrolTotp?: boolean;
}

// ---- profile (/user_info, issue 13) ----

/**
 * The icon an account shows: its uploaded avatar or the default logo, never a link to elsewhere
 * (an older sign-up stored whatever icon_url the client sent).
 */
export function shownIcon(stored: string): string {
  return stored !== "" && imageRef.safeParse(stored).success ? stored : DEFAULT_ICON;
}

/** The profile page's save answers (seed 000 §8) and the server's refusals. */
export const ProfileMsg = {
  saved: "修改资料成功",
  saveFailed: "修改失败",
  emailLocked: "邮箱暂不支持修改，请联系客服",
} as const;

/**
 * `icon`: the default logo, or "" / the download path of an upload (file/schema.ts imageRef);
 * answers "" for the default, else the bare filename (the service checks the upload is the caller's).
 */
const profileIcon = z
  .literal(DEFAULT_ICON)
  .transform(() => "")
  .or(imageRef);

/**
 * `/api/user/change_use_info` (seed 000 §7). A field left out keeps its value; fields not listed
 * here (`_id`, `type`, `traffic`, …) are dropped by the parse. The e-mail cannot be changed here:
 * only the current address (any case) is accepted.
 */
export const changeUseInfoInput = z.object({
  email: z.string().trim().max(254).optional(),
  icon: profileIcon.optional(),
  inXinjiang: z.boolean().optional(),
  in_foreign: z.boolean().optional(),
  use_english_node: z.boolean().optional(),
});
export type ChangeUseInfoInput = z.input<typeof changeUseInfoInput>;
