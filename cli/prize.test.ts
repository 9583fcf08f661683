/**
 * `ferry prize list` as a real process against a running server's data directory: the prizes the
 * back office saved, with the same statistics the prize manager shows (seed 001 §2.15).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Prize, PrizeList } from "../src/modules/prize/schema.ts";
import { loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

test("prize list has --help", async () => {
  await expectHelp([
    [["prize"], ["list"]],
    [
      ["prize", "list"],
      ["--data", "--json"],
    ],
  ]);
});

test("lists the prizes the back office saved, with total weight, Σ traffic × weight and win rate", async () => {
  expect(await cli.ok(["prize", "list"])).toBe(
    "no prizes\ntotal weight 0  traffic × weight 0 G  expected per draw 0.00 G  win rate 0.00%\n",
  );

  const { client } = await loggedInClient(server, { role: "yunying" });
  const save = async (fields: Record<string, unknown>) =>
    (await client.call<Prize>("/api/yunying/prize/update", fields)).data;
  const big = await save({ name: "一等奖", gainTraffic: 10, gainVipTime: 0, weight: 1 });
  const small = await save({
    name: "二等奖",
    gainTraffic: 2,
    gainVipTime: 3,
    weight: 3,
    hasDiscountCoupon: true,
    discountValue: 0.8,
    discountDuration: 5,
  });
  const blank = await save({ name: "谢谢参与", gainTraffic: 0, gainVipTime: 0, weight: 4 });

  expect(await cli.ok(["prize", "list"])).toBe(
    [
      `${big._id}  一等奖  10 G  -  weight 1`,
      `${small._id}  二等奖  2 G  3 days  coupon ×0.8 for 5 days  weight 3`,
      `${blank._id}  谢谢参与  -  -  weight 4`,
      // 16 G over weight 8: 2 G a draw; half the weight gives something.
      "total weight 8  traffic × weight 16 G  expected per draw 2.00 G  win rate 50.00%",
      "",
    ].join("\n"),
  );
  const json = await cli.json<PrizeList>(["prize", "list"]);
  const fromApi = await client.call<PrizeList>("/api/yunying/prize/list");
  expect(json).toEqual(fromApi.data);
});
