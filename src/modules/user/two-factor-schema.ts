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
  /** Passkeys added (another second factor while TOTP is on). */
  passkeys: number;
  /** Mandatory for this account now (a staff role while totp_required_staff is on). */
  required: boolean;
  /** Recovery codes not used yet (0 while off). */
  recoveryCodesLeft: number;
}

/** How many recovery codes enrolment gives. */
export const RECOVERY_CODE_COUNT = 10;

const base64url = z
  .string()
  .regex(/^[A-Za-z0-9_-]*$/, "格式错误")
  .max(16_384, "过长");

/** What the SPA sends after navigator.credentials.create (fields base64url). */
export const passkeyRegisterInput = z.object({ clientDataJSON: base64url, attestationObject: base64url });
/** The login's second step with a passkey: the challenge and navigator.credentials.get's answer. */
export const loginPasskeyInput = z.object({
  challenge: z.string().regex(TOKEN_PATTERN, TotpMsg.challengeExpired),
  credentialId: base64url,
  clientDataJSON: base64url,
  authenticatorData: base64url,
  signature: base64url,
});

/** navigator.credentials.create's options as the server gives them (binary fields base64url). */
export interface PasskeyCreationOptions {
  challenge: string;
  rp: { id: string; name: string };
  user: { id: string; name: string; displayName: string };
  /** Credential ids the account has already. */
  excludeCredentials: string[];
}

/** 1040's data: the challenge, and the account's passkeys (credential ids) when it has some. */
export interface LoginChallenge {
  challenge: string;
  /** The account's passkeys (credential ids, base64url); [] when it has none. */
  passkeys: string[];
  /** The WebAuthn challenge of navigator.credentials.get (base64url): bound to `challenge`. */
  passkeyChallenge: string;
}
