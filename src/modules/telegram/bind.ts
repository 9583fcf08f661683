/**
 * Binding a Telegram chat to an account (seed 000 §2 Profile, issue 13 §5). The profile shows
 * "/bind <userId> <code>": the user id names the account, the code proves the sender saw that
 * account's own profile page. A code is 8 random digits, lives 10 minutes, is stored hashed, works
 * once, and dies after 5 wrong tries; a chat also has its own try limit. A wrong code gets the
 * same answer whether or not the id exists.
 */
import { randomInt } from "node:crypto";
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { ID_PATTERN } from "../../lib/id-schema.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { sameSecret, sha256Hex } from "../../rpc/ids.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import { USER_ROW_SELECT, type UserRow } from "../user/row.ts";
import type { TgUser } from "./api.ts";
import { knownBotUsername } from "./bot-state.ts";
import { boundChatOf, queueChatMessage } from "./outbox.ts";
import {
  BIND_CODE_DIGITS,
  BIND_CODE_MAX_FAILURES,
  BIND_CODE_TTL_MS,
  BIND_KEYWORD,
  type BindInfo,
  BindMsg,
} from "./schema.ts";

/** Wrong bind commands one chat may send in a window, whatever account they name. */
export const BIND_CHAT_RULE: RateRule = { name: "telegram-bind-chat", max: 10, windowMs: 15 * 60_000 };

export const BotBindMsg = {
  refused: "绑定码错误或已过期。请在网站「个人信息」页复制最新的绑定命令，10 分钟内发给我。",
  tooManyTries: "尝试次数过多，请 15 分钟后再试。",
  usage: `绑定命令的格式是 ${BIND_KEYWORD} <用户ID> <绑定码>，请在网站「个人信息」页复制。`,
} as const;

const codeHash = (userId: string, code: string) => sha256Hex(`ferry-telegram-bind:${userId}:${code}`);

export async function isBotEnabled(ctx: AppContext): Promise<boolean> {
  return (await ctx.settings.get("telegram_bot_token")) !== "";
}

/**
 * `/api/user/bind_info`: for an unbound account a fresh code (replacing any earlier one) in the
 * command its owner sends the bot; agency accounts have no bind section (1003).
 */
export async function bindInfo(ctx: AppContext, user: UserRow, now = Date.now()): Promise<BindInfo> {
  if (user.is_agency === 1) throw new RpcError(Code.forbidden, BindMsg.agencyRefused);
  const botUsername = await knownBotUsername(ctx);
  const none = { bound: false, command: "", link: "", expireTime: 0, botUsername, chatName: "", bindTime: 0 };
  if (!(await isBotEnabled(ctx))) return { enabled: false, ...none };
  const binding = await bindingOf(ctx, user.id);
  if (binding) {
    const chatName = binding.username ? `@${binding.username}` : binding.name;
    return { enabled: true, ...none, bound: true, chatName, bindTime: binding.bind_time };
  }
  const code = String(randomInt(0, 10 ** BIND_CODE_DIGITS)).padStart(BIND_CODE_DIGITS, "0");
  const expireTime = now + BIND_CODE_TTL_MS;
  await ctx.db.run(
    `INSERT INTO telegram_bind_codes (user_id, code_hash, failed_attempts, create_time, expire_time)
       VALUES (?1, ?2, 0, ?3, ?4)
       ON CONFLICT (user_id) DO UPDATE SET code_hash = ?2, failed_attempts = 0, create_time = ?3, expire_time = ?4`,
    user.id,
    codeHash(user.id, code),
    now,
    expireTime,
  );
  return {
    enabled: true,
    bound: false,
    botUsername,
    command: `${BIND_KEYWORD} ${user.id} ${code}`,
    link: botUsername ? `https://t.me/${botUsername}?start=${user.id}_${code}` : "",
    expireTime,
    chatName: "",
    bindTime: 0,
  };
}

interface BindingRow {
  username: string;
  name: string;
  bind_time: number;
}

/** The account's binding: the chat's @username and name as they were when it bound, and when. */
async function bindingOf(ctx: AppContext, userId: string): Promise<BindingRow | null> {
  return await ctx.db.get<BindingRow>(
    "SELECT username, name, bind_time FROM telegram_bindings WHERE user_id = ?",
    userId,
  );
}

/** `/api/user/unbind`: removes the account's binding and tells the chat; nothing bound is fine too. */
export async function unbindAccount(ctx: AppContext, userId: string): Promise<void> {
  await tx(ctx.db, async () => {
    const chatId = await deleteBinding(ctx, userId);
    if (chatId !== null) await queueChatMessage(ctx, chatId, UNBOUND_TEXT);
  });
}

export const UNBOUND_TEXT = "已解除与网站账号的绑定，此 Telegram 不再能操作该账号。";

/** Removes the account's binding; the chat it had, or null. */
export async function deleteBinding(ctx: AppContext, userId: string): Promise<number | null> {
  const chatId = await boundChatOf(ctx, userId);
  if (chatId !== null) await ctx.db.run("DELETE FROM telegram_bindings WHERE user_id = ?", userId);
  return chatId;
}

export type BindOutcome =
  | { ok: true; email: string; replacedAccount: boolean }
  | { ok: false; reason: "refused" | "tooManyTries" };

/**
 * A `/bind <userId> <code>` from a private chat. Right code: the chat and the account are bound
 * to each other only (an earlier chat of the account, or account of the chat, is let go), and the
 * code is used up. Runs in one transaction; the caller answers the chat.
 */
export async function bindChat(
  ctx: AppContext,
  chatId: number,
  from: TgUser | undefined,
  userId: string,
  code: string,
  now = Date.now(),
): Promise<BindOutcome> {
  // A refused code returns (never throws), so its try is kept when the transaction commits.
  const tries = await ctx.limiter.reserve([{ rule: BIND_CHAT_RULE, key: String(chatId) }], now);
  if (!tries) return { ok: false, reason: "tooManyTries" };
  const outcome = await tx(ctx.db, async () => await checkCodeAndBind(ctx, chatId, from, userId, code, now));
  if (outcome.ok) await tries.release();
  return outcome;
}

async function checkCodeAndBind(
  ctx: AppContext,
  chatId: number,
  from: TgUser | undefined,
  userId: string,
  code: string,
  now: number,
): Promise<BindOutcome> {
  const refused = { ok: false, reason: "refused" } as const;
  if (!ID_PATTERN.test(userId) || !new RegExp(`^\\d{${BIND_CODE_DIGITS}}$`).test(code)) return refused;
  const live = await ctx.db.get<{ code_hash: string; failed_attempts: number; expire_time: number }>(
    "SELECT code_hash, failed_attempts, expire_time FROM telegram_bind_codes WHERE user_id = ?",
    userId,
  );
  if (!live || live.expire_time <= now || live.failed_attempts >= BIND_CODE_MAX_FAILURES) return refused;
  if (!sameSecret(codeHash(userId, code), live.code_hash)) {
    await ctx.db.run(
      "UPDATE telegram_bind_codes SET failed_attempts = failed_attempts + 1 WHERE user_id = ?",
      userId,
    );
    return refused;
  }
  const user = await ctx.db.get<{ email: string; disabled: number; is_agency: number }>(
    "SELECT email, disabled, is_agency FROM users WHERE id = ?",
    userId,
  );
  if (!user || user.disabled === 1 || user.is_agency === 1) return refused;
  await ctx.db.run("DELETE FROM telegram_bind_codes WHERE user_id = ?", userId);
  const previousChat = await boundChatOf(ctx, userId);
  if (previousChat !== null && previousChat !== chatId) {
    await queueChatMessage(ctx, previousChat, "你的网站账号已绑定到另一个 Telegram，此处不再能操作该账号。");
  }
  const replacedAccount =
    (await ctx.db.run("DELETE FROM telegram_bindings WHERE chat_id = ? AND user_id != ?", chatId, userId))
      .changes > 0;
  await ctx.db.run("DELETE FROM telegram_bindings WHERE user_id = ?", userId);
  await ctx.db.run(
    "INSERT INTO telegram_bindings (user_id, chat_id, username, name, bind_time) VALUES (?, ?, ?, ?, ?)",
    userId,
    chatId,
    (from?.username ?? "").slice(0, 64),
    displayName(from),
    now,
  );
  return { ok: true, email: user.email, replacedAccount };
}

function displayName(from: TgUser | undefined): string {
  if (!from) return "";
  return [from.first_name, from.last_name].filter(Boolean).join(" ").slice(0, 128);
}

/** The account bound to a chat, or null. */
export async function accountOfChat(ctx: AppContext, chatId: number): Promise<UserRow | null> {
  return await ctx.db.get<UserRow>(
    `${USER_ROW_SELECT} WHERE u.id = (SELECT user_id FROM telegram_bindings WHERE chat_id = ?)`,
    chatId,
  );
}
