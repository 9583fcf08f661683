import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import type { PermissionGrant } from "../user/schema.ts";
import type { PermissionItem } from "./schema.ts";

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

// ---- back office (seed 001 §2.2) ----

const ITEM_COLUMNS = "id AS _id, name, desc, use_times AS useTimes";

export function listPermissions(ctx: AppContext): PermissionItem[] {
  return ctx.db
    .query<PermissionItem, []>(`SELECT ${ITEM_COLUMNS} FROM permissions ORDER BY create_time, name`)
    .all();
}

/** Creates (no `_id`) or renames a permission; names are unique. */
export function savePermission(
  ctx: AppContext,
  input: { _id?: string; name: string; desc: string },
): PermissionItem {
  return tx(ctx.db, () => {
    const clash = ctx.db
      .query<{ id: string }, [string]>("SELECT id FROM permissions WHERE name = ?")
      .get(input.name);
    if (clash && clash.id !== input._id) throw new RpcError(Code.badInput, `权限名已存在: ${input.name}`);
    let id = input._id;
    if (id) {
      const changed = ctx.db
        .query("UPDATE permissions SET name = ?, desc = ? WHERE id = ?")
        .run(input.name, input.desc, id).changes;
      if (!changed) throw new RpcError(Code.notFound, "权限不存在");
    } else {
      id = newId();
      ctx.db
        .query("INSERT INTO permissions (id, name, desc, create_time) VALUES (?, ?, ?, ?)")
        .run(id, input.name, input.desc, Date.now());
    }
    return ctx.db
      .query<PermissionItem, [string]>(`SELECT ${ITEM_COLUMNS} FROM permissions WHERE id = ?`)
      .get(id) as PermissionItem;
  });
}

/** Deletes a permission no combo still grants; users' grants of it go with it. */
export function deletePermission(ctx: AppContext, id: string): void {
  tx(ctx.db, () => {
    const granting = ctx.db
      .query<{ name: string }, [string]>(
        "SELECT name FROM combos WHERE EXISTS (SELECT 1 FROM json_each(combos.permissions_gain) WHERE value = ?)",
      )
      .all(id);
    if (granting.length > 0)
      throw new RpcError(
        Code.badInput,
        `仍有商品授予该权限: ${granting.map((combo) => combo.name).join("、")}`,
      );
    const changed = ctx.db.query("DELETE FROM permissions WHERE id = ?").run(id).changes;
    if (!changed) throw new RpcError(Code.notFound, "权限不存在");
  });
}
