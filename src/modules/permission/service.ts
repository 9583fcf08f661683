import type { AppContext } from "../../context.ts";
import type { PermissionGrant } from "../user/schema.ts";

/** The user's unexpired permissions, soonest expiry first (seed 000 §3 permissions). */
export function listMyPermissions(ctx: AppContext, userId: string, now = Date.now()): PermissionGrant[] {
  return ctx.db
    .query<PermissionGrant, [string, number]>(
      `SELECT p.id, p.name, p.desc, up.expire_time AS expireTime
       FROM user_permissions up JOIN permissions p ON p.id = up.permission_id
       WHERE up.user_id = ? AND up.expire_time > ? ORDER BY up.expire_time`,
    )
    .all(userId, now);
}
