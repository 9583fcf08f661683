import type { AppContext } from "../../context.ts";
import { DAY_MS } from "../../lib/time.ts";
import { randomHex, sha256Hex } from "../../rpc/ids.ts";
import type { UserRow } from "./service.ts";

/** Server-side session lifetime; the cookie may live longer (seed: 99999 days) but the row decides. */
export const SESSION_DAYS = 365;
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

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
    const user = row && ctx.db.query<UserRow, [string]>("SELECT * FROM users WHERE id = ?").get(row.user_id);
    return row && user ? { user, expireTime: row.expire_time } : null;
  });
  if (!session || session.expireTime <= now || session.user.disabled) return null;
  return session.user;
}

export function deleteSession(ctx: AppContext, token: string | undefined): void {
  if (!token || !TOKEN_PATTERN.test(token)) return;
  ctx.db.query("DELETE FROM sessions WHERE token_hash = ?").run(sha256Hex(token));
}
