import { expect, test } from "bun:test";
import { businessDay, DAY_MS, endOfBusinessDay, formatInstant, HOUR_MS } from "./time.ts";

const direct = (instant: number, timeZone: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    instant,
  );

test("businessDay answers as a fresh formatter does, however instants jump between days and zones", () => {
  const zones = ["Asia/Shanghai", "America/New_York", "Europe/London", "UTC"];
  // Around New York's and London's daylight-saving changes of 2026, and a leap day.
  const anchors = [Date.UTC(2026, 2, 8, 6), Date.UTC(2026, 9, 25, 1), Date.UTC(2028, 1, 29, 16)];
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 5000; i++) {
    const zone = zones[Math.floor(random() * zones.length)] as string;
    const anchor = anchors[Math.floor(random() * anchors.length)] as number;
    const instant = anchor + Math.round((random() - 0.5) * 4 * DAY_MS);
    expect({ zone, instant, day: businessDay(instant, zone) }).toEqual({
      zone,
      instant,
      day: direct(instant, zone),
    });
  }
});

test("the last millisecond of a day and the first of the next are told apart", () => {
  for (const zone of ["Asia/Shanghai", "America/New_York"]) {
    const last = endOfBusinessDay("2026-03-08", zone);
    expect(businessDay(last, zone)).toBe("2026-03-08");
    expect(businessDay(last + 1, zone)).toBe("2026-03-09");
    expect(businessDay(last, zone)).toBe("2026-03-08");
    // 8 March 2026 has 23 hours in New York (clocks go forward).
    expect(businessDay(last - 22 * HOUR_MS, zone)).toBe("2026-03-08");
    expect(businessDay(endOfBusinessDay("2026-03-07", zone), zone)).toBe("2026-03-07");
  }
});

test("formatInstant: the wall clock of the zone with its offset, on both sides of a daylight-saving change", () => {
  const instant = Date.UTC(2026, 10, 27, 12, 15, 3, 999);
  expect(formatInstant(instant, "Asia/Shanghai")).toBe("2026-11-27 20:15:03 +08:00");
  expect(formatInstant(instant, "UTC")).toBe("2026-11-27 12:15:03 +00:00");
  expect(formatInstant(instant, "Asia/Kolkata")).toBe("2026-11-27 17:45:03 +05:30");
  expect(formatInstant(instant, "America/New_York")).toBe("2026-11-27 07:15:03 -05:00");
  // New York moves its clocks forward at 02:00 on 8 March 2026 (07:00 UTC).
  expect(formatInstant(Date.UTC(2026, 2, 8, 6, 59, 59), "America/New_York")).toBe(
    "2026-03-08 01:59:59 -05:00",
  );
  expect(formatInstant(Date.UTC(2026, 2, 8, 7), "America/New_York")).toBe("2026-03-08 03:00:00 -04:00");
  // The day changes with the zone: 23:30 UTC is the next morning in Shanghai.
  expect(formatInstant(Date.UTC(2026, 11, 31, 23, 30), "Asia/Shanghai")).toBe("2027-01-01 07:30:00 +08:00");
});
