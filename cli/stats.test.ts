/**
 * `ferry stats` as a real process against a running server's data directory: the same rows as
 * basic_stastic, as a table or as JSON, and one-line errors for a bad --days.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { addDays, businessDay } from "../src/lib/time.ts";
import { GB } from "../src/lib/traffic.ts";
import { createOrder } from "../src/modules/order/service.ts";
import { signUse } from "../src/modules/signuse/service.ts";
import { BASIC_STASTIC_CALL, type BasicStastic } from "../src/modules/stats/schema.ts";
import { settleWithoutGateway } from "../src/payments/credit.ts";
import { makeCombo, startShopServer } from "../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { noonZone } from "../tests/traffic.ts";
import { expectHelp, expectRefused, type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli(startShopServer)));
afterAll(() => server?.close());

test("stats has --help", async () => {
  await expectHelp([[["stats"], ["--days", "--data", "--json"]]]);
});

test("prints the days of basic_stastic, newest first, with the totals", async () => {
  const ctx = server.context;
  // About noon in the zone the CLI reads: today cannot turn over between the rows and the reads.
  await ctx.settings.update({ timezone: noonZone() });
  const now = Date.now();
  const { user } = await loggedInClient(server);
  const combo = await makeCombo(server, { name: "100G", price: 12.5, traffic: 100 * GB });
  await settleWithoutGateway(ctx, (await createOrder(ctx, user, combo._id, now))._id, "manual", "test", now);
  await ctx.settings.update({ signUseRewardTraffic: 0 });
  await signUse(ctx, user.id, now);
  const today = businessDay(Date.now(), await ctx.settings.get("timezone"));

  const json = await cli.json<BasicStastic>(["stats", "--days", "2"]);
  expect(json.stastic_list.map((row) => [row.day, row.payNum, row.income, row.signUseNum])).toEqual([
    [today, 1, 12.5, 1],
    [addDays(today, -1), 0, 0, 0],
  ]);
  expect(json.totalRemainingTraffic).toBe(Math.round((100 / 1024) * 100) / 100);
  const { client: admin } = await loggedInClient(server, { role: "admin" });
  expect(json).toEqual((await admin.call<BasicStastic>(BASIC_STASTIC_CALL, { num: 2 })).data);

  const lines = (await cli.ok(["stats"])).trimEnd().split("\n");
  expect(lines).toHaveLength(9); // header, 7 days, totals
  expect(lines[0]).toMatch(/^day\s+check-ins\s+paid\s+income ¥/);
  expect(lines[1]).toMatch(new RegExp(`^${today}\\s+1\\s+1\\s+12\\.50\\s`));
  expect(lines[8]).toBe("permanent traffic left 0.1 T  running time packages 0");
});

test("a bad --days is refused with a one-line error", async () => {
  await expectRefused([
    [["stats", "--days", "0", "--data", server.dataDir], /--days/],
    [["stats", "--days", "91", "--data", server.dataDir], /--days/],
    [["stats", "--days", "x", "--data", server.dataDir], /--days/],
  ]);
});
