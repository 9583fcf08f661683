/**
 * What the running bot knows about itself, per server (context): the token it last checked with
 * getMe and the bot's @username. Requests read it and never call the Bot API themselves.
 */
import type { AppContext } from "../../context.ts";
import { sha256Hex } from "../../rpc/ids.ts";

export interface BotIdentity {
  /** The token getMe answered for. */
  token: string;
  /** The bot's numeric id (the token's part before ":"). */
  botId: string;
  username: string;
}

const identities = new WeakMap<AppContext, BotIdentity>();

export function rememberBotIdentity(ctx: AppContext, identity: BotIdentity | null): void {
  if (identity) identities.set(ctx, identity);
  else identities.delete(ctx);
}

/** The bot's @username when getMe answered for the token now configured, else "". */
export async function knownBotUsername(ctx: AppContext): Promise<string> {
  const identity = identities.get(ctx);
  return identity && identity.token === (await ctx.settings.get("telegram_bot_token"))
    ? identity.username
    : "";
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
