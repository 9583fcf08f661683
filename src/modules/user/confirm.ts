import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId, randomHex, sha256Hex } from "../../rpc/ids.ts";
import { hashPassword, type UserRow } from "./service.ts";

export type ConfirmAction = "signup_confirm" | "change_password";
const LINK_LIFETIME_MS = DAY_MS;

const SUBJECTS: Record<ConfirmAction, string> = {
  signup_confirm: "请确认您的注册邮箱",
  change_password: "请确认修改密码",
};
const BODIES: Record<ConfirmAction, string> = {
  signup_confirm: "欢迎注册。请打开下面的链接确认您的邮箱（24小时内有效）：",
  change_password: "您申请了修改密码。确认修改请打开下面的链接（24小时内有效），如非本人操作请忽略本邮件：",
};

/**
 * Stores a one-time link (only the key's hash) and e-mails it. For a password change the new
 * password hash waits in the row until the link is opened.
 */
export async function sendConfirmation(
  ctx: AppContext,
  user: UserRow,
  action: ConfirmAction,
  siteOrigin: string,
  newPasswordDigest?: string,
): Promise<void> {
  const serialId = newId();
  const key = randomHex(32);
  const now = Date.now();
  const newPasswordHash = newPasswordDigest ? await hashPassword(newPasswordDigest) : null;
  ctx.db
    .query(
      "INSERT INTO email_tokens (serial_id, user_id, action, key_hash, new_password_hash, create_time, expire_time) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .run(serialId, user.id, action, sha256Hex(key), newPasswordHash, now, now + LINK_LIFETIME_MS);
  const link = `${siteOrigin}/#/confirm?serial_id=${serialId}&key=${key}&action=${action}`;
  await ctx.mailer.send({
    to: user.email,
    subject: SUBJECTS[action],
    text: `${BODIES[action]}\n\n${link}\n`,
    html: `<p>${BODIES[action]}</p><p><a href="${link}">${link}</a></p>`,
  });
}

interface TokenRow {
  user_id: string;
  action: ConfirmAction;
  key_hash: string;
  new_password_hash: string | null;
  expire_time: number;
  used_time: number | null;
}

/** Opens a confirmation link once: marks the e-mail verified, or applies the waiting password (and ends all sessions). */
export function confirmLink(
  ctx: AppContext,
  action: ConfirmAction,
  serialId: string,
  key: string,
  now = Date.now(),
) {
  tx(ctx.db, () => {
    const row = ctx.db
      .query<TokenRow, [string]>("SELECT * FROM email_tokens WHERE serial_id = ?")
      .get(serialId);
    if (!row || row.action !== action || row.key_hash !== sha256Hex(key)) {
      throw new RpcError(Code.notFound, "链接无效");
    }
    if (row.used_time !== null) throw new RpcError(Code.badInput, "链接已使用");
    if (row.expire_time <= now) throw new RpcError(Code.badInput, "链接已过期");
    ctx.db.query("UPDATE email_tokens SET used_time = ? WHERE serial_id = ?").run(now, serialId);
    ctx.db.query("UPDATE users SET email_verified = 1 WHERE id = ?").run(row.user_id);
    if (action === "change_password" && row.new_password_hash) {
      ctx.db.query("UPDATE users SET password_hash = ? WHERE id = ?").run(row.new_password_hash, row.user_id);
      ctx.db.query("DELETE FROM sessions WHERE user_id = ?").run(row.user_id);
    }
  });
}
