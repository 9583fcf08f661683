/**
 * `ferry stats [--days 7]`: the back office's basic statistics (seed 001 §2.10) from the same
 * service as `/api/admin/users/basic_stastic`, one line per business day, newest first.
 */
import type { Command } from "commander";
import {
  type BasicStastic,
  basicStasticInput,
  STATS_DEFAULT_DAYS,
  STATS_MAX_DAYS,
  type StasticDay,
} from "../src/modules/stats/schema.ts";
import { basicStastic } from "../src/modules/stats/service.ts";
import { dataOption, numberOption, parseOrDie, printJsonOr, withContext } from "./shared.ts";

const COLUMNS: [header: string, value: (row: StasticDay) => string | number][] = [
  ["day", (r) => r.day],
  ["check-ins", (r) => r.signUseNum],
  ["paid", (r) => r.payNum],
  ["income ¥", (r) => r.income.toFixed(2)],
  ["perm users", (r) => r.normalUserNum],
  ["perm G", (r) => r.normalTraffic],
  ["perm avg G", (r) => r.normalAvg],
  ["pkg users", (r) => r.dayUserNum],
  ["pkg G", (r) => r.dayTrafficUse],
  ["pkg avg G", (r) => r.dayAvg],
  ["draws", (r) => r.lotterySpendNum],
  ["draw cost G", (r) => r.lotterySpendTraffic],
  ["wins", (r) => r.lotteryRewardNum],
  ["won G", (r) => r.lotteryRewardTraffic],
  ["active", (r) => r.activeUserNum],
];

function statsText(stats: BasicStastic): string {
  const cells = [
    COLUMNS.map(([header]) => header),
    ...stats.stastic_list.map((row) => COLUMNS.map(([, value]) => String(value(row)))),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((line) => (line[i] as string).length)));
  const lines = cells.map((line) =>
    line
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join("  "),
  );
  return [
    ...lines,
    `permanent traffic left ${stats.totalRemainingTraffic} T  running time packages ${stats.activeVipCount}`,
  ].join("\n");
}

export function registerStatsCommands(program: Command) {
  program
    .command("stats")
    .description("basic statistics per business day, newest first: check-ins, income, traffic, lucky draws")
    .option(
      "--days <n>",
      `business days, today included (default ${STATS_DEFAULT_DAYS}, at most ${STATS_MAX_DAYS})`,
    )
    .addOption(dataOption())
    .option("--json", "print as basic_stastic answers")
    .action(async (options: { days?: string; data?: string; json?: boolean }) => {
      const { num } = parseOrDie(
        basicStasticInput,
        { num: numberOption("--days", options.days) },
        { num: "--days" },
      );
      const stats = await withContext(options.data, async (ctx) => await basicStastic(ctx, num, Date.now()));
      printJsonOr(options.json ?? false, stats, statsText);
    });
}
