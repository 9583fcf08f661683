/**
 * What an operator checks when customers say the bot is silent (`ferry telegram status`): whether
 * the bot is on and how updates arrive, how many accounts are bound, the outbox by status, the
 * latest messages that failed and why, when a message last went out, and the alerts told lately.
 * Read-only; the token itself is never part of it.
 */
import type { AppContext } from "../../context.ts";
import { isBotEnabled } from "./bind.ts";
import { webhookUrlOf } from "./bot.ts";
import { botIdOf } from "./bot-state.ts";

/** Rows each list holds. */
export const STATUS_LIST_ROWS = 10;
/** Characters of a failed message's text the status shows. */
export const TEXT_START_CHARS = 40;

export type OutboxStatus = "pending" | "sent" | "failed";

export interface MessageFailure {
  id: string;
  chatId: number;
  /** E-mail of the account the chat is bound to now; "" when none is. */
  account: string;
  /** "failed": given up; "pending": still being retried. */
  status: Exclude<OutboxStatus, "sent">;
  attempts: number;
  lastError: string;
  /** The text's first 40 characters on one line, with … when there is more. */
  textStart: string;
  createTime: number;
}

export interface ToldAlert {
  kind: string;
  subjectId: string;
  /** The account's e-mail or the node's name; the id when neither exists any more. */
  subject: string;
  toldTime: number;
}

export interface TelegramStatus {
  tokenSet: boolean;
  /** The bot's numeric id, the token's public part before ":"; "" without a token. */
  botId: string;
  /** How updates arrive; "off" without a token. */
  receiving: "off" | "polling" | "webhook";
  boundAccounts: number;
  /** Messages by status (sent and failed ones are kept 30 days). */
  outbox: Record<OutboxStatus, number>;
  /** When the latest message went out; null when none of the kept ones has. */
  lastSentTime: number | null;
  /** The latest messages that failed, given up or still being retried; newest first. */
  failures: MessageFailure[];
  /** The latest alerts told (telegram_alerts), newest first. */
  alerts: ToldAlert[];
}

export async function telegramStatus(ctx: AppContext): Promise<TelegramStatus> {
  const token = await ctx.settings.get("telegram_bot_token");
  const tokenSet = await isBotEnabled(ctx);
  return {
    tokenSet,
    botId: botIdOf(token),
    receiving: !tokenSet ? "off" : (await webhookUrlOf(ctx, token)) ? "webhook" : "polling",
    boundAccounts: (await ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM telegram_bindings"))?.n ?? 0,
    outbox: await outboxCounts(ctx),
    lastSentTime:
      (await ctx.db.get<{ last: number | null }>("SELECT MAX(sent_time) AS last FROM telegram_outbox"))
        ?.last ?? null,
    failures: await latestFailures(ctx),
    alerts: await latestAlerts(ctx),
  };
}

async function outboxCounts(ctx: AppContext): Promise<Record<OutboxStatus, number>> {
  const counts: Record<OutboxStatus, number> = { pending: 0, sent: 0, failed: 0 };
  const rows = await ctx.db.all<{ status: OutboxStatus; n: number }>(
    "SELECT status, COUNT(*) AS n FROM telegram_outbox GROUP BY status",
  );
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

async function latestFailures(ctx: AppContext): Promise<MessageFailure[]> {
  return (
    await ctx.db.all<{
      id: string;
      chat_id: number;
      account: string;
      status: MessageFailure["status"];
      attempts: number;
      last_error: string;
      text_start: string;
      create_time: number;
    }>(
      `SELECT o.id, o.chat_id, COALESCE(u.email, '') AS account, o.status, o.attempts, o.last_error,
         SUBSTR(o.text, 1, ?1) AS text_start, o.create_time
       FROM telegram_outbox o
       LEFT JOIN telegram_bindings b ON b.chat_id = o.chat_id
       LEFT JOIN users u ON u.id = b.user_id
       WHERE o.status <> 'sent' AND o.last_error <> ''
       ORDER BY o.create_time DESC, o.id DESC LIMIT ?2`,
      TEXT_START_CHARS + 1,
      STATUS_LIST_ROWS,
    )
  ).map((row) => ({
    id: row.id,
    chatId: row.chat_id,
    account: row.account,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    textStart: oneLineStart(row.text_start),
    createTime: row.create_time,
  }));
}

/** The first 40 characters with line breaks as spaces; … when the text goes on. */
function oneLineStart(text: string): string {
  const chars = Array.from(text.replace(/\s/g, " "));
  return chars.length > TEXT_START_CHARS ? `${chars.slice(0, TEXT_START_CHARS).join("")}…` : chars.join("");
}

async function latestAlerts(ctx: AppContext): Promise<ToldAlert[]> {
  return (
    await ctx.db.all<{ kind: string; subject_id: string; subject: string; told_time: number }>(
      `SELECT a.kind, a.subject_id, COALESCE(u.email, g.name, a.subject_id) AS subject, a.told_time
       FROM telegram_alerts a
       LEFT JOIN users u ON u.id = a.subject_id
       LEFT JOIN agents g ON g.id = a.subject_id
       ORDER BY a.told_time DESC, a.kind, a.subject_id LIMIT ?`,
      STATUS_LIST_ROWS,
    )
  ).map((row) => ({
    kind: row.kind,
    subjectId: row.subject_id,
    subject: row.subject,
    toldTime: row.told_time,
  }));
}
