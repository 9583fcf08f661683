/**
 * Bot messages waiting to be sent (issue 13 §5). Callers queue inside the transaction of the event
 * they report, so a message exists exactly when the event does; the sender (sender.ts) sends and
 * retries later, off every request's path. Queueing is plain INSERTs: it joins the caller's `tx`.
 */
import type { AppContext } from "../../context.ts";
import { nocaseEqualsSql } from "../../db/db.ts";
import { newId } from "../../rpc/ids.ts";
import { roleOf, type UserRow } from "../user/row.ts";

/** The Bot API refuses longer texts (sendMessage `text`: 1–4096 characters after entity parsing). */
export const MAX_MESSAGE_CHARS = 4096;

/** Queues one message for a chat; a dedupe key already queued (or sent) makes it a no-op. */
export async function queueChatMessage(
  ctx: AppContext,
  chatId: number,
  text: string,
  dedupeKey?: string,
): Promise<void> {
  const now = Date.now();
  await ctx.db.run(
    `INSERT INTO telegram_outbox (id, chat_id, text, dedupe_key, create_time, next_try_time)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (dedupe_key) DO NOTHING`,
    newId(now),
    chatId,
    clampMessage(text),
    dedupeKey ?? null,
    now,
    now,
  );
}

/** Cuts a text to what one Bot API message can carry. */
export function clampMessage(text: string): string {
  const chars = Array.from(text);
  return chars.length <= MAX_MESSAGE_CHARS ? text : `${chars.slice(0, MAX_MESSAGE_CHARS - 1).join("")}…`;
}

/** The chat bound to an account, or null. */
export async function boundChatOf(ctx: AppContext, userId: string): Promise<number | null> {
  return (
    (await ctx.db.get<{ chat_id: number }>("SELECT chat_id FROM telegram_bindings WHERE user_id = ?", userId))
      ?.chat_id ?? null
  );
}

/**
 * Queues `text` for the customer's bound chat; nothing when the account has not bound the bot.
 * `dedupeKey`, when given, makes a second queueing with the same key a no-op (one alert per event).
 */
export async function queueUserMessage(
  ctx: AppContext,
  userId: string,
  text: string,
  dedupeKey?: string,
): Promise<void> {
  const chatId = await boundChatOf(ctx, userId);
  if (chatId === null) return;
  await queueChatMessage(ctx, chatId, text, dedupeKey === undefined ? undefined : `user:${dedupeKey}`);
}

/** Queues `text` for every bound admin account (same dedupe rule, per admin chat). */
export async function queueAdminMessage(ctx: AppContext, text: string, dedupeKey?: string): Promise<void> {
  for (const chatId of await adminChats(ctx)) {
    await queueChatMessage(
      ctx,
      chatId,
      text,
      dedupeKey === undefined ? undefined : `admin:${dedupeKey}:${chatId}`,
    );
  }
}

/**
 * The chats of bound accounts whose role is admin: stored type admin, or listed in the admin_id
 * setting by id or e-mail; roleOf has the last word (a listed e-mail counts only once confirmed).
 */
export async function adminChats(ctx: AppContext): Promise<number[]> {
  const settings = await ctx.settings.all();
  const listed = settings.admin_id.map((entry) => entry.toLowerCase());
  const marks = listed.map(() => "?").join(", ");
  const byEmail = listed.map(() => nocaseEqualsSql(ctx.db, "u.email")).join(" OR ");
  const byList = listed.length > 0 ? ` OR u.id IN (${marks}) OR ${byEmail}` : "";
  return (
    await ctx.db.all<Pick<UserRow, "id" | "email" | "type" | "email_verified"> & { chat_id: number }>(
      `SELECT u.id, u.email, u.type, u.email_verified, b.chat_id
       FROM telegram_bindings b JOIN users u ON u.id = b.user_id
       WHERE u.disabled = 0 AND (u.type = 'admin'${byList})`,
      ...listed,
      ...listed,
    )
  )
    .filter((row) => roleOf(row, settings) === "admin")
    .map((row) => row.chat_id);
}
