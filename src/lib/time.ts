export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** One Intl.DateTimeFormat per use and timezone: making one costs far more than formatting with it. */
function zoneFormat(use: string, timeZone: string, locale: string, options: Intl.DateTimeFormatOptions) {
  const key = `${use}|${timeZone}`;
  let format = zoneFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, { timeZone, ...options });
    zoneFormats.set(key, format);
  }
  return format;
}

/** Per timezone, the last business day computed and the instants it spans (first and last ms). */
const daySpans = new Map<string, { day: string; first: number; last: number }>();

/**
 * The business day (YYYY-MM-DD) of an instant in the given IANA timezone (setting `timezone`).
 * Formatting is the slow part, so the span of the last day computed is kept: every request of a
 * day asks for the same day.
 */
export function businessDay(now: number, timeZone: string): string {
  const span = daySpans.get(timeZone);
  if (span && now >= span.first && now <= span.last) return span.day;
  const day = zoneFormat("day", timeZone, "en-CA", {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(now);
  daySpans.set(timeZone, {
    day,
    first: endOfBusinessDay(addDays(day, -1), timeZone) + 1,
    last: endOfBusinessDay(day, timeZone),
  });
  return day;
}

/** "2025-03-01 08:00" in the business timezone (setting `timezone`): what the bot and the CLI print. */
export function businessDateTime(instant: number, timeZone: string): string {
  const format = zoneFormat("minute", timeZone, "en-CA", {
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  });
  const part = (type: string) => format.formatToParts(instant).find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")}`;
}

/** How far the timezone's wall clock is ahead of UTC at an instant (ms; +8 h for Asia/Shanghai). */
function zoneOffsetMs(instant: number, timeZone: string): number {
  const format = zoneFormat("offset", timeZone, "en-US", {
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  const part = (type: string) => Number(format.formatToParts(instant).find((p) => p.type === type)?.value);
  const wall = Date.UTC(
    part("year"),
    part("month") - 1,
    part("day"),
    part("hour"),
    part("minute"),
    part("second"),
  );
  return wall - (instant - (((instant % 1000) + 1000) % 1000));
}

const twoDigits = (n: number) => String(n).padStart(2, "0");

/** A UTC offset as ISO 8601 writes it: "+08:00", "-05:00", "+05:30". */
function offsetText(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  return `${offsetMs < 0 ? "-" : "+"}${twoDigits(Math.floor(minutes / 60))}:${twoDigits(minutes % 60)}`;
}

/**
 * "2026-11-27 20:15:03 +08:00": an instant on the wall clock of the business timezone (setting
 * `timezone`) with its offset, so that it reads the same as the web and cannot be mistaken for UTC.
 * Every time the CLI prints goes through here.
 */
export function formatInstant(instant: number, timeZone: string): string {
  const offset = zoneOffsetMs(instant, timeZone);
  const wall = new Date(instant + offset).toISOString();
  return `${wall.slice(0, 10)} ${wall.slice(11, 19)} ${offsetText(offset)}`;
}

/** The last millisecond of a business day (YYYY-MM-DD) in the given timezone. */
export function endOfBusinessDay(day: string, timeZone: string): number {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  const nextMidnightWall = Date.UTC(year, month - 1, date + 1);
  // Two passes settle the offset across a daylight-saving change.
  const guess = nextMidnightWall - zoneOffsetMs(nextMidnightWall, timeZone);
  return nextMidnightWall - zoneOffsetMs(guess, timeZone) - 1;
}

/** The business day `days` days after (negative: before) a YYYY-MM-DD day. */
export function addDays(day: string, days: number): string {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date + days)).toISOString().slice(0, 10);
}
