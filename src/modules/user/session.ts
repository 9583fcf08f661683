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
export function createSession(ctx: AppContext, userId: string, ip = "", userAgent = ""): string {
  const token = randomHex(32);
  const now = Date.now();
  ctx.db
    .query(
      "INSERT INTO sessions (token_hash, user_id, create_time, expire_time, ip, user_agent) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .run(sha256Hex(token), userId, now, now + SESSION_DAYS * DAY_MS, ip, userAgent.slice(0, 300));
  return token;
}

/** The logged-in user for a raw token, or null when unknown, expired or the account is disabled. */
export function resolveSession(ctx: AppContext, token: string | undefined, now = Date.now()): UserRow | null {
  if (!token || !TOKEN_PATTERN.test(token)) return null;
  const hash = sha256Hex(token);
  const session = ctx.cache.sessions.get(hash, () => {
    const row = ctx.db
      .query<{ user_id: string; expire_time: number }, [string]>(
        "SELECT user_id, expire_time FROM sessions WHERE token_hash = ?",
      )
      .get(hash);
    const user = row && ctx.db.query<UserRow, [string]>(`${USER_ROW_SELECT} WHERE u.id = ?`).get(row.user_id);
    return row && user ? { user, expireTime: row.expire_time } : null;
  });
  if (!session || session.expireTime <= now || session.user.disabled) return null;
  return session.user;
}

export function deleteSession(ctx: AppContext, token: string | undefined): void {
  if (!token || !TOKEN_PATTERN.test(token)) return;
  ctx.db.query("DELETE FROM sessions WHERE token_hash = ?").run(sha256Hex(token));
}

/**
 * After a password change: ends every session of the account, forgets the browsers it trusted
 * and voids its unused login links, so nothing opened with the old password stays open.
 */
export function revokeAccountAccess(ctx: AppContext, userId: string): void {
  ctx.db.query("DELETE FROM sessions WHERE user_id = ?").run(userId);
  ctx.db.query("DELETE FROM trusted_devices WHERE user_id = ?").run(userId);
  ctx.db.query("DELETE FROM login_tokens WHERE user_id = ?").run(userId);
}

/**
 * A one-time login token for a link (`<site>/?token=…`) sent by mail or bot. Only its SHA-256 is
 * stored; it works once, within LOGIN_LINK_MS, and gives a fresh session (see exchangeLoginToken).
 */
export function mintLoginLink(ctx: AppContext, userId: string, now = Date.now()): string {
  const token = randomHex(32);
  tx(ctx.db, () => {
    ctx.db.query("DELETE FROM login_tokens WHERE expire_time <= ?").run(now);
    ctx.db
      .query("INSERT INTO login_tokens (token_hash, user_id, create_time, expire_time) VALUES (?, ?, ?, ?)")
      .run(sha256Hex(token), userId, now, now + LOGIN_LINK_MS);
  });
  return token;
}

/**
 * Uses up a login token from a link and opens a new session for its account. Anything else (a
 * session token, an expired or used link, a disabled account) gives null, so a link can never
 * put someone into a session its sender chose.
 */
export function exchangeLoginToken(
  ctx: AppContext,
  token: string,
  ip = "",
  userAgent = "",
  now = Date.now(),
): string | null {
  if (!TOKEN_PATTERN.test(token)) return null;
  const userId = tx(ctx.db, () => {
    const row = ctx.db
      .query<{ user_id: string; expire_time: number }, [string]>(
        "DELETE FROM login_tokens WHERE token_hash = ? RETURNING user_id, expire_time",
      )
      .get(sha256Hex(token));
    if (!row || row.expire_time <= now) return null;
    const user = ctx.db
      .query<{ disabled: number }, [string]>("SELECT disabled FROM users WHERE id = ?")
      .get(row.user_id);
    return user && !user.disabled ? row.user_id : null;
  });
  return userId ? createSession(ctx, userId, ip, userAgent) : null;
}
