/**
 * `ferry traffic show <email>`: a customer's balances and traffic records, from the services the
 * portal's dashboard and 流量记录 page use.
 */
import type { Command } from "commander";
import { formatGB, formatSignedGB } from "../src/lib/traffic.ts";
import {
  TRAFFIC_RECORD_DAYS,
  TRAFFIC_TYPE_TEXT,
  type TrafficRecord,
  trafficRecordsInput,
} from "../src/modules/traffic/schema.ts";
import { listTrafficRecords, type TrafficBalance, trafficBalance } from "../src/modules/traffic/service.ts";
import { findUserByEmail } from "../src/modules/user/service.ts";
import {
  dataOption,
  die,
  numberOption,
  type PrintTime,
  parseOrDie,
  printJsonOr,
  timePrinter,
  withContext,
} from "./shared.ts";

interface TrafficShowOptions {
  days?: string;
  type?: string;
  data?: string;
  json?: boolean;
}

interface TrafficReport {
  balance: TrafficBalance;
  days: number;
  type: string;
  records: TrafficRecord[];
}

function timePackageLine(balance: TrafficBalance, now: number, at: PrintTime): string {
  if (balance.vipExpireTime <= now) return "none";
  const used = `${formatGB(balance.dailyTimePackageUsage)} / ${formatGB(balance.limit)} G`;
  return `until ${at(balance.vipExpireTime)}, today ${used} used`;
}

const recordLine = (r: TrafficRecord, at: PrintTime) =>
  [
    r.day,
    r.type,
    TRAFFIC_TYPE_TEXT[r.type] ?? r.type,
    `change ${formatSignedGB(r.trafficChange)} G`,
    `package ${formatGB(r.exemptionTraffic)} G`,
    `left ${formatGB(r.allTraffic)} G`,
    `spent ${formatGB(r.allSpend)} G`,
    at(r.updateTime),
    r.desc,
  ].join("  ");

function reportText(report: TrafficReport, now: number, at: PrintTime): string {
  const { balance } = report;
  return [
    balance.email,
    `permanent traffic  ${formatGB(balance.traffic)} G left, ${formatGB(balance.spendTraffic)} G spent in all`,
    `time package       ${timePackageLine(balance, now, at)}`,
    `records of the last ${report.days} days (${report.type}):`,
    ...(report.records.length ? report.records.map((r) => recordLine(r, at)) : ["no records"]),
  ].join("\n");
}

/** --days: a whole number of business days, at least 1. */
function daysOption(value: string | undefined): number {
  const days = numberOption("--days", value) ?? TRAFFIC_RECORD_DAYS;
  if (!Number.isInteger(days) || days < 1) die(`--days must be a whole number of days, at least 1: ${value}`);
  return days;
}

export function registerTrafficCommands(program: Command) {
  const traffic = program.command("traffic").description("customer traffic balances and records");

  traffic
    .command("show")
    .description("a user's permanent traffic, time package and traffic records")
    .argument("<email>", "the user's e-mail")
    .option("--days <n>", `business days of records, today included (default ${TRAFFIC_RECORD_DAYS})`)
    .option("--type <type>", "only records of this type (spend, buy, coupon, ...; default all)")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (email: string, options: TrafficShowOptions) => {
      const days = daysOption(options.days);
      const { type = "all" } = parseOrDie(trafficRecordsInput, { type: options.type }, { type: "--type" });
      const now = Date.now();
      const { report, at } = await withContext(options.data, async (ctx) => {
        const user = await findUserByEmail(ctx, email);
        if (!user) die(`no user with e-mail ${email}`);
        const report: TrafficReport = {
          balance: await trafficBalance(ctx, user),
          days,
          type,
          records: await listTrafficRecords(ctx, user.id, { type, days, now }),
        };
        return { report, at: await timePrinter(ctx) };
      });
      printJsonOr(options.json ?? false, report, (value) => reportText(value, now, at));
    });
}
