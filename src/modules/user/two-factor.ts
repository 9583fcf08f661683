/**
 * Two-factor login with TOTP (issue 30): enrolment (a pending secret confirmed with a code, then
 * ten recovery codes shown once), the second factor checked at login and when turning it off, the
 * mandatory mode for staff, the operator's reset, and passkeys as another second factor. Each TOTP step is usable once per account:
 * `user_totp.last_step` only moves forward, by a compare-and-set in the database, so a code
 * replayed on another replica is refused too. Knows no HTTP.
 */
import { randomBytes } from "node:crypto";
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { randomHex, sha256Hex } from "../../rpc/ids.ts";
import { SITE_TITLE } from "../../subscription/service.ts";
import { recordAudit } from "../audit/service.ts";
import type { Role } from "./schema.ts";
import { base32Encode, matchingStep, newTotpSecret, otpauthUrl } from "./totp.ts";
import {
  type PasskeyCreationOptions,
  RECOVERY_CODE_COUNT,
  TotpMsg,
  type TotpSetup,
  type TotpStatus,
} from "./two-factor-schema.ts";
import { fromBase64Url, sha256, toBase64Url, verifyAssertion, verifyRegistration } from "./webauthn.ts";

/** How long the second step of a login may take, and how many wrong codes it survives. */
export const CHALLENGE_MS = 5 * 60_000;
export const CHALLENGE_TRIES = 5;

/**
 * The calls an un-enrolled admin or yunying may make while 2FA is mandatory: who am I, enrolment,
 * logout. Every other non-public call answers 1041 (runCall).
 */
export const ENROLMENT_CALLS: ReadonlySet<string> = new Set([
  "/api/user/userinfo",
  "/api/user/totp_status",
  "/api/user/totp_setup",
  "/api/user/totp_enable",
  "/api/user/logout",
]);

interface TotpRow {
  secret: string;
  enabled_time: number | null;
  last_step: number;
}

const totpRow = (ctx: AppContext, userId: string) =>
  ctx.db.get<TotpRow>("SELECT secret, enabled_time, last_step FROM user_totp WHERE user_id = ?", userId);

export async function isTotpEnabled(ctx: AppContext, userId: string): Promise<boolean> {
  const row = await ctx.db.get<{ on: number }>(
    'SELECT 1 AS "on" FROM user_totp WHERE user_id = ? AND enabled_time IS NOT NULL',
    userId,
  );
  return row !== null;
}

const isStaff = (role: Role | null) => role === "admin" || role === "yunying";

/**
 * Whether this account must enrol before anything else: a staff role while totp_required_staff
 * is on, without TOTP. Customers cost nothing here (no query); staff one primary-key read.
 */
export async function mustEnrolTotp(ctx: AppContext, userId: string, role: Role | null): Promise<boolean> {
  if (!isStaff(role) || !(await ctx.settings.all()).totp_required_staff) return false;
  return !(await isTotpEnabled(ctx, userId));
}

export async function totpStatus(ctx: AppContext, userId: string, role: Role | null): Promise<TotpStatus> {
  const enabled = await isTotpEnabled(ctx, userId);
  const left = await ctx.db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM totp_recovery_codes WHERE user_id = ? AND used_time IS NULL",
    userId,
  );
  return {
    enabled,
    required: isStaff(role) && (await ctx.settings.all()).totp_required_staff,
    recoveryCodesLeft: enabled ? Number(left?.n ?? 0) : 0,
    passkeys: (await passkeyIds(ctx, userId)).length,
  };
}

/** A new pending secret (replacing an unconfirmed one); refused while 2FA is on. */
export async function setupTotp(ctx: AppContext, user: { id: string; email: string }): Promise<TotpSetup> {
  const secret = newTotpSecret();
  await tx(ctx.db, async () => {
    const row = await totpRow(ctx, user.id);
    if (row?.enabled_time != null) throw new RpcError(Code.badInput, TotpMsg.alreadyOn);
    await ctx.db.run(
      `INSERT INTO user_totp (user_id, secret, enabled_time, last_step, create_time) VALUES (?, ?, NULL, 0, ?)
         ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, last_step = 0, create_time = excluded.create_time`,
      user.id,
      secret,
      Date.now(),
    );
  });
  return { secret, otpauthUrl: otpauthUrl(secret, SITE_TITLE, user.email) };
}

/**
 * Claims the step of a TOTP code for the account: true only when the code matches a step within
 * the drift window that is later than every step used before. Runs in the caller's transaction.
 */
async function claimTotpStep(ctx: AppContext, userId: string, secret: string, code: string, now: number) {
  const step = matchingStep(secret, code, now);
  if (step === null) return false;
  const claimed = await ctx.db.run(
    "UPDATE user_totp SET last_step = ? WHERE user_id = ? AND last_step < ?",
    step,
    userId,
    step,
  );
  return claimed.changes === 1;
}

/** A recovery code as stored: lower case, without spaces or dashes, hashed. */
const recoveryHash = (code: string) => sha256Hex(code.toLowerCase().replace(/[\s-]/g, ""));

function newRecoveryCode(): string {
  const text = base32Encode(randomBytes(7)).toLowerCase().slice(0, 10);
  return `${text.slice(0, 5)}-${text.slice(5)}`;
}

/**
 * Checks a second factor of an enrolled account and uses it up: a TOTP code (its step claimed) or
 * an unused recovery code (marked used). Runs in the caller's transaction, so a refusal that
 * rolls back leaves nothing used.
 */
export async function spendSecondFactor(ctx: AppContext, userId: string, code: string, now: number) {
  const row = await totpRow(ctx, userId);
  if (row?.enabled_time == null) return false;
  const compact = code.replace(/\s/g, "");
  if (/^\d{6}$/.test(compact)) return await claimTotpStep(ctx, userId, row.secret, compact, now);
  const used = await ctx.db.run(
    "UPDATE totp_recovery_codes SET used_time = ? WHERE user_id = ? AND code_hash = ? AND used_time IS NULL",
    now,
    userId,
    recoveryHash(compact),
  );
  return used.changes === 1;
}

/** Turns 2FA on with a code of the pending secret; answers the ten recovery codes (shown once). */
export async function enableTotp(
  ctx: AppContext,
  user: { id: string; email: string },
  code: string,
  now = Date.now(),
): Promise<{ recoveryCodes: string[] }> {
  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await tx(ctx.db, async () => {
    const row = await totpRow(ctx, user.id);
    if (!row) throw new RpcError(Code.badInput, TotpMsg.notSetUp);
    if (row.enabled_time !== null) throw new RpcError(Code.badInput, TotpMsg.alreadyOn);
    if (!(await claimTotpStep(ctx, user.id, row.secret, code.replace(/\s/g, ""), now)))
      throw new RpcError(Code.badInput, TotpMsg.wrongCode);
    await ctx.db.run("UPDATE user_totp SET enabled_time = ? WHERE user_id = ?", now, user.id);
    await ctx.db.run("DELETE FROM totp_recovery_codes WHERE user_id = ?", user.id);
    for (const recovery of recoveryCodes) {
      await ctx.db.run(
        "INSERT INTO totp_recovery_codes (user_id, code_hash, used_time) VALUES (?, ?, NULL)",
        user.id,
        recoveryHash(recovery),
      );
    }
    await recordAudit(ctx.db, { action: "user.2fa_enable", target: user.email });
  });
  return { recoveryCodes };
}

/** Removes every trace of 2FA of an account (secret, recovery codes, passkeys, open login challenges). */
async function removeTotp(ctx: AppContext, userId: string): Promise<void> {
  await ctx.db.run("DELETE FROM user_totp WHERE user_id = ?", userId);
  await ctx.db.run("DELETE FROM totp_recovery_codes WHERE user_id = ?", userId);
  await ctx.db.run("DELETE FROM login_challenges WHERE user_id = ?", userId);
  await ctx.db.run("DELETE FROM passkeys WHERE user_id = ?", userId);
  await ctx.db.run("DELETE FROM passkey_registrations WHERE user_id = ?", userId);
}

/** Turns 2FA off with a TOTP or recovery code. */
export async function disableTotp(
  ctx: AppContext,
  user: { id: string; email: string },
  code: string,
  now = Date.now(),
): Promise<void> {
  await tx(ctx.db, async () => {
    if (!(await isTotpEnabled(ctx, user.id))) throw new RpcError(Code.badInput, TotpMsg.notOn);
    if (!(await spendSecondFactor(ctx, user.id, code, now)))
      throw new RpcError(Code.badInput, TotpMsg.wrongCode);
    await removeTotp(ctx, user.id);
    await recordAudit(ctx.db, { action: "user.2fa_disable", target: user.email });
  });
}

/** The operator's reset for a locked-out account (`ferry user 2fa-reset`); false when 2FA was not on. */
export async function resetTotp(ctx: AppContext, user: { id: string; email: string }): Promise<boolean> {
  return await tx(ctx.db, async () => {
    if (!(await isTotpEnabled(ctx, user.id))) return false;
    await removeTotp(ctx, user.id);
    await recordAudit(ctx.db, { action: "user.2fa_reset", target: user.email });
    return true;
  });
}

/** Opens the second step of a login for an enrolled account whose password was right: the raw token. */
export async function openLoginChallenge(ctx: AppContext, userId: string, now = Date.now()): Promise<string> {
  const token = randomHex(32);
  await tx(ctx.db, async () => {
    await ctx.db.run("DELETE FROM login_challenges WHERE expire_time <= ?", now);
    await ctx.db.run(
      "INSERT INTO login_challenges (token_hash, user_id, create_time, expire_time, tries) VALUES (?, ?, ?, ?, 0)",
      sha256Hex(token),
      userId,
      now,
      now + CHALLENGE_MS,
    );
  });
  return token;
}

/**
 * Counts a try on a live challenge (committed whatever the code turns out to be): the account's
 * id, or null when the challenge is unknown, expired or out of tries.
 */
export async function spendChallengeTry(ctx: AppContext, token: string, now: number): Promise<string | null> {
  const row = await ctx.db.get<{ user_id: string }>(
    `UPDATE login_challenges SET tries = tries + 1
       WHERE token_hash = ? AND expire_time > ? AND tries < ? RETURNING user_id`,
    sha256Hex(token),
    now,
    CHALLENGE_TRIES,
  );
  return row?.user_id ?? null;
}

/** A second factor presented at login: a TOTP or recovery code, or a passkey's assertion. */
export type SecondFactor = { code: string } | { passkey: PasskeyAssertion; expected: PasskeyPlace };

/**
 * Passes a challenge with a second factor, in one transaction: the challenge is used up and the
 * factor used, or neither (a wrong factor throws and rolls back; its try was counted before).
 */
export async function passChallenge(
  ctx: AppContext,
  token: string,
  userId: string,
  factor: SecondFactor,
  now: number,
) {
  await tx(ctx.db, async () => {
    const gone = await ctx.db.run("DELETE FROM login_challenges WHERE token_hash = ?", sha256Hex(token));
    if (gone.changes !== 1) throw new RpcError(Code.badInput, TotpMsg.challengeExpired);
    const passed =
      "code" in factor
        ? await spendSecondFactor(ctx, userId, factor.code, now)
        : await checkPasskey(
            ctx,
            userId,
            factor.passkey,
            { ...factor.expected, challenge: fromBase64Url(passkeyChallengeOf(token)) },
            now,
          );
    if (!passed)
      throw new RpcError(Code.badInput, "code" in factor ? TotpMsg.wrongCode : TotpMsg.passkeyFailed);
  });
}

// ---- passkeys (WebAuthn) as another second factor of an account with TOTP on ----

/** How long adding a passkey may take. */
const PASSKEY_REGISTRATION_MS = 5 * 60_000;

/** Where the page is: the origins it may be on and the RP id (its host name). */
export interface PasskeyPlace {
  origins: readonly string[];
  rpId: string;
}

export interface PasskeyAssertion {
  credentialId: string;
  clientDataJSON: string;
  authenticatorData: string;
  signature: string;
}

/**
 * The WebAuthn challenge of a login's second step: derived from its challenge token, so it is as
 * random, as short-lived and as single-use as the token (passChallenge deletes it).
 */
export const passkeyChallengeOf = (token: string) => toBase64Url(sha256(`passkey:${token}`));

/** The account's passkeys' credential ids (base64url), for the login's allowCredentials. */
export async function passkeyIds(ctx: AppContext, userId: string): Promise<string[]> {
  const rows = await ctx.db.all<{ credential_id: string }>(
    "SELECT credential_id FROM passkeys WHERE user_id = ? ORDER BY create_time",
    userId,
  );
  return rows.map((row) => row.credential_id);
}

/** The options of navigator.credentials.create for a new passkey; only while TOTP is on. */
export async function passkeyRegistrationOptions(
  ctx: AppContext,
  user: { id: string; email: string },
  place: PasskeyPlace,
  now = Date.now(),
): Promise<PasskeyCreationOptions> {
  if (!(await isTotpEnabled(ctx, user.id))) throw new RpcError(Code.badInput, TotpMsg.notOn);
  const challenge = randomBytes(32);
  await ctx.db.run(
    `INSERT INTO passkey_registrations (user_id, challenge, expire_time) VALUES (?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET challenge = excluded.challenge, expire_time = excluded.expire_time`,
    user.id,
    toBase64Url(challenge),
    now + PASSKEY_REGISTRATION_MS,
  );
  return {
    challenge: toBase64Url(challenge),
    rp: { id: place.rpId, name: SITE_TITLE },
    user: { id: toBase64Url(Buffer.from(user.id)), name: user.email, displayName: user.email },
    excludeCredentials: await passkeyIds(ctx, user.id),
  };
}

/** Stores the passkey the browser created for the options above; audited as user.passkey_add. */
export async function addPasskey(
  ctx: AppContext,
  user: { id: string; email: string },
  response: { clientDataJSON: string; attestationObject: string },
  place: PasskeyPlace,
  now = Date.now(),
): Promise<void> {
  await tx(ctx.db, async () => {
    const pending = await ctx.db.get<{ challenge: string }>(
      "DELETE FROM passkey_registrations WHERE user_id = ? AND expire_time > ? RETURNING challenge",
      user.id,
      now,
    );
    if (!pending || !(await isTotpEnabled(ctx, user.id)))
      throw new RpcError(Code.badInput, TotpMsg.passkeyFailed);
    const credential = verifyRegistration(
      {
        clientDataJSON: fromBase64Url(response.clientDataJSON),
        attestationObject: fromBase64Url(response.attestationObject),
      },
      { ...place, challenge: fromBase64Url(pending.challenge) },
    );
    if (!credential) throw new RpcError(Code.badInput, TotpMsg.passkeyFailed);
    await ctx.db.run(
      `INSERT INTO passkeys (credential_id, user_id, public_key, sign_count, create_time) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      credential.credentialId,
      user.id,
      credential.publicKey,
      credential.signCount,
      now,
    );
    await recordAudit(ctx.db, { action: "user.passkey_add", target: user.email });
  });
}

/** Checks a passkey's assertion for the account and records its counter; in the caller's transaction. */
async function checkPasskey(
  ctx: AppContext,
  userId: string,
  assertion: PasskeyAssertion,
  expected: PasskeyPlace & { challenge: Uint8Array },
  now: number,
): Promise<boolean> {
  const stored = await ctx.db.get<{ public_key: string; sign_count: number }>(
    "SELECT public_key, sign_count FROM passkeys WHERE credential_id = ? AND user_id = ?",
    assertion.credentialId,
    userId,
  );
  if (!stored) return false;
  const count = verifyAssertion(
    {
      clientDataJSON: fromBase64Url(assertion.clientDataJSON),
      authenticatorData: fromBase64Url(assertion.authenticatorData),
      signature: fromBase64Url(assertion.signature),
    },
    { publicKey: stored.public_key, signCount: stored.sign_count },
    expected,
  );
  if (count === null) return false;
  await ctx.db.run(
    "UPDATE passkeys SET sign_count = ?, last_used_time = ? WHERE credential_id = ?",
    count,
    now,
    assertion.credentialId,
  );
  return true;
}
