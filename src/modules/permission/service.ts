import type { AppContext } from "../../context.ts";
import type { PermissionGrant } from "../user/schema.ts";

/** The user's unexpired permissions, soonest expiry first (seed 000 §3 permissions). */
export function listMyPermissions(ctx: AppContext, userId: string, now = Date.now()): PermissionGrant[] {
  const grants = ctx.cache.permissions.get(userId, () =>
    ctx.db
      .query<PermissionGrant, [string]>(
        // Subqueries, not a JOIN: bun:sqlite is several times faster this way (every userinfo call).
        `SELECT id, name, desc,
           (SELECT expire_time FROM user_permissions WHERE user_id = ?1 AND permission_id = permissions.id) AS expireTime
         FROM permissions
         WHERE id IN (SELECT permission_id FROM user_permissions WHERE user_id = ?1)
         ORDER BY expireTime`,
      )
      .all(userId),
  );
  return (grants ?? []).filter((grant) => grant.expireTime > now);
}
