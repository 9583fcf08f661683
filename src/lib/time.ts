export const DAY_MS = 86_400_000;

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The business day (YYYY-MM-DD) of an instant in the given IANA timezone (setting `timezone`). */
export function businessDay(now: number, timeZone: string): string {
  let format = dayFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    });
    dayFormats.set(timeZone, format);
  }
  return format.format(now);
}
