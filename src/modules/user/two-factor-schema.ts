/** Two-factor login (issue 30): the calls' inputs and answers, and their messages, shared with the SPA. */
import { z } from "zod";
import { TOKEN_PATTERN, TotpMsg } from "./constants.ts";

export { TotpMsg };

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
