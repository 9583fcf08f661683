import dayjs from "dayjs";

/** Date/time as the seed shows it: YYYY-MM-DD HH:mm:ss (milliseconds since epoch in). */
export function formatDateTime(ms: number): string {
  return dayjs(ms).format("YYYY-MM-DD HH:mm:ss");
}

/** The date-only variant: YYYY-MM-DD. */
export function formatDate(ms: number): string {
  return dayjs(ms).format("YYYY-MM-DD");
}

export { DAY_MS } from "../../src/lib/time.ts";
