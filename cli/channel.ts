/**
 * Operator commands for referral channels: `ferry channel set|show`. They call the services that
 * /api/admin/users/update_channel and get_user_channel call, with the same schema.
 */
import type { Command } from "commander";
import { formatYuan } from "../src/lib/money.ts";
import { updateChannelInput } from "../src/modules/channel/schema.ts";
import { channelSummary, updateChannel } from "../src/modules/channel/service.ts";
import { dataOption, numberOption, parseOrDie, printJsonOr, withContext } from "./shared.ts";

const FLAGS = {
  email: "<email>",
  code: "--code",
  rewardRate: "--rate",
  comsumerDuration: "--days",
  name: "--name",
};

interface SetOptions {
  code?: string;
  rate?: string;
  days?: string;
  name?: string;
  data?: string;
  json?: boolean;
}

export function registerChannelCommands(program: Command) {
  const channel = program.command("channel").description("referral channels (邀请返利)");

  channel
    .command("set")
    .description("give an account a channel, or change it; a normal account becomes type channel")
    .argument("<email>", "the account")
    .option("--code <code>", "6 letters or digits, unique; omitted: kept, or random for a new channel")
    .option(
      "--rate <rate>",
      "rebate rate 0–0.5 of what invited customers pay (default: setting channelRewardRate)",
    )
    .option(
      "--days <days>",
      "days after a customer's sign-up during which orders earn (default: channelConsumerDuration)",
    )
    .option("--name <name>", "the channel's name")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (email: string, options: SetOptions) => {
      const input = parseOrDie(
        updateChannelInput,
        {
          email,
          code: options.code,
          name: options.name,
          rewardRate: numberOption("--rate", options.rate),
          comsumerDuration: numberOption("--days", options.days),
        },
        FLAGS,
      );
      const saved = await withContext(options.data, async (ctx) => await updateChannel(ctx, input));
      printJsonOr(
        options.json ?? false,
        saved,
        (c) =>
          `channel ${c.code} of ${c.email}: rate ${c.rewardRate}, ${c.comsumerDuration} days${c.name ? `, ${c.name}` : ""}`,
      );
    });

  channel
    .command("show")
    .description("an account's channel, how many customers it invited and the rebates it earned")
    .argument("<email>", "the account")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (email: string, options: { data?: string; json?: boolean }) => {
      const summary = await withContext(options.data, async (ctx) => await channelSummary(ctx, email));
      printJsonOr(options.json ?? false, summary, (s) =>
        s.channel
          ? [
              `channel ${s.channel.code} of ${s.channel.email}${s.channel.name ? ` (${s.channel.name})` : ""}`,
              `rate ${s.channel.rewardRate}, orders within ${s.channel.comsumerDuration} days of sign-up earn`,
              `invited ${s.invitedCount}; rebates ${s.rewardCount}, total ¥${formatYuan(s.rewardTotalFen)}; wallet ¥${formatYuan(s.walletFen)}`,
            ].join("\n")
          : `${email} has no channel`,
      );
    });
}
