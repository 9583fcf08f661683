import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { randomHex, sha256Hex } from "../../rpc/ids.ts";
import { USER_ROW_SELECT, type UserRow } from "./row.ts";
import { TOKEN_PATTERN } from "./schema.ts";

/** Server-side session lifetime; the cookie may live longer (seed: 99999 days) but the row decides. */
export const SESSION_DAYS = 365;
/** How long a minted login link (`/?token=`) can be used. */
export const LOGIN_LINK_MS = 10 * 60_000;

/** A new random 256-bit session; only its SHA-256 is stored (DESIGN §5). Returns the raw token. */
export async function createSession(
  ctx: AppContext,
  userId: string,
  ip = "",
  userAgent = "",
): Promise<string> {
  const token = randomHex(32);
  const now = Date.now();
  await ctx.db.run(
    "INSERT INTO sessions (token_hash, user_id, create_time, expire_time, ip, user_agent) VALUES (?, ?, ?, ?, ?, ?)",
    sha256Hex(token),
    userId,
    now,
    now + SESSION_DAYS * DAY_MS,
    ip,
    userAgent.slice(0, 300),
  );
  return token;
}

/** The logged-in user for a raw token, or null when unknown, expired or the account is disabled. */
export async function resolveSession(
  ctx: AppContext,
  token: string | undefined,
  now = Date.now(),
): Promise<UserRow | null> {
  if (!token || !TOKEN_PATTERN.test(token)) return null;
  const hash = sha256Hex(token);
  const session = await ctx.cache.sessions.get(hash, async () => {
    const row = await ctx.db.get<{ user_id: string; expire_time: number }>(
      "SELECT user_id, expire_time FROM sessions WHERE token_hash = ?",
      hash,
    );
    const user = row && (await ctx.db.get<UserRow>(`${USER_ROW_SELECT} WHERE u.id = ?`, row.user_id));
    return row && user ? { user, expireTime: row.expire_time } : null;
  });
  if (!session || session.expireTime <= now || session.user.disabled) return null;
  return session.user;
}

export async function deleteSession(ctx: AppContext, token: string | undefined): Promise<void> {
  if (!token || !TOKEN_PATTERN.test(token)) return;
  await ctx.db.run("DELETE FROM sessions WHERE token_hash = ?", sha256Hex(token));
}

/**
 * After a password change: ends every session of the account, forgets the browsers it trusted
 * and voids its unused login links, so nothing opened with the old password stays open.
 */
export async function revokeAccountAccess(ctx: AppContext, userId: string): Promise<void> {
  await ctx.db.run("DELETE FROM sessions WHERE user_id = ?", userId);
  await ctx.db.run("DELETE FROM trusted_devices WHERE user_id = ?", userId);
  await ctx.db.run("DELETE FROM login_tokens WHERE user_id = ?", userId);
}

/**
 * A one-time login token for a link (`<site>/?token=…`) sent by mail or bot. Only its SHA-256 is
 * stored; it works once, within LOGIN_LINK_MS, and gives a fresh session (see exchangeLoginToken).
 */
export async function mintLoginLink(ctx: AppContext, userId: string, now = Date.now()): Promise<string> {
  const token = randomHex(32);
  await tx(ctx.db, async () => {
    await ctx.db.run("DELETE FROM login_tokens WHERE expire_time <= ?", now);
    await ctx.db.run(
      "INSERT INTO login_tokens (token_hash, user_id, create_time, expire_time) VALUES (?, ?, ?, ?)",
      sha256Hex(token),
      userId,
      now,
      now + LOGIN_LINK_MS,
    );
  });
  return token;
}

/**
 * Uses up a login token from a link and opens a new session for its account. Anything else (a
 * session token, an expired or used link, a disabled account, an account with two-factor login) gives null, so a link can never
 * put someone into a session its sender chose.
 */
export async function exchangeLoginToken(
  ctx: AppContext,
  token: string,
  ip = "",
  userAgent = "",
  now = Date.now(),
): Promise<string | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const userId = await tx(ctx.db, async () => {
    const row = await ctx.db.get<{ user_id: string; expire_time: number }>(
      "DELETE FROM login_tokens WHERE token_hash = ? RETURNING user_id, expire_time",
      sha256Hex(token),
    );
    if (!row || row.expire_time <= now) return null;
    // An account with two-factor login is never opened by a link alone (issue 30): the link is used up.
    const user = await ctx.db.get<{ disabled: number; totp: number | null }>(
      `SELECT disabled, (SELECT enabled_time FROM user_totp WHERE user_id = users.id) AS totp
         FROM users WHERE id = ?`,
      row.user_id,
    );
    return user && !user.disabled && user.totp === null ? row.user_id : null;
  });
  return userId ? await createSession(ctx, userId, ip, userAgent) : null;
}
