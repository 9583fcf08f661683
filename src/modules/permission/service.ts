import type { AppContext } from "../../context.ts";
import { jsonValuesSql, tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { recordDelete, recordSave } from "../audit/service.ts";
import type { PermissionGrant } from "../user/schema.ts";
import type { PermissionItem } from "./schema.ts";

/** The user's unexpired permissions, soonest expiry first (seed 000 §3 permissions). */
export async function listMyPermissions(
  ctx: AppContext,
  userId: string,
  now = Date.now(),
): Promise<PermissionGrant[]> {
  const grants = await ctx.cache.permissions.get(
    userId,
    async () =>
      await ctx.db.all<PermissionGrant>(
        `SELECT id, name, "desc",
           (SELECT expire_time FROM user_permissions WHERE user_id = ?1 AND permission_id = permissions.id) AS "expireTime"
         FROM permissions
         WHERE id IN (SELECT permission_id FROM user_permissions WHERE user_id = ?1)
         ORDER BY "expireTime"`,
        userId,
      ),
  );
  return (grants ?? []).filter((grant) => grant.expireTime > now);
}

// ---- back office (seed 001 §2.2) ----

const ITEM_COLUMNS = `id AS _id, name, "desc", use_times AS "useTimes"`;

export async function listPermissions(ctx: AppContext): Promise<PermissionItem[]> {
  return await ctx.db.all<PermissionItem>(
    `SELECT ${ITEM_COLUMNS} FROM permissions ORDER BY create_time, name`,
  );
}

/** Creates (no `_id`) or renames a permission; names are unique. */
export async function savePermission(
  ctx: AppContext,
  input: { _id?: string; name: string; desc: string },
): Promise<PermissionItem> {
  return await tx(ctx.db, async () => {
    const clash = await ctx.db.get<{ id: string }>("SELECT id FROM permissions WHERE name = ?", input.name);
    if (clash && clash.id !== input._id) throw new RpcError(Code.badInput, `权限名已存在: ${input.name}`);
    let id = input._id;
    const before = id
      ? await ctx.db.get<PermissionItem>(`SELECT ${ITEM_COLUMNS} FROM permissions WHERE id = ?`, id)
      : null;
    if (id) {
      const changed = (
        await ctx.db.run(
          'UPDATE permissions SET name = ?, "desc" = ? WHERE id = ?',
          input.name,
          input.desc,
          id,
        )
      ).changes;
      if (!changed) throw new RpcError(Code.notFound, "权限不存在");
    } else {
      id = newId();
      await ctx.db.run(
        'INSERT INTO permissions (id, name, "desc", create_time) VALUES (?, ?, ?, ?)',
        id,
        input.name,
        input.desc,
        Date.now(),
      );
    }
    const saved = (await ctx.db.get<PermissionItem>(
      `SELECT ${ITEM_COLUMNS} FROM permissions WHERE id = ?`,
      id,
    )) as PermissionItem;
    await recordSave(ctx.db, "permission", id, before, saved, ["useTimes"]);
    return saved;
  });
}

/** Deletes a permission no combo still grants; users' grants of it go with it. */
export async function deletePermission(ctx: AppContext, id: string): Promise<void> {
  await tx(ctx.db, async () => {
    const granting = await ctx.db.all<{ name: string }>(
      `SELECT name FROM combos WHERE EXISTS (SELECT 1 FROM ${jsonValuesSql(ctx.db, "combos.permissions_gain", "text")} AS gained WHERE value = ?)`,
      id,
    );
    if (granting.length > 0)
      throw new RpcError(
        Code.badInput,
        `仍有商品授予该权限: ${granting.map((combo) => combo.name).join("、")}`,
      );
    const removed = await ctx.db.get<{ name: string; desc: string }>(
      'SELECT name, "desc" FROM permissions WHERE id = ?',
      id,
    );
    if (!removed) throw new RpcError(Code.notFound, "权限不存在");
    await ctx.db.run("DELETE FROM permissions WHERE id = ?", id);
    await recordDelete(ctx.db, "permission", id, removed);
  });
}
