/**
 * `/api/coupon/redeem_coupon` over HTTP (seed 000 §5, §7, §8; issue 14 §2): every code with its
 * message, who may call it, what each coupon type credits (traffic, trial traffic that expires,
 * days of time package) with its ledger row and usage record, that a refused redemption changes
 * nothing, and 30 customers redeeming a coupon of 5 uses at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeCoupon } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { trafficLedgerSum } from "../../../tests/traffic.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { DEFAULT_DAILY_LIMIT, GB } from "../../lib/traffic.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { RateLimiter } from "../../rpc/rate-limit.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { UserInfo } from "../user/schema.ts";
import { redeemCoupon } from "./redeem.ts";
import { type RedeemResult, redeemSuccessText } from "./schema.ts";

const REDEEM = "/api/coupon/redeem_coupon";
let server: TestServer;
let codeNo = 0;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A coupon with a code of its own; fields in the back office's wire names. */
async function coupon(fields: Record<string, unknown>) {
  codeNo += 1;
  return await makeCoupon(server, { code: `TRY${codeNo}X`, name: `体验券 ${codeNo}`, ...fields });
}

const redeem = (client: ApiClient, code: string) => client.call<RedeemResult>(REDEEM, { code });

/** What a redemption may change: balances, ledger rows, usage records and trial grants. */
async function footprint(userId: string) {
  const db = server.context.db;
  const count = async (sql: string) => ((await db.get(sql, userId)) as { n: number }).n;
  return {
    user: await db.get(
      "SELECT traffic, vip_expire_time, daily_limit FROM users JOIN balances ON user_id = id WHERE id = ?",
      userId,
    ),
    records: await count("SELECT COUNT(*) AS n FROM traffic_records WHERE user_id = ?"),
    uses: await count("SELECT COUNT(*) AS n FROM coupon_uses WHERE user_id = ?"),
    grants: await count("SELECT COUNT(*) AS n FROM trial_grants WHERE user_id = ?"),
  };
}

const ledgerSum = async (userId: string) => await trafficLedgerSum(server, userId);

const authTimes = async (code: string) =>
  (
    (await server.context.db.get("SELECT auth_times FROM coupons WHERE code = ?", code)) as {
      auth_times: number;
    }
  ).auth_times;

describe("refusals: every code, its message, and nothing applied", () => {
  test("a visitor gets 1002", async () => {
    const { code } = await coupon({ type: "freeUse", trafficG: 1 });
    const answer = await redeem(new ApiClient(server.url), code);
    expect(answer.code).toBe(Code.notLoggedIn);
    expect(await authTimes(code)).toBe(0);
  });

  test("an empty code (spaces only) is 1000", async () => {
    const { client } = await loggedInClient(server);
    const answer = await redeem(client, "   ");
    expect(answer.code).toBe(Code.badInput);
    expect(answer.msg).toContain("请输入激活码");
  });

  test("an unknown code is 1016 体验券不存在", async () => {
    const { client, user } = await loggedInClient(server);
    const before = await footprint(user.id);
    expect(await redeem(client, "NOSUCHCODE")).toMatchObject({ code: 1016, msg: "体验券不存在", data: null });
    expect(await footprint(user.id)).toEqual(before);
  });

  test("another customer's own coupon is 1016 like an unknown one; its owner redeems it", async () => {
    const owner = await loggedInClient(server);
    const other = await loggedInClient(server);
    const { code } = await coupon({ type: "freeUse", trafficG: 1, NumberOfAuthorizations: 2 });
    await server.context.db.run("UPDATE coupons SET owner_user_id = ? WHERE code = ?", owner.user.id, code);
    expect(await redeem(other.client, code)).toMatchObject({ code: 1016, msg: "体验券不存在" });
    expect((await footprint(other.user.id)).records).toBe(0);
    expect((await redeem(owner.client, code)).code).toBe(0);
  });

  test("an expired coupon is 1029 体验券过期", async () => {
    const { client, user } = await loggedInClient(server);
    const { code } = await coupon({ type: "freeUse", trafficG: 1, expireTime: "2020-01-31" });
    const before = await footprint(user.id);
    expect(await redeem(client, code)).toMatchObject({ code: 1029, msg: "体验券过期" });
    expect(await footprint(user.id)).toEqual(before);
    expect(await authTimes(code)).toBe(0);
  });

  test("cash and discount coupons are 1020, pointing to purchases", async () => {
    const { client, user } = await loggedInClient(server);
    const cash = await coupon({ type: "cash", forMoney: 5 });
    const discount = await coupon({ type: "discount", discount: 0.8 });
    const before = await footprint(user.id);
    for (const { code } of [cash, discount]) {
      const answer = await redeem(client, code);
      expect(answer).toMatchObject({ code: 1020, msg: "该券是现金券或折扣券，请在购买套餐时使用" });
      expect(await authTimes(code)).toBe(0);
    }
    expect(await footprint(user.id)).toEqual(before);
  });

  test("a second redemption by the same customer is 1017 该体验券已经兑换过; a per-user limit of 2 allows two", async () => {
    const { client, user } = await loggedInClient(server);
    const once = await coupon({ type: "freeUse", trafficG: 1, NumberOfAuthorizations: 10 });
    expect((await redeem(client, once.code)).code).toBe(0);
    const after = await footprint(user.id);
    expect(await redeem(client, once.code)).toMatchObject({ code: 1017, msg: "该体验券已经兑换过" });
    expect(await footprint(user.id)).toEqual(after);
    expect(await authTimes(once.code)).toBe(1);

    const twice = await coupon({
      type: "freeUse",
      trafficG: 1,
      useNumPerUser: 2,
      NumberOfAuthorizations: 10,
    });
    expect((await redeem(client, twice.code)).code).toBe(0);
    expect((await redeem(client, twice.code)).code).toBe(0);
    expect((await redeem(client, twice.code)).code).toBe(1017);
    expect(await authTimes(twice.code)).toBe(2);
  });

  test("a coupon whose total uses are spent is 1027 抱歉，该体验券已抢兑完毕", async () => {
    const first = await loggedInClient(server);
    const second = await loggedInClient(server);
    const { code } = await coupon({ type: "freeUse", trafficG: 1, NumberOfAuthorizations: 1 });
    expect((await redeem(first.client, code)).code).toBe(0);
    const before = await footprint(second.user.id);
    expect(await redeem(second.client, code)).toMatchObject({ code: 1027, msg: "抱歉，该体验券已抢兑完毕" });
    expect(await footprint(second.user.id)).toEqual(before);
    expect(await authTimes(code)).toBe(1);
  });
});

describe("what a redemption credits", () => {
  test("freeUse without a time limit: permanent traffic, a coupon ledger row, a usage record", async () => {
    const { client, user } = await loggedInClient(server);
    const made = await coupon({ type: "freeUse", name: "新人体验", trafficG: 2, code: "WELCOME2" });
    // The code is trimmed and, like every coupon code, not case-sensitive.
    const answer = await redeem(client, "  welcome2 ");
    expect(answer).toEqual({
      code: 0,
      msg: expect.any(String),
      data: { name: "新人体验", traffic: 2 * GB, day: 0, type: "freeUse" },
    });
    const db = server.context.db;
    expect(
      await db.all('SELECT type, "desc", traffic_change FROM traffic_records WHERE user_id = ?', user.id),
    ).toEqual([{ type: "coupon", desc: "兑换体验券 新人体验", traffic_change: 2 * GB }]);
    expect(
      await db.all(
        "SELECT coupon_id, code, type, add_traffic, add_day FROM coupon_uses WHERE user_id = ?",
        user.id,
      ),
    ).toEqual([{ coupon_id: made._id, code: "WELCOME2", type: "freeUse", add_traffic: 2 * GB, add_day: 0 }]);
    expect(await footprint(user.id)).toMatchObject({ user: { traffic: 2 * GB }, grants: 0 });
    const info = await client.call<UserInfo>("/api/user/userinfo");
    expect(info.data).toMatchObject({ traffic: 2 * GB, trialTraffic: 0, trialExpireTime: 0 });
  });

  test("freeUse with traffixHaveLimitTime: the traffic is trial traffic expiring traffixLimitTime hours later", async () => {
    const { client, user } = await loggedInClient(server);
    const { code } = await coupon({
      type: "freeUse",
      trafficG: 3,
      traffixHaveLimitTime: true,
      traffixLimitTime: 48,
    });
    const before = Date.now();
    expect((await redeem(client, code)).data).toMatchObject({ traffic: 3 * GB, day: 0 });
    const after = Date.now();
    const grant = await server.context.db.get<{
      amount: number;
      remaining: number;
      expire_time: number;
      coupon_use_id: string;
    }>("SELECT amount, remaining, expire_time, coupon_use_id FROM trial_grants WHERE user_id = ?", user.id);
    expect(grant).toMatchObject({ amount: 3 * GB, remaining: 3 * GB });
    expect(grant?.expire_time).toBeGreaterThanOrEqual(before + 48 * 3_600_000);
    expect(grant?.expire_time).toBeLessThanOrEqual(after + 48 * 3_600_000);
    const use = await server.context.db.get("SELECT id FROM coupon_uses WHERE user_id = ?", user.id);
    expect(use).toEqual({ id: grant?.coupon_use_id });
    const info = await client.call<UserInfo>("/api/user/userinfo");
    expect(info.data).toMatchObject({
      traffic: 3 * GB,
      trialTraffic: 3 * GB,
      trialExpireTime: grant?.expire_time,
    });
    expect(await ledgerSum(user.id)).toBe(3 * GB);
  });

  test("freeTime without a running package: vipDay days from now at the default daily quota", async () => {
    const { client, user } = await loggedInClient(server);
    const { code } = await coupon({ type: "freeTime", name: "三天体验", vipDay: 3 });
    const before = Date.now();
    expect((await redeem(client, code)).data).toEqual({
      name: "三天体验",
      traffic: 0,
      day: 3,
      type: "freeTime",
    });
    const after = Date.now();
    const row = (await footprint(user.id)).user as {
      traffic: number;
      vip_expire_time: number;
      daily_limit: number;
    };
    expect(row.traffic).toBe(0);
    expect(row.daily_limit).toBe(DEFAULT_DAILY_LIMIT);
    expect(row.vip_expire_time).toBeGreaterThanOrEqual(before + 3 * DAY_MS);
    expect(row.vip_expire_time).toBeLessThanOrEqual(after + 3 * DAY_MS);
    const record = (await server.context.db.get(
      "SELECT type, vip_change FROM traffic_records WHERE user_id = ?",
      user.id,
    )) as { type: string; vip_change: number };
    expect(record).toEqual({ type: "coupon", vip_change: row.vip_expire_time });
    expect(await server.context.db.get("SELECT add_day FROM coupon_uses WHERE user_id = ?", user.id)).toEqual(
      {
        add_day: 3,
      },
    );
  });

  test("freeTime on a running package extends it from its expiry and keeps its larger daily quota", async () => {
    const { client, user } = await loggedInClient(server);
    const db = server.context.db;
    const expiry = Date.now() + 10 * DAY_MS;
    await tx(
      db,
      async () =>
        await changeTraffic(db, {
          userId: user.id,
          type: "buy",
          desc: "测试套餐",
          vipExpireTime: expiry,
          dailyLimit: 80 * GB,
          now: Date.now(),
          timeZone: "Asia/Shanghai",
        }),
    );
    const { code } = await coupon({ type: "freeTime", vipDay: 2 });
    expect((await redeem(client, code)).code).toBe(0);
    expect((await footprint(user.id)).user).toEqual({
      traffic: 0,
      vip_expire_time: expiry + 2 * DAY_MS,
      daily_limit: 80 * GB,
    });
  });
});

test("30 customers redeeming a coupon of 5 uses at once: exactly 5 get it, the others 1027 and nothing", async () => {
  const { code } = await coupon({ type: "freeUse", trafficG: 1, NumberOfAuthorizations: 5 });
  const customers = await Promise.all(Array.from({ length: 30 }, () => loggedInClient(server)));
  const answers = await Promise.all(customers.map(({ client }) => redeem(client, code)));
  const codes = answers.map((answer) => answer.code);
  expect(codes.filter((c) => c === 0)).toHaveLength(5);
  expect(codes.filter((c) => c === 1027)).toHaveLength(25);
  expect(await authTimes(code)).toBe(5);
  const db = server.context.db;
  expect(await db.get("SELECT COUNT(*) AS n FROM coupon_uses WHERE code = ?", code)).toEqual({ n: 5 });
  for (const [i, { user }] of customers.entries()) {
    const won = answers[i]?.code === 0;
    expect(await footprint(user.id)).toMatchObject({
      user: { traffic: won ? GB : 0 },
      records: won ? 1 : 0,
      uses: won ? 1 : 0,
    });
    expect(await ledgerSum(user.id)).toBe(won ? GB : 0);
  }
});

test("guessing is slow: 10 tries a minute per account, 30 refused tries per address, then 1021 for any code", async () => {
  // The server under test multiplies limits by 1000; this context has the real ones.
  const ctx = { ...server.context, limiter: new RateLimiter(server.context.db, 1) };
  const { code } = await coupon({ type: "freeUse", trafficG: 1, NumberOfAuthorizations: 100 });
  const attempt = async (userId: string, tried: string, ip = "198.51.100.7") => {
    try {
      await redeemCoupon(ctx, userId, tried, ip);
      return 0;
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      return error.code === Code.couponTooManyTries ? `${error.code} ${error.message}` : error.code;
    }
  };
  for (let i = 0; i < 10; i += 1) expect(await attempt("guesser-a", `GUESS${i}`)).toBe(1016);
  expect(await attempt("guesser-a", code)).toBe("1021 请不要在此处作过多尝试");
  for (let i = 0; i < 10; i += 1) expect(await attempt("guesser-b", `GUESS${i}`)).toBe(1016);
  for (let i = 0; i < 10; i += 1) expect(await attempt("guesser-c", `GUESS${i}`)).toBe(1016);
  expect(await attempt("guesser-d", code)).toBe("1021 请不要在此处作过多尝试");
  expect(await authTimes(code)).toBe(0);
  expect(await attempt("guesser-d", "GUESS0", "198.51.100.8")).toBe(1016); // another address has its own budget
});

test("the success toast names what the voucher gave: whole GB of traffic, days of time package, or both", () => {
  const result = (traffic: number, day: number): RedeemResult => ({
    name: "体验",
    traffic,
    day,
    type: "freeUse",
  });
  expect(redeemSuccessText(result(5.9 * GB, 0))).toBe(
    "兑换成功：体验，获得 5 GB 流量，快去导入订阅开始使用吧",
  );
  expect(redeemSuccessText({ ...result(0, 3), type: "freeTime" })).toBe(
    "兑换成功：体验，获得 3 天时长套餐，快去导入订阅开始使用吧",
  );
  expect(redeemSuccessText({ ...result(GB, 1), name: "" })).toBe(
    "兑换成功：体验券，获得 1 GB 流量、1 天时长套餐，快去导入订阅开始使用吧",
  );
});
