/**
 * Trial traffic that expires (issue 14 §2) against real node reports: the charging order quota →
 * trial (soonest expiry first) → permanent, expiry at its boundaries (between two reports, after a
 * report crossed into permanent traffic, with nothing used, with everything used, clamped to what
 * the balance holds), the customer whose only traffic expired dropped from the node's list, the
 * balances userinfo / transfers / draws read, and the one "about to expire" notice and bot message.
 * Times are explicit instants from one start, in a zone where that start is near noon.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeCoupon } from "../../../tests/commerce.ts";
import { startTestServer, type TestServer } from "../../../tests/harness.ts";
import {
  applyPush,
  customerWithPackage,
  makeChargingNode,
  noonZone,
  pullUserListOf,
  trafficLedgerSum,
} from "../../../tests/traffic.ts";
import { tx } from "../../db/db.ts";
import { businessDateTime, businessDay } from "../../lib/time.ts";
import { GB, MB } from "../../lib/traffic.ts";
import { redeemCoupon } from "../coupon/redeem.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { UserRow } from "../user/row.ts";
import { expireDueTrials, permanentTraffic, trialBalance, warnExpiringTrials } from "./service.ts";
import { startTrialSweeper } from "./sweeper.ts";

const HOUR = 3_600_000;
const T0 = Date.now();
const ZONE = noonZone(T0);
let server: TestServer;
let agentId = "";
let codeNo = 0;

beforeAll(async () => {
  server = await startTestServer();
  agentId = await makeChargingNode(server, ZONE);
});
afterAll(async () => {
  await server?.close();
});

const db = () => server.context.db;

/** A customer with permanent traffic and, optionally, a time package bought through the ledger. */
async function customer(permanent: number, timePackage?: { dailyLimit: number }): Promise<UserRow> {
  return customerWithPackage(server, {
    traffic: permanent,
    vipExpireTime: timePackage ? T0 + 30 * 24 * HOUR : undefined,
    dailyLimit: timePackage?.dailyLimit,
    now: T0 - 60_000,
    timeZone: ZONE,
  });
}

/** Redeems a fresh trial voucher of `traffic` bytes lasting `hours` at `now`; returns its expiry. */
async function giveTrial(user: UserRow, traffic: number, hours: number, now = T0): Promise<number> {
  codeNo += 1;
  const { code } = await makeCoupon(server, {
    type: "freeUse",
    code: `TRIAL${codeNo}Q`,
    traffic,
    traffixHaveLimitTime: true,
    traffixLimitTime: hours,
  });
  await redeemCoupon(server.context, user.id, code, "127.0.0.1", now);
  return now + hours * HOUR;
}

const pull = async (now: number) => await pullUserListOf(server, agentId, now);

/** A node report charging `download` bytes to each user (scales are 1), without pulling the list first. */
async function push(usage: [UserRow, number][], now: number) {
  const body: Record<number, [number, number]> = Object.fromEntries(
    usage.map(([u, bytes]) => [u.node_uid, [0, bytes]]),
  );
  return await applyPush(server, agentId, body, now);
}

/** Pulls the list at `now` (as the node does before) and reports. */
const report = async (user: UserRow, download: number, now: number) => {
  await pull(now);
  return await push([[user, download]], now);
};

const balance = async (user: UserRow) =>
  await db().get<{ traffic: number; spend_traffic: number; daily_usage: number }>(
    "SELECT traffic, spend_traffic, daily_usage FROM balances WHERE user_id = ?",
    user.id,
  );

const grants = async (user: UserRow) =>
  await db().all<{ amount: number; remaining: number; expired_time: number | null }>(
    "SELECT amount, remaining, expired_time FROM trial_grants WHERE user_id = ? ORDER BY id",
    user.id,
  );

const records = async (user: UserRow, type: string) =>
  await db().all<{ traffic_change: number; exemption_traffic: number; desc: string; day: string }>(
    'SELECT traffic_change, exemption_traffic, "desc", day FROM traffic_records WHERE user_id = ? AND type = ? ORDER BY id',
    user.id,
    type,
  );

/** balances.traffic = Σ traffic_change, and the trial part never exceeds it. */
async function expectLedgerHolds(user: UserRow) {
  const sum = await trafficLedgerSum(server, user.id);
  const traffic = (await balance(user))?.traffic ?? -1;
  expect(sum).toBe(traffic);
  const trial = (await grants(user)).reduce((total, grant) => total + grant.remaining, 0);
  expect(trial).toBeLessThanOrEqual(traffic);
}

const listed = async (now: number) =>
  (JSON.parse((await pull(now)).body) as { users: { id: number }[] }).users.map((u) => u.id);

describe("charging order", () => {
  test("quota → trial → permanent exactly: each pays only when the one before it is used up", async () => {
    const user = await customer(GB, { dailyLimit: 100 * MB });
    await giveTrial(user, 50 * MB, 24);
    const now = T0 + 60_000;

    await report(user, 60 * MB, now); // quota only
    expect(await balance(user)).toMatchObject({ traffic: GB + 50 * MB, daily_usage: 60 * MB });
    expect((await grants(user))[0]?.remaining).toBe(50 * MB);

    await report(user, 70 * MB, now + 1); // 40 MB of quota, 30 MB of trial, no permanent
    expect(await balance(user)).toMatchObject({ traffic: GB + 20 * MB, daily_usage: 100 * MB });
    expect((await grants(user))[0]?.remaining).toBe(20 * MB);
    expect(await permanentTraffic(db(), user.id, now)).toBe(GB);

    await report(user, 100 * MB, now + 2); // 20 MB of trial, 80 MB of permanent
    expect(await balance(user)).toMatchObject({
      traffic: GB - 80 * MB,
      spend_traffic: 230 * MB,
      daily_usage: 100 * MB,
    });
    expect((await grants(user))[0]?.remaining).toBe(0);
    expect(await permanentTraffic(db(), user.id, now)).toBe(GB - 80 * MB);
    expect(await trialBalance(db(), user.id, now)).toEqual({ trialTraffic: 0, trialExpireTime: 0 });

    // The day's spend record: what left balances.traffic (trial and permanent) and what the quota covered.
    expect(await records(user, "spend")).toEqual([
      {
        traffic_change: -130 * MB,
        exemption_traffic: 100 * MB,
        desc: "节点流量",
        day: businessDay(now, ZONE),
      },
    ]);
    expect(
      await db().get("SELECT quota, permanent, overdraft FROM usage_days WHERE user_id = ?", user.id),
    ).toEqual({
      quota: 100 * MB,
      permanent: 130 * MB,
      overdraft: 0,
    });
    await expectLedgerHolds(user);
  });

  test("trial traffic is spent soonest expiry first, whatever the order it came in", async () => {
    const user = await customer(GB);
    await giveTrial(user, 100 * MB, 48);
    await giveTrial(user, 100 * MB, 1);
    await report(user, 150 * MB, T0 + 60_000);
    expect((await grants(user)).map((grant) => grant.remaining)).toEqual([50 * MB, 0]);
    expect((await balance(user))?.traffic).toBe(GB + 50 * MB);
    expect(await permanentTraffic(db(), user.id, T0)).toBe(GB);
    await expectLedgerHolds(user);
  });

  test("a charge larger than all trial and permanent traffic leaves both at 0 and the rest as overdraft", async () => {
    const user = await customer(10 * MB);
    await giveTrial(user, 20 * MB, 2);
    await report(user, 50 * MB, T0 + 60_000);
    expect((await balance(user))?.traffic).toBe(0);
    expect((await grants(user))[0]?.remaining).toBe(0);
    expect(await db().get("SELECT permanent, overdraft FROM usage_days WHERE user_id = ?", user.id)).toEqual({
      permanent: 30 * MB,
      overdraft: 20 * MB,
    });
    await expectLedgerHolds(user);
  });
});

describe("expiry", () => {
  test("between two node reports: the later one first removes what is left of the trial, then charges permanent", async () => {
    const user = await customer(GB);
    const expiry = await giveTrial(user, 100 * MB, 1);
    await report(user, 30 * MB, expiry - 1); // the last millisecond of the trial: it pays
    expect((await grants(user))[0]?.remaining).toBe(70 * MB);
    expect(await records(user, "tiyan_expire")).toEqual([]);

    await push([[user, 30 * MB]], expiry); // no pull in between: the report itself expires the grant
    expect(await records(user, "tiyan_expire")).toEqual([
      {
        traffic_change: -70 * MB,
        exemption_traffic: 0,
        desc: "体验流量到期",
        day: businessDay(expiry, ZONE),
      },
    ]);
    expect(await grants(user)).toEqual([{ amount: 100 * MB, remaining: 0, expired_time: expiry }]);
    expect((await balance(user))?.traffic).toBe(GB - 30 * MB);
    expect((await records(user, "spend"))[0]?.traffic_change).toBe(-60 * MB);
    await expectLedgerHolds(user);
  });

  test("a report crossing from trial into permanent, then the expiry: everything was used, no record", async () => {
    const user = await customer(GB);
    const expiry = await giveTrial(user, 50 * MB, 1);
    await report(user, 80 * MB, T0 + 60_000);
    expect((await grants(user))[0]?.remaining).toBe(0);
    expect((await balance(user))?.traffic).toBe(GB - 30 * MB);
    await expireDueTrials(server.context, expiry);
    await push([[user, MB]], expiry + 1);
    expect(await records(user, "tiyan_expire")).toEqual([]);
    expect((await balance(user))?.traffic).toBe(GB - 31 * MB);
    await expectLedgerHolds(user);
  });

  test("with nothing used: all of it goes with one tiyan_expire record; permanent traffic stays", async () => {
    const user = await customer(2 * GB);
    const expiry = await giveTrial(user, GB, 3);
    await expireDueTrials(server.context, expiry - 1);
    expect((await balance(user))?.traffic).toBe(3 * GB);
    await expireDueTrials(server.context, expiry);
    await expireDueTrials(server.context, expiry + HOUR);
    expect((await records(user, "tiyan_expire")).map((r) => r.traffic_change)).toEqual([-GB]);
    expect((await balance(user))?.traffic).toBe(2 * GB);
    expect(await grants(user)).toEqual([{ amount: GB, remaining: 0, expired_time: expiry }]);
    await expectLedgerHolds(user);
  });

  test("with everything used: no record and no change", async () => {
    const user = await customer(0);
    const expiry = await giveTrial(user, 40 * MB, 1);
    await report(user, 40 * MB, T0 + 60_000);
    expect((await balance(user))?.traffic).toBe(0);
    await expireDueTrials(server.context, expiry);
    expect(await records(user, "tiyan_expire")).toEqual([]);
    expect((await grants(user))[0]).toMatchObject({ remaining: 0, expired_time: null });
    await expectLedgerHolds(user);
  });

  test("clamped to what balances.traffic holds: traffic taken outside the trial accounting is not taken twice", async () => {
    const user = await customer(0);
    const expiry = await giveTrial(user, GB, 1);
    await tx(
      db(),
      async () =>
        await changeTraffic(db(), {
          userId: user.id,
          type: "agency_allocate",
          desc: "运营调整",
          traffic: -600 * MB,
          now: T0,
          timeZone: ZONE,
        }),
    );
    await expireDueTrials(server.context, expiry);
    expect((await records(user, "tiyan_expire")).map((r) => r.traffic_change)).toEqual([-424 * MB]);
    expect((await balance(user))?.traffic).toBe(0);
    expect((await grants(user))[0]?.remaining).toBe(0);
    await expectLedgerHolds(user);
  });

  test("a customer whose only traffic expired is dropped from the node's list at the next sync", async () => {
    const trialOnly = await customer(0);
    const mixed = await customer(GB);
    const expiry = await giveTrial(trialOnly, 100 * MB, 2);
    await giveTrial(mixed, 100 * MB, 2);
    expect(await listed(expiry - 1)).toEqual(expect.arrayContaining([trialOnly.node_uid, mixed.node_uid]));
    const after = await listed(expiry);
    expect(after).not.toContain(trialOnly.node_uid);
    expect(after).toContain(mixed.node_uid);
    expect((await records(trialOnly, "tiyan_expire")).map((r) => r.traffic_change)).toEqual([-100 * MB]);
    expect((await balance(trialOnly))?.traffic).toBe(0);
    await expectLedgerHolds(trialOnly);
    await expectLedgerHolds(mixed);
  });

  test("the balances read before a sweep: a due grant is not trial traffic any more, nor permanent", async () => {
    const user = await customer(2 * GB);
    const soon = await giveTrial(user, GB, 5);
    const later = await giveTrial(user, 500 * MB, 10);
    expect(await trialBalance(db(), user.id, soon - 1)).toEqual({
      trialTraffic: GB + 500 * MB,
      trialExpireTime: soon,
    });
    expect(await trialBalance(db(), user.id, soon)).toEqual({
      trialTraffic: 500 * MB,
      trialExpireTime: later,
    });
    expect(await permanentTraffic(db(), user.id, soon - 1)).toBe(2 * GB);
    expect(await permanentTraffic(db(), user.id, soon)).toBe(2 * GB); // still unswept: not spendable either
    expect((await balance(user))?.traffic).toBe(3 * GB + 500 * MB);
    await expireDueTrials(server.context, later);
    expect(await trialBalance(db(), user.id, later)).toEqual({ trialTraffic: 0, trialExpireTime: 0 });
    expect(await permanentTraffic(db(), user.id, later)).toBe(2 * GB);
    await expectLedgerHolds(user);
  });

  test("the server's sweeper expires a grant already due without any report", async () => {
    const user = await customer(GB);
    await giveTrial(user, 100 * MB, 1, Date.now() - 2 * HOUR);
    const sweeper = await startTrialSweeper(server.context, 20);
    try {
      for (let i = 0; i < 200 && (await grants(user))[0]?.remaining !== 0; i += 1) await Bun.sleep(10);
    } finally {
      await sweeper.stop();
    }
    expect((await records(user, "tiyan_expire")).map((r) => r.traffic_change)).toEqual([-100 * MB]);
    expect((await balance(user))?.traffic).toBe(GB);
    await expectLedgerHolds(user);
  });
});

describe("about to expire", () => {
  const notices = async (user: UserRow) =>
    await db().all<{ desc: string; href: string }>(
      'SELECT "desc", href FROM notices WHERE user_id = ?',
      user.id,
    );
  const messages = async (chatId: number) =>
    await db().all<{ text: string }>("SELECT text FROM telegram_outbox WHERE chat_id = ?", chatId);

  test("within 24 hours of expiry: one bell notice and one bot message with how much and when, once", async () => {
    const user = await customer(GB);
    const chatId = 7_000_000 + Math.floor(Math.random() * 1_000_000);
    await db().run(
      "INSERT INTO telegram_bindings (user_id, chat_id, bind_time) VALUES (?, ?, ?)",
      user.id,
      chatId,
      T0,
    );
    const expiry = await giveTrial(user, 1.5 * GB, 30);
    await warnExpiringTrials(server.context, expiry - 24 * HOUR - 1);
    expect(await notices(user)).toEqual([]);

    await warnExpiringTrials(server.context, expiry - 24 * HOUR);
    const text = `您有 1.50 G 体验流量将于 ${businessDateTime(expiry, ZONE)} 到期，到期后未用完的部分将被清除`;
    expect(await notices(user)).toEqual([{ desc: text, href: "/#/" }]);
    expect(await messages(chatId)).toEqual([{ text }]);

    await warnExpiringTrials(server.context, expiry - HOUR);
    expect(await notices(user)).toHaveLength(1);
    expect(await messages(chatId)).toHaveLength(1);
  });

  test("trial traffic already used up is not announced; an account without the bot gets the notice only", async () => {
    const used = await customer(GB);
    const usedExpiry = await giveTrial(used, 10 * MB, 30);
    await report(used, 10 * MB, T0 + 60_000);
    await warnExpiringTrials(server.context, usedExpiry - HOUR);
    expect(await notices(used)).toEqual([]);

    const unbound = await customer(0);
    const expiry = await giveTrial(unbound, GB, 30);
    await warnExpiringTrials(server.context, expiry - HOUR);
    expect(await notices(unbound)).toHaveLength(1);
  });
});
