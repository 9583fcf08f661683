/**
 * Daily check-in over real HTTP (seed 000 §3, §5, §7, §8; issue 14 §1): paid customers only, once
 * per business day, the reward and the streak bonus as permanent traffic with `sign_use` records,
 * the userinfo flags from the data, exactly one credit under 20 simultaneous requests, and the
 * bot's /checkin. Days other than today are simulated by rows for earlier days or by the service's
 * `now`; the server's zone is one where it is about noon, so the wall clock's day cannot turn over
 * between a test's today() and the server's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  FAKE_BOT_TOKEN,
  FAST_BOT_TIMINGS,
  type FakeChat,
  type FakeTelegram,
  startFakeTelegram,
} from "../../../tests/fakes/telegram.ts";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { noonZone } from "../../../tests/traffic.ts";
import { addDays, businessDay, DAY_MS } from "../../lib/time.ts";
import { MB } from "../../lib/traffic.ts";
import { Code } from "../../rpc/codes.ts";
import type { BindInfo } from "../telegram/schema.ts";
import type { UserInfo } from "../user/schema.ts";
import {
  SIGN_USE_CALL,
  SIGN_USE_INFO_CALL,
  type SignUseInfo,
  SignUseMsg,
  type SignUseResult,
  signUseSuccessText,
} from "./schema.ts";
import { signUse } from "./service.ts";

let server: TestServer;
let fake: FakeTelegram;

beforeAll(async () => {
  fake = startFakeTelegram();
  server = await startTestServer({ telegram: FAST_BOT_TIMINGS });
  // The zone is one where it is about noon: today() and the server's own today cannot differ mid-test.
  await server.context.settings.update({
    telegram_api_base: fake.url,
    telegram_bot_token: FAKE_BOT_TOKEN,
    timezone: noonZone(),
  });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const db = () => server.context.db;
const timeZone = async () => await server.context.settings.get("timezone");
const today = async () => businessDay(Date.now(), await timeZone());

async function customer(options: { paid?: boolean } = {}) {
  const account = await loggedInClient(server);
  if (options.paid !== false) await db().run("UPDATE users SET paid_user = 1 WHERE id = ?", account.user.id);
  return account;
}

const trafficOf = async (userId: string) =>
  (
    (await db().get<{ traffic: number }>("SELECT traffic FROM balances WHERE user_id = ?", userId)) as {
      traffic: number;
    }
  ).traffic;

const signUseRecords = async (userId: string) =>
  await db().all<{ traffic_change: number; desc: string }>(
    "SELECT traffic_change, \"desc\" FROM traffic_records WHERE user_id = ? AND type = 'sign_use' ORDER BY id",
    userId,
  );

/** balances.traffic equals the sum of the account's traffic records (the ledger invariant). */
async function expectLedgerBalanced(userId: string) {
  const sum = (await db().get<{ total: number }>(
    "SELECT COALESCE(SUM(traffic_change), 0) AS total FROM traffic_records WHERE user_id = ?",
    userId,
  )) as { total: number };
  expect(await trafficOf(userId)).toBe(sum.total);
}

async function insertSignUse(userId: string, day: string, streak: number, extraReward = false) {
  await db().run(
    "INSERT INTO sign_uses (user_id, day, streak, add_traffic, extra_reward, create_time) VALUES (?, ?, ?, 0, ?, 0)",
    userId,
    day,
    streak,
    extraReward ? 1 : 0,
  );
}

async function flagsOf(client: ApiClient) {
  const answer = await client.call<UserInfo>("/api/user/userinfo");
  expect(answer.code).toBe(Code.ok);
  return {
    signUseToday: answer.data.signUseToday,
    haveContinueSignUseData: answer.data.haveContinueSignUseData,
  };
}

describe("who may check in", () => {
  test("a visitor is asked to log in by both calls", async () => {
    const visitor = new ApiClient(server.url);
    for (const path of [SIGN_USE_CALL, SIGN_USE_INFO_CALL]) {
      const answer = await visitor.call(path);
      expect(answer.code).toBe(Code.notLoggedIn);
      expect(answer.data).toBeNull();
    }
  });

  test("a customer who never paid is refused the check-in with the unpaid message and gains nothing", async () => {
    const { client, user } = await customer({ paid: false });
    expect(await client.call(SIGN_USE_CALL)).toEqual({
      code: Code.forbidden,
      data: null,
      msg: SignUseMsg.notPaid,
    });
    expect(SignUseMsg.notPaid).toBe("付费用户才能领取每日福利");
    expect(await trafficOf(user.id)).toBe(0);
    expect(await signUseRecords(user.id)).toEqual([]);
    expect(await flagsOf(client)).toEqual({ signUseToday: false, haveContinueSignUseData: false });
  });

  test("sign_use_info answers a customer who never paid too, as it answers a new paid one", async () => {
    const unpaid = (await customer({ paid: false })).client;
    const paid = (await customer()).client;
    const answer = await unpaid.call<SignUseInfo>(SIGN_USE_INFO_CALL);
    expect(answer.code).toBe(Code.ok);
    expect(answer).toEqual(await paid.call<SignUseInfo>(SIGN_USE_INFO_CALL));
    expect(answer.data).toMatchObject({ signUseRewardTraffic: 200, continueDays: 0, today: await today() });
  });
});

describe(SIGN_USE_CALL, () => {
  test("a paid customer's first check-in adds signUseRewardTraffic MB of permanent traffic with a sign_use record", async () => {
    const { client, user } = await customer();
    expect(await flagsOf(client)).toEqual({ signUseToday: false, haveContinueSignUseData: false });
    const answer = await client.call<SignUseResult>(SIGN_USE_CALL);
    expect(answer.code).toBe(Code.ok);
    expect(answer.data).toEqual({
      addTraffic: 200 * MB,
      haveContinueSignUseData: true,
      extraReward: false,
      extraTraffic: 0,
      continueDays: 1,
      day: await today(),
    });
    expect(await trafficOf(user.id)).toBe(200 * MB);
    expect(await signUseRecords(user.id)).toEqual([{ traffic_change: 200 * MB, desc: "每日签到" }]);
    await expectLedgerBalanced(user.id);
    expect(await flagsOf(client)).toEqual({ signUseToday: true, haveContinueSignUseData: true });
  });

  test("a second check-in the same day is refused with its message and changes nothing", async () => {
    const { client, user } = await customer();
    expect((await client.call(SIGN_USE_CALL)).code).toBe(Code.ok);
    const again = await client.call(SIGN_USE_CALL);
    expect(again).toEqual({ code: Code.tooManyRequests, data: null, msg: SignUseMsg.already });
    expect(SignUseMsg.already).toBe("今天已经签到过了");
    expect(await trafficOf(user.id)).toBe(200 * MB);
    expect(await signUseRecords(user.id)).toHaveLength(1);
    const rows = await db().get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM sign_uses WHERE user_id = ?",
      user.id,
    );
    expect(rows?.n).toBe(1);
  });

  test("a check-in another process committed first (today's row exists) is refused without a credit", async () => {
    const { client, user } = await customer();
    await insertSignUse(user.id, await today(), 1);
    expect(await client.call(SIGN_USE_CALL)).toEqual({
      code: Code.tooManyRequests,
      data: null,
      msg: SignUseMsg.already,
    });
    expect(await trafficOf(user.id)).toBe(0);
    expect(await signUseRecords(user.id)).toEqual([]);
  });

  test("yesterday's check-in continues the run: today's is day N + 1", async () => {
    const { client, user } = await customer();
    await insertSignUse(user.id, addDays(await today(), -1), 5);
    expect(await flagsOf(client)).toEqual({ signUseToday: false, haveContinueSignUseData: true });
    const answer = await client.call<SignUseResult>(SIGN_USE_CALL);
    expect(answer.data).toMatchObject({ continueDays: 6, extraReward: false, haveContinueSignUseData: true });
  });

  test("a missed day starts a new run at 1", async () => {
    const { client, user } = await customer();
    await insertSignUse(user.id, addDays(await today(), -2), 12);
    expect(await flagsOf(client)).toEqual({ signUseToday: false, haveContinueSignUseData: false });
    const answer = await client.call<SignUseResult>(SIGN_USE_CALL);
    expect(answer.data).toMatchObject({ continueDays: 1, addTraffic: 200 * MB });
  });

  test("day continueSignUseDay pays continueSignReward MB on top, as a second sign_use record, and closes the run", async () => {
    const { client, user } = await customer();
    await insertSignUse(user.id, addDays(await today(), -1), 29);
    const answer = await client.call<SignUseResult>(SIGN_USE_CALL);
    expect(answer.data).toEqual({
      addTraffic: (200 + 1024) * MB,
      haveContinueSignUseData: false,
      extraReward: true,
      extraTraffic: 1024 * MB,
      continueDays: 30,
      day: await today(),
    });
    expect(await signUseRecords(user.id)).toEqual([
      { traffic_change: 200 * MB, desc: "每日签到" },
      { traffic_change: 1024 * MB, desc: "连续签到 30 天奖励" },
    ]);
    expect(await trafficOf(user.id)).toBe(1224 * MB);
    await expectLedgerBalanced(user.id);
    const row = await db().get<{ streak: number; extra_reward: number; add_traffic: number }>(
      "SELECT streak, extra_reward, add_traffic FROM sign_uses WHERE user_id = ? AND day = ?",
      user.id,
      await today(),
    );
    expect(row).toEqual({ streak: 30, extra_reward: 1, add_traffic: 1224 * MB });
    expect(await flagsOf(client)).toEqual({ signUseToday: true, haveContinueSignUseData: false });
  });

  test("the day after a bonus starts a new run at 1; nothing is left to continue", async () => {
    const { client, user } = await customer();
    await insertSignUse(user.id, addDays(await today(), -1), 30, true);
    expect(await flagsOf(client)).toEqual({ signUseToday: false, haveContinueSignUseData: false });
    const answer = await client.call<SignUseResult>(SIGN_USE_CALL);
    expect(answer.data).toMatchObject({ continueDays: 1, extraReward: false, addTraffic: 200 * MB });
  });

  test("the rewards follow the settings as they are now", async () => {
    const { client, user } = await customer();
    await server.context.settings.update({
      signUseRewardTraffic: 50,
      continueSignUseDay: 2,
      continueSignReward: 300,
    });
    try {
      await insertSignUse(user.id, addDays(await today(), -1), 1);
      const answer = await client.call<SignUseResult>(SIGN_USE_CALL);
      expect(answer.data).toMatchObject({ addTraffic: 350 * MB, extraTraffic: 300 * MB, extraReward: true });
      expect(signUseSuccessText(answer.data)).toBe(
        "签到成功，获得 350 MB 流量（含连续签到 2 天奖励 300 MB），已连续签到 2 天，明天起重新计算",
      );
    } finally {
      await server.context.settings.update({
        signUseRewardTraffic: 200,
        continueSignUseDay: 30,
        continueSignReward: 1024,
      });
    }
  });

  test("20 simultaneous check-ins of one account credit once; the others hear 'already', never a 500", async () => {
    const { client, user } = await customer();
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.call(SIGN_USE_CALL)));
    expect(answers.filter((a) => a.code === Code.ok)).toHaveLength(1);
    const refused = answers.filter((a) => a.code !== Code.ok);
    expect(refused).toHaveLength(19);
    for (const answer of refused)
      expect(answer).toEqual({ code: Code.tooManyRequests, data: null, msg: SignUseMsg.already });
    expect(await trafficOf(user.id)).toBe(200 * MB);
    expect(await signUseRecords(user.id)).toHaveLength(1);
    await expectLedgerBalanced(user.id);
  });
});

describe("a run over simulated days (the service's clock)", () => {
  test("consecutive days count up, the bonus day restarts the run, a gap resets it; the ledger matches", async () => {
    const { user } = await customer();
    await server.context.settings.update({ continueSignUseDay: 3 });
    try {
      const start = Date.UTC(2031, 0, 10, 4);
      const on = async (day: number) => await signUse(server.context, user.id, start + day * DAY_MS);
      expect(await on(0)).toMatchObject({ continueDays: 1, extraReward: false });
      expect(await on(1)).toMatchObject({ continueDays: 2, extraReward: false });
      expect(await on(2)).toMatchObject({ continueDays: 3, extraReward: true, extraTraffic: 1024 * MB });
      expect(await on(3)).toMatchObject({ continueDays: 1, extraReward: false });
      expect(await on(5)).toMatchObject({
        continueDays: 1,
        extraReward: false,
        haveContinueSignUseData: true,
      });
      await expect(on(5)).rejects.toThrow(SignUseMsg.already);
      expect(await trafficOf(user.id)).toBe((5 * 200 + 1024) * MB);
      await expectLedgerBalanced(user.id);
    } finally {
      await server.context.settings.update({ continueSignUseDay: 30 });
    }
  });

  test("the business day follows the timezone setting: 23:30 and 00:30 Shanghai time are two days", async () => {
    const { user } = await customer();
    const zone = await timeZone();
    await server.context.settings.update({ timezone: "Asia/Shanghai" });
    try {
      const lateEvening = Date.UTC(2031, 5, 1, 15, 30); // 23:30 in Asia/Shanghai
      expect((await signUse(server.context, user.id, lateEvening)).day).toBe("2031-06-01");
      expect(await signUse(server.context, user.id, lateEvening + 3_600_000)).toMatchObject({
        day: "2031-06-02",
        continueDays: 2,
      });
    } finally {
      await server.context.settings.update({ timezone: zone });
    }
  });
});

describe(SIGN_USE_INFO_CALL, () => {
  test("gives the reward settings in MB, today's business day and the run so far", async () => {
    const { client, user } = await customer();
    const before = await client.call<SignUseInfo>(SIGN_USE_INFO_CALL);
    expect(before).toEqual({
      code: Code.ok,
      msg: expect.any(String),
      data: {
        continueSignUseDay: 30,
        signUseRewardTraffic: 200,
        continueSignReward: 1024,
        continueDays: 0,
        today: await today(),
      },
    });
    await insertSignUse(user.id, addDays(await today(), -1), 7);
    expect((await client.call<SignUseInfo>(SIGN_USE_INFO_CALL)).data.continueDays).toBe(7);
    await client.call(SIGN_USE_CALL);
    expect((await client.call<SignUseInfo>(SIGN_USE_INFO_CALL)).data.continueDays).toBe(8);
  });
});

describe("the bot's /checkin", () => {
  async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
      await Bun.sleep(25);
    }
  }

  let chatCounter = 8_100_000;
  async function ask(chat: FakeChat, text: string): Promise<string> {
    const before = fake.messagesTo(chat.id).length;
    fake.userSays(chat, text);
    return until(`an answer to ${text}`, () => fake.messagesTo(chat.id)[before]?.text);
  }

  async function boundChat(client: ApiClient): Promise<FakeChat> {
    chatCounter += 1;
    const chat = { id: chatCounter, first_name: "客户", username: `u${chatCounter}` };
    await until("the bot's name", () => fake.calls.some((call) => call.method === "getMe") || undefined);
    const info = await client.call<BindInfo>("/api/user/bind_info");
    expect(await ask(chat, info.data.command)).toContain("绑定成功");
    return chat;
  }

  test("checks a paid customer in with the same outcome as the dashboard, once a day", async () => {
    const { client, user } = await customer();
    const chat = await boundChat(client);
    expect(await ask(chat, "/help")).toContain("/checkin — 每日签到");
    expect(await ask(chat, "/checkin")).toBe("签到成功，获得 200 MB 流量，已连续签到 1 天");
    expect(await ask(chat, "/checkin")).toBe(SignUseMsg.already);
    expect(await trafficOf(user.id)).toBe(200 * MB);
    expect(await signUseRecords(user.id)).toHaveLength(1);
    expect(await flagsOf(client)).toEqual({ signUseToday: true, haveContinueSignUseData: true });
    // The dashboard agrees: the account has checked in today.
    expect((await client.call(SIGN_USE_CALL)).msg).toBe(SignUseMsg.already);
  });

  test("an unpaid customer hears the unpaid message and gains nothing", async () => {
    const { client, user } = await customer({ paid: false });
    const chat = await boundChat(client);
    expect(await ask(chat, "/checkin")).toBe(SignUseMsg.notPaid);
    expect(await trafficOf(user.id)).toBe(0);
  });
});
