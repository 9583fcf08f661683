/**
 * Constants of the user module that the SPA needs before it needs any schema (web/startup.ts, the header),
 * kept apart from schema.ts so importing them does not bring zod into the first page (issue 18).
 * schema.ts re-exports them.
 */

/** Sessions, one-time login links and trusted-browser tokens: 256-bit random, as lowercase hex. */
export const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

/** The channel_code cookie value for visitors who came without `?c=` (seed 000 §4). */
export const NO_CHANNEL_CODE = "nocode";

/** The fixed default logo sent as icon_url on sign-up, and the avatar fallback. */
export const DEFAULT_ICON = "/logo.svg";

/** Two-factor login's messages (issue 30); the login page needs them on the first page. */
export const TotpMsg = {
  /** Code 1040: the password was right; the login needs the second step. */
  codeNeeded: "请输入两步验证码",
  /** Code 1041: 2FA is mandatory for staff (totp_required_staff) and this account has not enrolled. */
  enrolFirst: "请先开启两步验证",
  codeEmpty: "请输入验证码",
  wrongCode: "验证码错误或已使用",
  challengeExpired: "验证已过期或尝试次数过多，请重新登录",
  alreadyOn: "两步验证已开启",
  notSetUp: "请先获取密钥并添加到验证器",
  notOn: "两步验证未开启",
  passkeyFailed: "通行密钥验证失败",
} as const;
