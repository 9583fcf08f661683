/**
 * `ferry audit [--since <date|duration>] [--who <actor>] [--json]` (issue 30): the audit trail,
 * newest first, as 操作日志 shows it. Reading it writes no row.
 */
import type { Command } from "commander";
import { addDays, endOfBusinessDay } from "../src/lib/time.ts";
import type { AuditRow } from "../src/modules/audit/schema.ts";
import { allAudit } from "../src/modules/audit/service.ts";
import {
  dataOption,
  die,
  type PrintTime,
  printJsonOr,
  textTable,
  timePrinter,
  withContext,
} from "./shared.ts";

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * `--since`: a duration back from now (`30m`, `24h`, `7d`, `2w`), a business day (`2026-11-01`, from
 * its start in the `timezone` setting) or any date-time `Date` reads (`2026-11-01T08:00:00Z`).
 */
export function parseSince(value: string, timeZone: string, now = Date.now()): number | null {
  const duration = /^(\d+)([mhdw])$/.exec(value.trim());
  if (duration) return now - Number(duration[1]) * (UNIT_MS[duration[2] as string] as number);
  if (/^\d{4}-\d{2}-\d{2}$/.test(value.trim()))
    return endOfBusinessDay(addDays(value.trim(), -1), timeZone) + 1;
  const instant = Date.parse(value);
  return Number.isNaN(instant) ? null : instant;
}

/** `--json`: time as ISO 8601 (UTC), the diff as an object. */
const auditJson = (row: AuditRow) => ({
  time: new Date(row.time).toISOString(),
  actor: row.actor,
  ip: row.ip,
  action: row.action,
  target: row.target,
  diff: row.diff,
});

function auditText(rows: AuditRow[], at: PrintTime): string {
  if (rows.length === 0) return "no audit rows";
  return textTable([
    ["time", "actor", "ip", "action", "target", "diff"],
    ...rows.map((row) => [
      at(row.time),
      row.actor,
      row.ip || "-",
      row.action,
      row.target || "-",
      JSON.stringify(row.diff),
    ]),
  ]);
}

export function registerAuditCommands(program: Command) {
  program
    .command("audit")
    .description(
      "the audit trail: who changed what, when and from where (admins, yunying, this CLI), newest first",
    )
    .option("--since <when>", "from this date (2026-11-01), date-time or duration back (30m, 24h, 7d, 2w)")
    .option("--who <actor>", "only this actor (part of an e-mail, or cli@<host>)")
    .addOption(dataOption())
    .option("--json", "print a JSON array of {time (ISO 8601), actor, ip, action, target, diff}")
    .action(async (options: { since?: string; who?: string; data?: string; json?: boolean }) => {
      await withContext(options.data, async (ctx) => {
        const timeZone = await ctx.settings.get("timezone");
        const since = options.since === undefined ? undefined : parseSince(options.since, timeZone);
        if (since === null)
          die(`--since takes a date (2026-11-01), a date-time or a duration (7d): ${options.since}`);
        const rows = await allAudit(ctx.db, { who: options.who, since });
        const at = await timePrinter(ctx);
        printJsonOr(options.json ?? false, rows.map(auditJson), () => auditText(rows, at));
      });
    });
}
