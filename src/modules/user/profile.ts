/**
 * The profile's save (`/api/user/change_use_info`, seed 000 §2 Profile, §7): the avatar and the
 * three toggles that shape the customer's subscriptions (docs/decisions.md "Profile toggles").
 * Only the caller's own row changes, and only these columns.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { downloadPath } from "../file/schema.ts";
import { requireOwnUpload } from "../file/service.ts";
import type { UserRow } from "./row.ts";
import { DEFAULT_ICON, ProfileMsg, type UserInfo } from "./schema.ts";
import { findUserById, userInfo } from "./service.ts";

export interface ProfileChange {
  /** Only the current address (any case) is accepted: changing it would need a confirmation mail. */
  email?: string;
  /** "" for the default logo, else the filename of one of the caller's uploads. */
  icon?: string;
  inXinjiang?: boolean;
  in_foreign?: boolean;
  use_english_node?: boolean;
}

const flag = (value: boolean | undefined, current: number) => (value === undefined ? current : value ? 1 : 0);

function requireSameEmail(user: UserRow, email: string | undefined) {
  if (email === undefined || email === "") return;
  if (email.toLowerCase() !== user.email.toLowerCase())
    throw new RpcError(Code.badInput, ProfileMsg.emailLocked);
}

/** Saves the caller's profile in one transaction; a refused field leaves everything as it was. */
export async function changeUseInfo(
  ctx: AppContext,
  userId: string,
  change: ProfileChange,
): Promise<UserInfo> {
  return await tx(ctx.db, async () => {
    const user = await findUserById(ctx, userId);
    if (!user) throw new RpcError(Code.notFound, "用户不存在");
    requireSameEmail(user, change.email);
    let icon = user.icon;
    if (change.icon !== undefined) {
      await requireOwnUpload(ctx, userId, change.icon);
      icon = change.icon === "" ? DEFAULT_ICON : downloadPath(change.icon);
    }
    await ctx.db.run(
      "UPDATE users SET icon = ?, in_xinjiang = ?, in_foreign = ?, use_english_node = ? WHERE id = ?",
      icon,
      flag(change.inXinjiang, user.in_xinjiang),
      flag(change.in_foreign, user.in_foreign),
      flag(change.use_english_node, user.use_english_node),
      userId,
    );
    return await userInfo(ctx, (await findUserById(ctx, userId)) as UserRow);
  });
}
