/** Two-factor login (issue 30): the calls' inputs and answers, and their messages, shared with the SPA. */
import { z } from "zod";
import { TOKEN_PATTERN } from "./constants.ts";

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
} as const;

/** A TOTP code (6 digits) or a recovery code (xxxxx-xxxxx); spaces are left to the server to drop. */
const code = z.string().trim().min(1, TotpMsg.codeEmpty).max(32, TotpMsg.wrongCode);

export const totpCodeInput = z.object({ code });
export const loginTotpInput = z.object({
  challenge: z.string().regex(TOKEN_PATTERN, TotpMsg.challengeExpired),
  code,
});

export interface TotpSetup {
  /** Base32, as the user types it into an authenticator app. */
  secret: string;
  otpauthUrl: string;
}

export interface TotpStatus {
  enabled: boolean;
  /** Mandatory for this account now (a staff role while totp_required_staff is on). */
  required: boolean;
  /** Recovery codes not used yet (0 while off). */
  recoveryCodesLeft: number;
}

/** How many recovery codes enrolment gives. */
export const RECOVERY_CODE_COUNT = 10;
