/**
 * What the running bot knows about itself: the bot getMe last answered for (its id and @username),
 * kept in `telegram_poll_state` so that the profile page shows it on every replica, not only on the
 * one running the bot (issue 28). Requests read it and never call the Bot API themselves.
 */
import type { AppContext } from "../../context.ts";
import { sha256Hex } from "../../rpc/ids.ts";

export interface BotIdentity {
  /** The bot's numeric id (the token's part before ":"). */
  botId: string;
  username: string;
}

/** Stores what getMe answered (a write only when it changed). */
export async function rememberBotIdentity(ctx: AppContext, identity: BotIdentity): Promise<void> {
  await ctx.db.run(
    `UPDATE telegram_poll_state SET me_bot_id = ?1, me_username = ?2
       WHERE id = 1 AND (me_bot_id <> ?1 OR me_username <> ?2)`,
    identity.botId,
    identity.username,
  );
}

/** The bot's @username when getMe answered for the bot of the token now configured, else "". */
export async function knownBotUsername(ctx: AppContext): Promise<string> {
  const botId = botIdOf(await ctx.settings.get("telegram_bot_token"));
  if (botId === "") return "";
  const me = await ctx.db.get<{ me_bot_id: string; me_username: string }>(
    "SELECT me_bot_id, me_username FROM telegram_poll_state WHERE id = 1",
  );
  return me?.me_bot_id === botId ? me.me_username : "";
}

/** The bot's id as the token states it ("123456789" of "123456789:AA…"). */
export const botIdOf = (token: string) => token.slice(0, Math.max(0, token.indexOf(":")));

/**
 * The webhook's path part and X-Telegram-Bot-Api-Secret-Token, derived from the token: only who
 * knows the token (Telegram and this server) can make them, and a new token changes both.
 */
export function webhookSecrets(token: string): { path: string; header: string } {
  return {
    path: sha256Hex(`ferry-telegram-webhook-path:${token}`).slice(0, 40),
    header: sha256Hex(`ferry-telegram-webhook-header:${token}`),
  };
}

export const WEBHOOK_PREFIX = "/api/telegram/webhook/";
