/**
 * `ferry telegram status`: the Telegram bot as an operator needs to see it when customers say it
 * is silent — on or off (never the token), bound accounts, the outbox, the latest failures and
 * why, when a message last went out, and the alerts told lately. Times in the `timezone` setting.
 */
import type { Command } from "commander";
import { type MessageFailure, type TelegramStatus, telegramStatus } from "../src/modules/telegram/status.ts";
import { dataOption, type PrintTime, printJsonOr, timePrinter, withContext } from "./shared.ts";

const RECEIVING: Record<TelegramStatus["receiving"], string> = {
  off: "off",
  polling: "long polling (getUpdates)",
  webhook: "webhook (site_url)",
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function failureLine(failure: MessageFailure, at: PrintTime): string {
  const state =
    failure.status === "failed"
      ? `given up after ${plural(failure.attempts, "attempt")}`
      : `retrying, ${plural(failure.attempts, "attempt")} so far`;
  const to = `chat ${failure.chatId}${failure.account ? ` (${failure.account})` : ""}`;
  return [at(failure.createTime), to, state, failure.lastError, `"${failure.textStart}"`].join("  ");
}

function statusText(status: TelegramStatus, at: PrintTime, timeZone: string): string {
  const { outbox } = status;
  const list = (title: string, lines: string[]) =>
    lines.length ? [`${title} (latest ${lines.length}):`, ...lines] : [`${title}: none`];
  return [
    `bot token    ${status.tokenSet ? `set (bot id ${status.botId})` : "not set: the bot is off"}`,
    `receiving    ${RECEIVING[status.receiving]}`,
    `bound        ${plural(status.boundAccounts, "account")}`,
    `outbox       ${outbox.pending} pending, ${outbox.sent} sent, ${outbox.failed} failed`,
    `last sent    ${status.lastSentTime === null ? "never" : at(status.lastSentTime)}`,
    `times in     ${timeZone}`,
    "",
    ...list(
      "failed messages",
      status.failures.map((failure) => failureLine(failure, at)),
    ),
    "",
    ...list(
      "alerts told",
      status.alerts.map((alert) => [at(alert.toldTime), alert.kind, alert.subject].join("  ")),
    ),
  ].join("\n");
}

export function registerTelegramCommands(program: Command) {
  const telegram = program.command("telegram").description("the Telegram bot (messaging service)");

  telegram
    .command("status")
    .description(
      "whether the bot is on, bound accounts, the outbox (sent and failed kept 30 days), " +
        "the latest failed messages and alerts told; never prints the token",
    )
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      const { status, at, timeZone } = await withContext(options.data, async (ctx) => ({
        status: await telegramStatus(ctx),
        at: await timePrinter(ctx),
        timeZone: await ctx.settings.get("timezone"),
      }));
      printJsonOr(options.json ?? false, status, (value) => statusText(value, at, timeZone));
    });
}
