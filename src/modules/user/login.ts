/**
 * Password log-in with limits that stop guessing without locking the owner out (OWASP "device
 * cookies"): only failures count; a browser that logged in to an account before carries a trusted
 * token for it and spends its own small failure budget, so failures from elsewhere never refuse
 * it; every other client is limited per account and per address.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { randomHex, sha256Hex } from "../../rpc/ids.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import type { UserRow } from "./row.ts";
import { Msg, TOKEN_PATTERN } from "./schema.ts";
import { findUserByEmail, findUserById, verifyLogin } from "./service.ts";
import {
  isTotpEnabled,
  openLoginChallenge,
  passChallenge,
  passkeyChallengeOf,
  passkeyIds,
  type SecondFactor,
  spendChallengeTry,
} from "./two-factor.ts";
import { type LoginChallenge, TotpMsg } from "./two-factor-schema.ts";

const WINDOW_MS = 10 * 60_000;
/** Wrong passwords from clients the account does not trust, per account and per address. */
export const LOGIN_ACCOUNT_FAILURES: RateRule = {
  name: "login-account-failures",
  max: 10,
  windowMs: WINDOW_MS,
};
export const LOGIN_IP_FAILURES: RateRule = { name: "login-ip-failures", max: 30, windowMs: WINDOW_MS };
/** Wrong passwords from one trusted browser; once spent it is limited like any other client. */
export const LOGIN_DEVICE_FAILURES: RateRule = { name: "login-device-failures", max: 5, windowMs: WINDOW_MS };

export const TRUSTED_DEVICE_DAYS = 365;
/** Trusted browsers kept per account; the least recently used go first. */
const MAX_TRUSTED_DEVICES = 20;

/**
 * The cookie holding a browser's trusted token for one account. One cookie per account, so a
 * value planted in a browser (or carried from another account) is never adopted: only a token the
 * server minted for this account after a correct password is trusted.
 */
export const deviceCookieName = (userId: string) => `device_${userId}`;

async function isTrusted(
  ctx: AppContext,
  userId: string,
  token: string | undefined,
  now: number,
): Promise<boolean> {
  if (!token || !TOKEN_PATTERN.test(token)) return false;
  const row = await ctx.db.get<{ expire_time: number }>(
    "SELECT expire_time FROM trusted_devices WHERE token_hash = ? AND user_id = ?",
    sha256Hex(token),
    userId,
  );
  return row !== null && row.expire_time > now;
}

/** Trusts the browser for the account after a correct password: keeps its trusted token or mints one. */
async function trustDevice(
  ctx: AppContext,
  userId: string,
  trustedToken: string | undefined,
  now: number,
): Promise<string> {
  const kept = trustedToken ?? randomHex(32);
  const expire = now + TRUSTED_DEVICE_DAYS * DAY_MS;
  await tx(ctx.db, async () => {
    await ctx.db.run(
      `INSERT INTO trusted_devices (token_hash, user_id, create_time, expire_time) VALUES (?, ?, ?, ?)
         ON CONFLICT (token_hash, user_id) DO UPDATE SET expire_time = excluded.expire_time`,
      sha256Hex(kept),
      userId,
      now,
      expire,
    );
    await ctx.db.run(
      `DELETE FROM trusted_devices WHERE user_id = ? AND token_hash NOT IN (
           SELECT token_hash FROM trusted_devices WHERE user_id = ? AND expire_time > ?
           ORDER BY expire_time DESC LIMIT ${MAX_TRUSTED_DEVICES})`,
      userId,
      userId,
      now,
    );
  });
  return kept;
}

export interface LoginAttempt {
  email: string;
  passwordDigest: string;
  ip: string;
  /** The browser's trusted-device token for an account (its `deviceCookieName` cookie), if any. */
  deviceTokenFor: (userId: string) => string | undefined;
}

/** What a client presents at each step of a login: where it comes from and its trusted tokens. */
type LoginClient = Pick<LoginAttempt, "ip" | "deviceTokenFor">;

/**
 * Reserves one try under the failure limits before a secret is looked at: the trusted browser's
 * own budget while it has some, else the per-address and per-account ones. Null: may not try now.
 */
async function reserveLoginTry(
  ctx: AppContext,
  account: { id: string } | null,
  email: string,
  client: LoginClient,
  now: number,
) {
  const device = account ? client.deviceTokenFor(account.id) : undefined;
  const trusted = account !== null && device !== undefined && (await isTrusted(ctx, account.id, device, now));
  const trustedKey = trusted ? sha256Hex(device) : null;
  const reservation =
    (trustedKey && (await ctx.limiter.reserve([{ rule: LOGIN_DEVICE_FAILURES, key: trustedKey }], now))) ||
    (await ctx.limiter.reserve(
      [
        { rule: LOGIN_IP_FAILURES, key: client.ip },
        { rule: LOGIN_ACCOUNT_FAILURES, key: email.toLowerCase() },
      ],
      now,
    ));
  if (!reservation) throw new RpcError(Code.tooManyRequests, Msg.tooManyLoginFailures);
  return { reservation, trustedDevice: trusted ? device : undefined };
}

/**
 * Checks a password under the failure limits. Answers the user and the browser's trusted token
 * (to store in `deviceCookieName(user.id)`); throws 1005 when the client may not try now (before
 * the password is looked at), 1000 for a wrong password or unknown e-mail, 1003 for a disabled
 * account, and 1040 with `{challenge}` when the account has two-factor login (no session yet:
 * logInWithCode finishes it).
 */
export async function logIn(
  ctx: AppContext,
  attempt: LoginAttempt,
  now = Date.now(),
): Promise<{ user: UserRow; deviceToken: string }> {
  const known = await findUserByEmail(ctx, attempt.email);
  const { reservation, trustedDevice } = await reserveLoginTry(ctx, known, attempt.email, attempt, now);

  let user: UserRow | null;
  try {
    user = await verifyLogin(ctx, attempt.email, attempt.passwordDigest);
  } catch (error) {
    await reservation.release(); // a disabled account with the right password: not a guess that failed
    throw error;
  }
  if (!user) throw new RpcError(Code.badInput, Msg.loginFailed);
  await reservation.release();
  if (await isTotpEnabled(ctx, user.id)) {
    const token = await openLoginChallenge(ctx, user.id, now);
    const challenge: LoginChallenge = {
      challenge: token,
      passkeys: await passkeyIds(ctx, user.id),
      passkeyChallenge: passkeyChallengeOf(token),
    };
    throw new RpcError(Code.totpCodeNeeded, TotpMsg.codeNeeded, challenge);
  }
  return { user, deviceToken: await trustDevice(ctx, user.id, trustedDevice, now) };
}

/**
 * The second step of a login (issue 30): a TOTP or recovery code, or a passkey, for the challenge
 * the password step answered. A wrong one counts toward the same failure limits as a wrong password (the
 * reservation is kept) and toward the challenge's own tries; the challenge dies after
 * CHALLENGE_TRIES or CHALLENGE_MS. Answers as logIn does.
 */
export async function logInWithCode(
  ctx: AppContext,
  attempt: LoginClient & { challenge: string; factor: SecondFactor },
  now = Date.now(),
): Promise<{ user: UserRow; deviceToken: string }> {
  const userId = await spendChallengeTry(ctx, attempt.challenge, now);
  const user = userId ? await findUserById(ctx, userId) : null;
  if (!user) throw new RpcError(Code.badInput, TotpMsg.challengeExpired);
  if (user.disabled) throw new RpcError(Code.forbidden, Msg.accountDisabled);
  const { reservation, trustedDevice } = await reserveLoginTry(ctx, user, user.email, attempt, now);
  await passChallenge(ctx, attempt.challenge, user.id, attempt.factor, now);
  await reservation.release();
  return { user, deviceToken: await trustDevice(ctx, user.id, trustedDevice, now) };
}
