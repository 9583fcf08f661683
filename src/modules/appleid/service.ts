import { Code, RpcError } from "../../rpc/codes.ts";
import type { Settings } from "../settings/schema.ts";
import type { UserRow } from "../user/row.ts";
import { AppleIdMsg, type AppleIdShareLink } from "./schema.ts";

/**
 * The sharing link for `user`, checked against the account as stored now (seed 000 §5: paidUser is
 * re-read before opening), so the link never reaches a customer who has not paid.
 */
export function appleIdShareLink(
  settings: Pick<Settings, "apple_id_share_url">,
  user: Pick<UserRow, "paid_user">,
): AppleIdShareLink {
  const url = settings.apple_id_share_url.trim();
  if (!url) throw new RpcError(Code.notFound, AppleIdMsg.notOpen);
  if (user.paid_user !== 1) throw new RpcError(Code.forbidden, AppleIdMsg.notPaid);
  return { url };
}
