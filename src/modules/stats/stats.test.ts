/**
 * basic_stastic (seed 001 §2.10, §7; issue 16 §2) over a real server and database: a week of
 * purchases, check-ins, draws and node charging placed on chosen instants in Asia/Shanghai —
 * including 23:59:59.999 and 00:00 of the same night, which land on different rows — checked
 * against figures computed by hand.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeCombo, makeCoupon, startShopServer } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, startWithAdmin, type TestServer } from "../../../tests/harness.ts";
import { chargeNode, makeChargingNode, startOfBusinessDay } from "../../../tests/traffic.ts";
import { addDays, businessDay, HOUR_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { settleWithoutGateway } from "../../payments/credit.ts";
import { useOrderCoupon as applyOrderCoupon, createOrder } from "../order/service.ts";
import { prizeInput } from "../prize/schema.ts";
import { drawPrize, savePrize } from "../prize/service.ts";
import { signUse } from "../signuse/service.ts";
import type { UserRow } from "../user/row.ts";
import { BASIC_STASTIC_CALL, type BasicStastic, type StasticDay } from "./schema.ts";

const ZONE = "Asia/Shanghai";
let server: TestServer;
let admin: ApiClient;

beforeAll(async () => ({ server, admin } = await startWithAdmin(startShopServer)));
afterAll(() => server?.close());

const zeroDay = (day: string): StasticDay => ({
  day,
  signUseNum: 0,
  payNum: 0,
  income: 0,
  normalUserNum: 0,
  normalTraffic: 0,
  normalAvg: 0,
  dayUserNum: 0,
  dayTrafficUse: 0,
  dayAvg: 0,
  lotterySpendNum: 0,
  lotterySpendTraffic: 0,
  lotteryRewardNum: 0,
  lotteryRewardTraffic: 0,
  activeUserNum: 0,
});

async function stats(num?: number) {
  return admin.call<BasicStastic>(BASIC_STASTIC_CALL, num === undefined ? {} : { num });
}

describe("basic_stastic", () => {
  test("an empty shop: seven zero rows, newest first, ending today", async () => {
    const answer = await stats();
    expect(answer.code).toBe(0);
    const today = businessDay(Date.now(), await server.context.settings.get("timezone"));
    expect(answer.data.stastic_list).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => zeroDay(addDays(today, -i))));
    expect(answer.data).toMatchObject({ totalRemainingTraffic: 0, activeVipCount: 0 });
  });

  test("a week of purchases, check-ins, draws and charging, across midnight in Asia/Shanghai", async () => {
    const ctx = server.context;
    const agentId = await makeChargingNode(server, ZONE);
    await ctx.settings.update({ signUseRewardTraffic: 1024, continueSignReward: 0, prizeBaseCost: 1 });
    const today = businessDay(Date.now(), ZONE);
    const D = addDays(today, -2);
    const prevNoon = startOfBusinessDay(addDays(D, -1), ZONE) + 12 * HOUR_MS;
    const midnight = startOfBusinessDay(D, ZONE);
    const before = midnight - 1; // 23:59:59.999 of D-1
    const after = midnight; // 00:00:00.000 of D
    const noon = midnight + 12 * HOUR_MS;

    const traffic100 = await makeCombo(server, { name: "100G", price: 15, traffic: 100 * GB });
    const month = await makeCombo(server, { name: "月卡", price: 30, vipDuration: 30 });
    await makeCoupon(
      server,
      { type: "cash", code: "CASH5", forMoney: 5, NumberOfAuthorizations: 5 },
      prevNoon,
    );
    const [a, b, c] = (await Promise.all([1, 2, 3].map(async () => (await loggedInClient(server)).user))) as [
      UserRow,
      UserRow,
      UserRow,
    ];
    const buy = async (user: UserRow, comboId: string, at: number, coupon?: string) => {
      const order = await createOrder(ctx, user, comboId, at - 1000);
      if (coupon) await applyOrderCoupon(ctx, user.id, order._id, coupon, "127.0.0.1", at - 500);
      await settleWithoutGateway(ctx, order._id, "manual", "test", at);
    };
    const uid = async (user: UserRow) =>
      (
        (await ctx.db.get<{ node_uid: number }>("SELECT node_uid FROM users WHERE id = ?", user.id)) as {
          node_uid: number;
        }
      ).node_uid;
    const prize = await savePrize(
      ctx,
      "admin",
      prizeInput.parse({ name: "2G", gainTraffic: 2, gainVipTime: 0, weight: 1 }),
    );

    // D-1
    await buy(a, traffic100._id, prevNoon);
    await buy(b, month._id, prevNoon);
    await buy(c, traffic100._id, before, "CASH5"); // ¥15 − ¥5 coupon
    await signUse(ctx, a.id, before);
    await signUse(ctx, b.id, before);
    await chargeNode(server, agentId, { [await uid(a)]: [0, GB], [await uid(b)]: [0, 3 * GB] }, before);
    await drawPrize(ctx, a.id, before); // costs 1 G, pays 2 G
    // D
    await savePrize(
      ctx,
      "admin",
      prizeInput.parse({ _id: prize._id, name: "谢谢参与", gainTraffic: 0, gainVipTime: 0, weight: 1 }),
    );
    await buy(a, traffic100._id, after);
    await signUse(ctx, a.id, after);
    await signUse(ctx, c.id, after);
    await chargeNode(
      server,
      agentId,
      { [await uid(a)]: [0, 2 * GB], [await uid(c)]: [GB, 3 * GB], [await uid(b)]: [0, GB] },
      after,
    );
    await drawPrize(ctx, c.id, after);
    await signUse(ctx, b.id, noon);
    await chargeNode(server, agentId, { [await uid(c)]: [0, 2 * GB], [await uid(b)]: [0, GB / 2] }, noon);
    await drawPrize(ctx, a.id, noon);

    const answer = await stats();
    expect(answer.code).toBe(0);
    const rows = answer.data.stastic_list;
    expect(rows.map((row) => row.day)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => addDays(today, -i)));
    expect(rows[2]).toEqual({
      day: D,
      signUseNum: 3, // a and c at 00:00, b at noon
      payNum: 1,
      income: 15,
      normalUserNum: 2, // a 2 G; c 4 G + 2 G
      normalTraffic: 8,
      normalAvg: 4,
      dayUserNum: 1, // b 1 G + 0.5 G from the time package
      dayTrafficUse: 1.5,
      dayAvg: 1.5,
      lotterySpendNum: 2,
      lotterySpendTraffic: 2,
      lotteryRewardNum: 0,
      lotteryRewardTraffic: 0,
      activeUserNum: 3,
    });
    expect(rows[3]).toEqual({
      day: addDays(D, -1),
      signUseNum: 2,
      payNum: 3,
      income: 55, // 15 + 30 + (15 − 5)
      normalUserNum: 1,
      normalTraffic: 1,
      normalAvg: 1,
      dayUserNum: 1,
      dayTrafficUse: 3,
      dayAvg: 3,
      lotterySpendNum: 1,
      lotterySpendTraffic: 1,
      lotteryRewardNum: 1,
      lotteryRewardTraffic: 2,
      activeUserNum: 2,
    });
    for (const i of [0, 1, 4, 5, 6]) expect(rows[i]).toEqual(zeroDay(addDays(today, -i)));
    // a: 100 + 1 − 1 − 1 + 2 + 100 + 1 − 2 − 1 = 199 G; b: two check-ins 2 G; c: 100 + 1 − 1 − 4 − 2 = 94 G
    expect(answer.data.totalRemainingTraffic).toBe(Math.round((295 / 1024) * 100) / 100);
    expect(answer.data.activeVipCount).toBe(1);

    // num picks the window: 3 rows end at D, 90 reach back 89 days
    expect((await stats(3)).data.stastic_list.map((row) => row.day)).toEqual([today, addDays(today, -1), D]);
    const ninety = (await stats(90)).data.stastic_list;
    expect([ninety.length, ninety.at(-1)?.day]).toEqual([90, addDays(today, -89)]);
  });

  test("num outside 1–90 or not an integer is refused with 1000", async () => {
    for (const num of [0, 91, 1.5, -1, "7"]) {
      const answer = await admin.call(BASIC_STASTIC_CALL, { num });
      expect({ num, code: answer.code }).toEqual({ num, code: 1000 });
      expect(answer.msg).toContain("num");
    }
  });

  test("answered to an admin only: visitor 1002; normal, channel and yunying 1003", async () => {
    expect((await stats()).code).toBe(0);
    expect((await new ApiClient(server.url).call(BASIC_STASTIC_CALL, {})).code).toBe(1002);
    for (const role of ["normal", "channel", "yunying"] as const) {
      const { client } = await loggedInClient(server, { role });
      expect({ role, code: (await client.call(BASIC_STASTIC_CALL, {})).code }).toEqual({ role, code: 1003 });
    }
  });
});
