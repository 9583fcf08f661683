/**
 * Mailed confirmation links: sign-up confirmation (opening the link confirms the address) and
 * password reset (the new password waits with the link and is applied only when the person who
 * opened the link types it again). Links point at the trusted site origin, never at the Host the
 * request came with.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { escapeHtml } from "../../lib/html.ts";
import { DAY_MS } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId, randomHex, sha256Hex } from "../../rpc/ids.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import { recordError } from "../errors/service.ts";
import { siteOrigin } from "../settings/schema.ts";
import type { UserRow } from "./row.ts";
import { ConfirmMsg } from "./schema.ts";
import { findUserById, hashPassword, userFromSubscriptionUrl } from "./service.ts";
import { revokeAccountAccess } from "./session.ts";

export type ConfirmAction = "signup_confirm" | "change_password";
const LINK_LIFETIME_MS = DAY_MS;
/** Wrong passwords typed on one change-password link before it is spent. */
export const MAX_PASSWORD_TRIES = 5;
/**
 * Reset mails per account, counted only once the subscription link proved the account: strangers
 * cannot use up the owner's resets, and whoever holds the link cannot flood the owner's mailbox.
 */
export const RESET_MAILS: RateRule = { name: "reset-mails", max: 5, windowMs: 60 * 60_000 };
/** The error-log name under which the admin finds why no mail link was sent. */
export const NO_ORIGIN_LOG = "mail link: no site origin";

const SUBJECTS: Record<ConfirmAction, string> = {
  signup_confirm: "请确认您的注册邮箱",
  change_password: "请确认修改密码",
};
const MAIL_NAMES: Record<ConfirmAction, string> = {
  signup_confirm: "注册确认",
  change_password: "修改密码确认",
};
const BODIES: Record<ConfirmAction, string> = {
  signup_confirm: "欢迎注册。请打开下面的链接确认您的邮箱（24小时内有效）：",
  change_password:
    "您申请了修改密码。请打开下面的链接，在页面上再次输入新密码完成修改（24小时内有效）。如非本人操作，请忽略本邮件，您的密码不会改变：",
};

/** Subject and bodies of a confirmation mail; the link is escaped wherever it goes into HTML. */
export function confirmationMail(action: ConfirmAction, link: string) {
  const body = BODIES[action];
  const href = escapeHtml(link);
  return {
    subject: SUBJECTS[action],
    text: `${body}\n\n${link}\n`,
    html: `<p>${escapeHtml(body)}</p><p><a href="${href}">${href}</a></p>`,
  };
}

/** The trusted origin for mailed links; without one, logs why for the admin and answers null. */
async function linkOrigin(ctx: AppContext, action: ConfirmAction): Promise<string | null> {
  const origin = siteOrigin(await ctx.settings.all());
  if (!origin) {
    await recordError(
      ctx.db,
      NO_ORIGIN_LOG,
      new Error(`未设置网站地址（site_url 或 preferDomain），${MAIL_NAMES[action]}邮件未发送`),
    );
  }
  return origin;
}

/** Whether confirmation links can be mailed at all: mail is set up and the site's origin is known. */
export async function canMailLinks(ctx: AppContext): Promise<boolean> {
  return (await ctx.mailer.configured()) && siteOrigin(await ctx.settings.all()) !== null;
}

/** Stores a one-time link (only the key's hash, and the new password's hash) and mails it. */
async function mailLink(
  ctx: AppContext,
  user: UserRow,
  action: ConfirmAction,
  origin: string,
  newPasswordDigest?: string,
): Promise<void> {
  const serialId = newId();
  const key = randomHex(32);
  const now = Date.now();
  const newPasswordHash = newPasswordDigest ? await hashPassword(newPasswordDigest) : null;
  await ctx.db.run(
    "INSERT INTO email_tokens (serial_id, user_id, action, key_hash, new_password_hash, create_time, expire_time) VALUES (?, ?, ?, ?, ?, ?, ?)",
    serialId,
    user.id,
    action,
    sha256Hex(key),
    newPasswordHash,
    now,
    now + LINK_LIFETIME_MS,
  );
  const link = `${origin}/#/confirm?serial_id=${serialId}&key=${key}&action=${action}`;
  await ctx.mailer.send({ to: user.email, ...confirmationMail(action, link) });
}

/** After sign-up: mails the confirmation link when mail and the site origin are set up. Never throws. */
export async function sendSignupConfirmation(ctx: AppContext, user: UserRow): Promise<void> {
  if (!(await ctx.mailer.configured())) return;
  const origin = await linkOrigin(ctx, "signup_confirm");
  if (!origin) return;
  // The account exists and works; a mail failure must not undo the sign-up, only be logged for the admin.
  await mailLink(ctx, user, "signup_confirm", origin).catch(async (error) => {
    await recordError(ctx.db, "signup_confirm mail", error);
  });
}

export interface ResetRequest {
  describUrl: string;
  email: string;
  newPasswordDigest: string;
}

/**
 * Reset by subscription link (seed 000 §8): mails the account's address a link; nothing changes
 * until the password is typed again on the page that link opens (confirmPasswordChange).
 */
export async function requestPasswordReset(
  ctx: AppContext,
  request: ResetRequest,
): Promise<{ email: string }> {
  const user = await userFromSubscriptionUrl(ctx, request.describUrl);
  if (user.email.toLowerCase() !== request.email) throw new RpcError(Code.badInput, ConfirmMsg.emailMismatch);
  if (!user.can_change_password) throw new RpcError(Code.accountRefused, ConfirmMsg.refused);
  if (!(await ctx.mailer.configured())) throw new RpcError(Code.badInput, ConfirmMsg.noMail);
  const origin = await linkOrigin(ctx, "change_password");
  if (!origin) throw new RpcError(Code.badInput, ConfirmMsg.noOrigin);
  if (!(await ctx.limiter.hit(RESET_MAILS, user.id)))
    throw new RpcError(Code.tooManyRequests, ConfirmMsg.tooManyResets);
  try {
    await mailLink(ctx, user, "change_password", origin, request.newPasswordDigest);
  } catch (error) {
    await recordError(ctx.db, "reset_password mail", error);
    throw new RpcError(Code.internal, ConfirmMsg.mailFailed);
  }
  return { email: user.email };
}

interface TokenRow {
  serial_id: string;
  user_id: string;
  action: ConfirmAction;
  key_hash: string;
  new_password_hash: string | null;
  expire_time: number;
  used_time: number | null;
  tries: number;
}

/** The unused, unexpired link for serial_id and key, or the reason it cannot be used. */
async function openLink(
  ctx: AppContext,
  action: ConfirmAction,
  serialId: string,
  key: string,
  now: number,
): Promise<TokenRow> {
  const row = await ctx.db.get<TokenRow>("SELECT * FROM email_tokens WHERE serial_id = ?", serialId);
  if (!row || row.action !== action || row.key_hash !== sha256Hex(key)) {
    throw new RpcError(Code.notFound, ConfirmMsg.invalid);
  }
  if (row.used_time !== null) throw new RpcError(Code.badInput, ConfirmMsg.used);
  if (row.expire_time <= now) throw new RpcError(Code.badInput, ConfirmMsg.expired);
  return row;
}

/** Opens a sign-up link once: the e-mail is confirmed. */
export async function confirmSignup(
  ctx: AppContext,
  serialId: string,
  key: string,
  now = Date.now(),
): Promise<void> {
  await tx(ctx.db, async () => {
    const row = await openLink(ctx, "signup_confirm", serialId, key, now);
    await ctx.db.run("UPDATE email_tokens SET used_time = ? WHERE serial_id = ?", now, row.serial_id);
    await ctx.db.run("UPDATE users SET email_verified = 1 WHERE id = ?", row.user_id);
  });
}

/**
 * Applies a reset when the password typed on the link's page is the one asked for with it: the
 * owner who did not ask cannot confirm someone else's password by opening the mail. A mismatch
 * leaves the link usable for MAX_PASSWORD_TRIES tries in all. Success ends every session and
 * forgets the trusted browsers of the account. Answers the account's id.
 */
export async function confirmPasswordChange(
  ctx: AppContext,
  serialId: string,
  key: string,
  typedDigest: string,
  now = Date.now(),
): Promise<string> {
  // The try is counted before the (slow) check, so concurrent tries cannot exceed the bound.
  const row = await tx(ctx.db, async () => {
    const open = await openLink(ctx, "change_password", serialId, key, now);
    // A link mailed before an admin turned canChangePassword off must not change the password either.
    if (!(await findUserById(ctx, open.user_id))?.can_change_password)
      throw new RpcError(Code.accountRefused, ConfirmMsg.refused);
    if (open.tries >= MAX_PASSWORD_TRIES) throw new RpcError(Code.badInput, ConfirmMsg.triesUsedUp);
    await ctx.db.run("UPDATE email_tokens SET tries = tries + 1 WHERE serial_id = ?", serialId);
    return open;
  });
  const matches =
    row.new_password_hash !== null && (await Bun.password.verify(typedDigest, row.new_password_hash));
  if (!matches) {
    const left = MAX_PASSWORD_TRIES - row.tries - 1;
    throw new RpcError(Code.badInput, left > 0 ? ConfirmMsg.passwordMismatch(left) : ConfirmMsg.triesUsedUp);
  }
  await tx(ctx.db, async () => {
    const spent = (
      await ctx.db.run(
        "UPDATE email_tokens SET used_time = ? WHERE serial_id = ? AND used_time IS NULL",
        now,
        serialId,
      )
    ).changes;
    if (!spent) throw new RpcError(Code.badInput, ConfirmMsg.used);
    await ctx.db.run(
      "UPDATE users SET password_hash = ?, email_verified = 1 WHERE id = ?",
      row.new_password_hash,
      row.user_id,
    );
    // Other pending resets of the account (someone else's request among them) die with this one.
    await ctx.db.run(
      "UPDATE email_tokens SET used_time = ? WHERE user_id = ? AND action = 'change_password' AND used_time IS NULL",
      now,
      row.user_id,
    );
    await revokeAccountAccess(ctx, row.user_id);
  });
  return row.user_id;
}
