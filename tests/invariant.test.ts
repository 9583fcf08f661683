/**
 * The ledger invariant (issue #3): after a seeded random sequence of orders, coupons, wallet
 * deductions, sandbox payments (correct, repeated, concurrent, wrong amount), manual crediting,
 * cancels over HTTP and the sweeper cancelling day-old unpaid orders, every user's traffic, vipExpireTime and wallet equal what their ledger rows add
 * up to, every paid order was credited exactly once, and every coupon's use count matches its
 * unrestored usage records. Rerun a failure with FERRY_INVARIANT_SEED=<the seed in the test's name>.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { jsonValuesSql } from "../src/db/db.ts";
import { DAY_MS } from "../src/lib/time.ts";
import { GB } from "../src/lib/traffic.ts";
import type { Order, PayResult } from "../src/modules/order/schema.ts";
import { cancelAbandonedOrders, UNPAID_ORDER_MS } from "../src/modules/order/service.ts";
import { returnExpiredPushes } from "../src/modules/push/service.ts";
import { signUse } from "../src/modules/signuse/service.ts";
import { expireDueTrials } from "../src/modules/trial/service.ts";
import { settleWithoutGateway } from "../src/payments/credit.ts";
import type { RpcError } from "../src/rpc/codes.ts";
import { newId } from "../src/rpc/ids.ts";
import {
  createOrder,
  dobuy,
  giveWallet,
  makeCombo,
  makeCoupon,
  notifySandbox,
  orderIds,
  sandboxTradeNo,
  startShopServer,
} from "./commerce.ts";
import { type ApiClient, loggedInClient, type TestServer } from "./harness.ts";
import { chargeNode, makeChargingNode } from "./traffic.ts";

const STEPS = 400;
const USERS = 5;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}

let server: TestServer;
beforeAll(async () => {
  server = await startShopServer();
});
afterAll(async () => {
  await server?.close();
});

interface Trade {
  tradeNo: string;
  orderId: string;
  fen: number;
}

// In the test's name, so a failure names the run to repeat and a pass prints nothing.
const seed = Number(process.env.FERRY_INVARIANT_SEED ?? Math.floor(Math.random() * 2 ** 31));

test(`balances equal their ledgers after a random sequence of shop actions (FERRY_INVARIANT_SEED=${seed})`, async () => {
  const rand = prng(seed);
  const db = server.context.db;

  const permissions: string[] = [];
  for (const name of ["netflix", "chatgpt"]) {
    const id = newId();
    await db.run("INSERT INTO permissions (id, name, create_time) VALUES (?, ?, ?)", id, name, Date.now());
    permissions.push(id);
  }
  const combos = await Promise.all([
    makeCombo(server, { name: "10G", price: 15, traffic: 10 * GB, additionPersend: 20 }),
    makeCombo(server, { name: "1G", price: 0.5, traffic: GB }),
    makeCombo(server, {
      name: "三十天",
      price: 25,
      vipDuration: 30,
      additionPersend: 10,
      permissionsGain: [permissions[0]],
      permissionDuration: 30,
    }),
    makeCombo(server, {
      name: "七天+5G",
      price: 9.9,
      traffic: 5 * GB,
      vipDuration: 7,
      permissionsGain: permissions,
      permissionDuration: 15,
    }),
  ]);
  const coupons = await Promise.all([
    makeCoupon(server, {
      type: "cash",
      code: "C3",
      forMoney: 3,
      useNumPerUser: 2,
      NumberOfAuthorizations: 8,
    }),
    makeCoupon(server, {
      type: "cash",
      code: "C20",
      forMoney: 20,
      useNumPerUser: 1,
      NumberOfAuthorizations: 3,
    }),
    makeCoupon(server, {
      type: "discount",
      code: "D90",
      discount: 0.9,
      useNumPerUser: 0,
      NumberOfAuthorizations: 0,
    }),
    makeCoupon(server, {
      type: "discount",
      code: "D75",
      discount: 0.75,
      useNumPerUser: 1,
      NumberOfAuthorizations: 5,
    }),
  ]);
  await makeCoupon(server, { type: "freeUse", code: "TRIAL", trafficG: 8 });
  await makeCoupon(server, { type: "cash", code: "EXPIRED", forMoney: 1, expireTime: Date.now() - DAY_MS });
  const codes = ["C3", "C20", "D90", "D75", "TRIAL", "EXPIRED", "NOPE", ""];

  const users: { id: string; client: ApiClient }[] = [];
  for (let i = 0; i < USERS; i++) {
    const { user, client } = await loggedInClient(server);
    users.push({ id: user.id, client });
    await giveWallet(server, user.id, rand.int(5000));
  }
  const ordersOf = new Map<string, string[]>(users.map((u) => [u.id, []]));
  let swept = 0;
  const trades: Trade[] = [];
  const delivered: Trade[] = [];
  const seen = new Map<string, Set<number>>();
  const expectCode = (action: string, code: number, allowed: number[]) => {
    const codesSeen = seen.get(action) ?? new Set<number>();
    codesSeen.add(code);
    seen.set(action, codesSeen);
    expect({ action, code, ok: allowed.includes(code) }).toEqual({ action, code, ok: true });
  };

  for (let step = 0; step < STEPS; step++) {
    const user = rand.pick(users);
    const mine = ordersOf.get(user.id) as string[];
    // Mostly the latest order (create → coupon → wallet → pay), sometimes an older one.
    const someOrder = () => (mine.length ? (rand.next() < 0.6 ? mine.at(-1) : rand.pick(mine)) : null);
    const roll = rand.int(100);
    if (roll < 18 || mine.length === 0) {
      const order = await createOrder(user.client, (await rand.pick(combos))._id);
      mine.push(order._id);
    } else if (roll < 33) {
      const orderId = someOrder() as string;
      const answer = await user.client.call<Order>("/api/coupon/orderUseCoupon", {
        order_id: orderId,
        code: rand.pick(codes),
      });
      expectCode("orderUseCoupon", answer.code, [0, 1000, 1016, 1017, 1022, 1025, 1029]);
    } else if (roll < 39) {
      const answer = await user.client.call("/api/coupon/orderCancleCoupon", { order_id: someOrder() });
      expectCode("orderCancleCoupon", answer.code, [0, 1000]);
    } else if (roll < 49) {
      const answer = await user.client.call("/api/shop/wallet_check", { order_id: someOrder() });
      expectCode("wallet_check", answer.code, [0, 1000]);
    } else if (roll < 63) {
      const orderId = someOrder() as string;
      const answer = await dobuy(user.client, orderId, rand.pick(["alipay", "wxpay"] as const));
      expectCode("dobuy", answer.code, [0, 1000, 1017]);
      const pay = answer.data as PayResult;
      if (answer.code === 0 && pay.status !== "paied")
        trades.push({ tradeNo: sandboxTradeNo(pay), orderId, fen: Math.round(pay.request_pay_amound * 100) });
    } else if (roll < 80 && trades.length) {
      // The gateway pays an attempt: usually the latest, sometimes an older one; sometimes the
      // same notification several times at once, sometimes with a wrong amount.
      const trade = rand.next() < 0.5 ? (trades.at(-1) as Trade) : rand.pick(trades);
      const kind = rand.int(10);
      const fen = kind === 0 ? trade.fen + 1 : kind === 1 ? Math.max(0, trade.fen - 100) : trade.fen;
      const copies = kind >= 8 ? 3 : 1;
      const answers = await Promise.all(
        Array.from({ length: copies }, () => notifySandbox(server, trade.tradeNo, fen)),
      );
      for (const answer of answers) expect(answer.status).toBe(303);
      if (fen === trade.fen) delivered.push(trade);
    } else if (roll < 84 && delivered.length) {
      const again = rand.pick(delivered);
      expect((await notifySandbox(server, again.tradeNo, again.fen)).status).toBe(303);
    } else if (roll < 94) {
      const answer = await user.client.call("/api/order/cancel_order", { order_id: someOrder() });
      expectCode("cancel_order", answer.code, [0, 1026]);
    } else if (roll < 95) {
      // A day passes: the sweeper cancels every open order, returning coupons and wallet parts.
      swept += await cancelAbandonedOrders(server.context, Date.now() + UNPAID_ORDER_MS + 1);
    } else if (roll < 96) {
      const orderId = someOrder() as string;
      try {
        await settleWithoutGateway(server.context, orderId, "manual", "manual: invariant test");
      } catch (error) {
        expect((error as Error).message).toMatch(/不能标记为已支付/);
      }
    } else if (roll < 98) {
      await giveWallet(server, user.id, 1 + rand.int(3000));
    } else {
      // The coupon manager edits a limit while orders hold the coupon (1017 may then come at dobuy).
      const coupon = rand.pick(coupons);
      await makeCoupon(server, {
        _id: coupon._id,
        type: coupon.type,
        code: coupon.code,
        forMoney: coupon.forMoney,
        discount: coupon.discount,
        useNumPerUser: rand.int(3),
        NumberOfAuthorizations: rand.int(10),
      });
    }
  }
  // The run ends with a wallet part on an open order and a day passing, so every run's ledgers hold
  // a wallet return by the sweeper.
  const last = users[0] as { id: string; client: ApiClient };
  await giveWallet(server, last.id, 100);
  const held = await createOrder(last.client, (combos[0] as { _id: string })._id);
  expect((await last.client.call<Order>("/api/shop/wallet_check", { order_id: held._id })).data.status).toBe(
    "wallet_spend",
  );
  swept += await cancelAbandonedOrders(server.context, Date.now() + UNPAID_ORDER_MS + 1);
  const sweptBack = (
    await db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM wallet_entries WHERE order_id = ? AND type = 'order_refund'",
      held._id,
    )
  )?.n;
  expect(sweptBack).toBe(1);
  const codesSummary = [...seen].map(([action, c]) => `${action} ${[...c].sort().join("/")}`).join(", ");

  // Per user: balances are what the ledgers add up to, and what the orders say they should be.
  for (const { id } of users) {
    const row = await db.get<{
      traffic: number;
      vip_expire_time: number;
      wallet_fen: number;
      paid_user: number;
    }>(
      "SELECT traffic, vip_expire_time, wallet_fen, paid_user FROM users JOIN balances ON user_id = id WHERE id = ?",
      id,
    );
    const ledger = await db.get<{ traffic: number; vip: number }>(
      "SELECT COALESCE(SUM(traffic_change), 0) AS traffic, COALESCE(SUM(vip_change), 0) AS vip FROM traffic_records WHERE user_id = ?",
      id,
    );
    const wallet = await db.get<{ fen: number }>(
      "SELECT COALESCE(SUM(change_fen), 0) AS fen FROM wallet_entries WHERE user_id = ?",
      id,
    );
    expect({ user: id, traffic: row?.traffic, vip: row?.vip_expire_time, wallet: row?.wallet_fen }).toEqual({
      user: id,
      traffic: ledger?.traffic,
      vip: ledger?.vip,
      wallet: wallet?.fen,
    });

    const orders = await db.all<{ status: string; add_traffic: number; wallet_spend_fen: number }>(
      "SELECT status, add_traffic, wallet_spend_fen FROM orders WHERE user_id = ?",
      id,
    );
    const paid = orders.filter((o) => o.status === "paied");
    expect(row?.traffic).toBe(paid.reduce((sum, o) => sum + o.add_traffic, 0));
    expect(row?.paid_user).toBe(paid.length > 0 ? 1 : 0);
    const given = (
      await db.get<{ fen: number }>(
        "SELECT COALESCE(SUM(change_fen), 0) AS fen FROM wallet_entries WHERE user_id = ? AND type = 'adjust'",
        id,
      )
    )?.fen as number;
    const heldByOrders = orders
      .filter((o) => o.status === "paied" || o.status === "wallet_spend")
      .reduce((sum, o) => sum + o.wallet_spend_fen, 0);
    expect(row?.wallet_fen).toBe(given - heldByOrders);

    // Running balances in the ledgers are consistent row by row.
    let running = 0;
    for (const entry of await db.all<{ change_fen: number; balance_fen: number }>(
      "SELECT change_fen, balance_fen FROM wallet_entries WHERE user_id = ? ORDER BY id",
      id,
    )) {
      running += entry.change_fen;
      expect(entry.balance_fen).toBe(running);
    }
  }

  // Every paid order: exactly one 'buy' record and exactly one paid attempt, covering what it owed.
  const paidOrders = await db.all<{
    id: string;
    status: string;
    order_money_fen: number;
    coupon_discount_fen: number;
    wallet_spend_fen: number;
  }>("SELECT id, status, order_money_fen, coupon_discount_fen, wallet_spend_fen FROM orders");
  let paidCount = 0;
  for (const order of paidOrders) {
    const buys = (
      await db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM traffic_records WHERE order_id = ? AND type = 'buy'",
        order.id,
      )
    )?.n;
    const attempts = await db.all<{ amount_fen: number }>(
      "SELECT amount_fen FROM payments WHERE order_id = ? AND status = 'paid'",
      order.id,
    );
    if (order.status === "paied") {
      paidCount += 1;
      expect({ order: order.id, buys, attempts: attempts.length }).toEqual({
        order: order.id,
        buys: 1,
        attempts: 1,
      });
      expect(attempts[0]?.amount_fen).toBe(
        order.order_money_fen - order.coupon_discount_fen - order.wallet_spend_fen,
      );
    } else {
      expect({ order: order.id, buys, attempts: attempts.length }).toEqual({
        order: order.id,
        buys: 0,
        attempts: 0,
      });
    }
  }
  const credited = (
    await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM payment_events WHERE result = 'credited'")
  )?.n;
  expect(credited).toBe(paidCount);

  // Permissions were counted once per paid order granting them.
  for (const permission of permissions) {
    const granted = (
      await db.get<{ n: number }>(
        `SELECT COUNT(*) AS n FROM orders WHERE status = 'paied' AND permission_duration > 0
           AND EXISTS (SELECT 1 FROM ${jsonValuesSql(db, "orders.gain_permissions", "text")} AS gained WHERE value = ?)`,
        permission,
      )
    )?.n;
    const useTimes = (
      await db.get<{ use_times: number }>("SELECT use_times FROM permissions WHERE id = ?", permission)
    )?.use_times;
    expect(useTimes).toBe(granted);
  }

  // Coupons: the use count is the number of unrestored uses, and an order holds exactly its own use.
  for (const coupon of await db.all<{ id: string; auth_times: number }>(
    "SELECT id, auth_times FROM coupons",
  )) {
    const active = (
      await db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM coupon_uses WHERE coupon_id = ? AND is_delete = 0",
        coupon.id,
      )
    )?.n;
    expect({ coupon: coupon.id, authTimes: coupon.auth_times }).toEqual({
      coupon: coupon.id,
      authTimes: active ?? 0,
    });
  }
  const mismatched = (
    await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM coupon_uses cu WHERE cu.is_delete = 0
         AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.coupon_use_id = cu.id AND o.id = cu.order_id AND o.status != 'cancled')`)
  )?.n;
  expect(mismatched).toBe(0);
  const orphanHolders = (
    await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM orders o WHERE o.coupon_use_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM coupon_uses cu WHERE cu.id = o.coupon_use_id AND cu.is_delete = 0)`)
  )?.n;
  expect(orphanHolders).toBe(0);

  // The run did what it set out to do: some orders paid, some cancelled, some refused notifications.
  const statuses = await db.all<{ status: string; n: number }>(
    "SELECT status, COUNT(*) AS n FROM orders GROUP BY status",
  );
  const events = await db.all<{ result: string; n: number }>(
    "SELECT result, COUNT(*) AS n FROM payment_events GROUP BY result",
  );
  const run = `codes seen: ${codesSummary}; orders: ${JSON.stringify(statuses)}; swept: ${swept}; payment events: ${JSON.stringify(events)}`;
  expect(
    statuses.map((r) => r.status),
    run,
  ).toEqual(expect.arrayContaining(["paied", "cancled"]));
  expect(
    events.map((r) => r.result),
    run,
  ).toEqual(expect.arrayContaining(["credited", "duplicate", "anomaly"]));
}, 120_000);

/**
 * Issue 14: the same invariant over the ways engagement moves traffic — check-ins over simulated
 * days, trial and permanent vouchers, time-package vouchers, lucky draws, transfers (created,
 * received by racing customers, taken back, returned after 7 days), trial expiries and node reports
 * that cross from quota to trial to permanent traffic. Issue 26: packages whose traffic lasts 7 days
 * (a combo's duration), bought with wallet money, spent by node reports and expiring.
 */
test(`traffic equals its ledger after a random sequence of engagement actions (FERRY_INVARIANT_SEED=${seed})`, async () => {
  const rand = prng(seed ^ 0x5eed_14);
  const ctx = server.context;
  const db = ctx.db;
  const timeZone = await ctx.settings.get("timezone");
  const agentId = await makeChargingNode(server, timeZone);
  await ctx.settings.update({ minPushNum: 2, pushCostRate: 0.25, prizeBaseCost: 1 });

  const { client: admin } = await loggedInClient(server, { role: "admin" });
  const prizes = [
    { name: "五G", gainTraffic: 5, gainVipTime: 0, weight: 3 },
    { name: "谢谢参与", gainTraffic: 0, gainVipTime: 0, weight: 5 },
    { name: "两天", gainTraffic: 0, gainVipTime: 2, weight: 1 },
    {
      name: "折扣",
      gainTraffic: 1,
      gainVipTime: 0,
      weight: 1,
      hasDiscountCoupon: true,
      discountValue: 0.8,
      discountDuration: 3,
    },
  ];
  for (const prize of prizes) {
    const answer = await admin.call("/api/yunying/prize/update", prize);
    expect({ prize: prize.name, code: answer.code, msg: answer.msg }).toEqual({
      prize: prize.name,
      code: 0,
      msg: answer.msg,
    });
  }
  await makeCoupon(server, {
    type: "freeUse",
    code: "GIFT3",
    trafficG: 3,
    useNumPerUser: 0,
    NumberOfAuthorizations: 0,
  });
  await makeCoupon(server, {
    type: "freeUse",
    code: "TRY2H",
    trafficG: 2,
    traffixHaveLimitTime: true,
    traffixLimitTime: 2,
    useNumPerUser: 0,
    NumberOfAuthorizations: 0,
  });
  await makeCoupon(server, {
    type: "freeTime",
    code: "DAYS1",
    vipDay: 1,
    useNumPerUser: 2,
    NumberOfAuthorizations: 6,
  });
  await makeCoupon(server, {
    type: "freeUse",
    code: "FEW",
    trafficG: 1,
    useNumPerUser: 1,
    NumberOfAuthorizations: 3,
  });
  await makeCoupon(server, {
    type: "freeUse",
    code: "WELCOME",
    trafficG: 12,
    useNumPerUser: 1,
    NumberOfAuthorizations: 0,
  });
  const voucherCodes = ["GIFT3", "TRY2H", "TRY2H", "DAYS1", "FEW", "C3", "NOPE"];
  const weekPack = await makeCombo(server, { name: "七日流量", price: 1, traffic: 2 * GB, duration: 7 });
  /** Buys the 7-day package with wallet money (settled at once); its 7 days pass at once when `expire`. */
  const buyWeekPack = async (user: { id: string; client: ApiClient }, expire: boolean, now: number) => {
    await giveWallet(server, user.id, 100);
    const order = await createOrder(user.client, weekPack._id);
    expect((await user.client.call("/api/shop/wallet_check", { order_id: order._id })).code).toBe(0);
    expectCode("buy_package", (await dobuy(user.client, order._id)).code, [0]);
    if (!expire) return;
    await db.run("UPDATE trial_grants SET expire_time = ? WHERE order_id = ?", now - 1, order._id);
    await expireDueTrials(ctx, now);
  };

  const users: { id: string; nodeUid: number; client: ApiClient; day: number }[] = [];
  for (let i = 0; i < USERS + 1; i++) {
    const { user, client } = await loggedInClient(server);
    await db.run("UPDATE users SET paid_user = 1 WHERE id = ?", user.id);
    users.push({ id: user.id, nodeUid: user.node_uid, client, day: 0 });
    expect((await client.call("/api/coupon/redeem_coupon", { code: "WELCOME" })).code).toBe(0);
  }
  const seen = new Map<string, Set<number>>();
  const expectCode = (action: string, code: number, allowed: number[]) => {
    seen.set(action, (seen.get(action) ?? new Set<number>()).add(code));
    expect({ action, code, ok: allowed.includes(code) }).toEqual({ action, code, ok: true });
  };
  const openCodes: { code: string; from: (typeof users)[number] }[] = [];

  for (let step = 0; step < 300; step++) {
    const user = rand.pick(users);
    const roll = rand.int(100);
    const now = Date.now();
    if (roll < 10) {
      // A check-in on the user's next simulated day (sometimes skipping one, breaking the streak).
      user.day += rand.next() < 0.85 ? 1 : 2;
      try {
        await signUse(ctx, user.id, now + user.day * DAY_MS);
        expectCode("sign_use", 0, [0]);
      } catch (error) {
        expectCode("sign_use", (error as RpcError).code, [1005]);
      }
    } else if (roll < 24) {
      const answer = await user.client.call("/api/coupon/redeem_coupon", { code: rand.pick(voucherCodes) });
      expectCode("redeem_coupon", answer.code, [0, 1016, 1017, 1020, 1021, 1027]);
    } else if (roll < 36) {
      const answer = await user.client.call("/api/prize/draw", {});
      expectCode("draw", answer.code, [0, 1038]);
    } else if (roll < 48) {
      const answer = await user.client.call<{ code: string }>("/api/push/create", {
        pushNumber: rand.pick([1, 2, 3, 5, 40]),
      });
      expectCode("push/create", answer.code, [0, 1037, 1038, 1039]);
      if (answer.code === 0 && answer.data) {
        openCodes.push({ code: answer.data.code, from: user });
        // Sometimes the sender thinks again at once (receivers are quick: most codes go within a step).
        if (rand.next() < 0.25) {
          const back = await user.client.call("/api/push/cancel", { code: answer.data.code });
          expectCode("push/cancel", back.code, [0]);
        }
      }
    } else if (roll < 60 && openCodes.length) {
      // Up to three customers race for a code (the sender may be among them): usually one still
      // waiting, sometimes any code ever made.
      const waiting = await db.all<{ code: string }>("SELECT code FROM pushes WHERE state = 'created'");
      const code = waiting.length && rand.next() < 0.7 ? rand.pick(waiting).code : rand.pick(openCodes).code;
      const racers = [rand.pick(users), rand.pick(users), rand.pick(users)].slice(0, 1 + rand.int(3));
      const answers = await Promise.all(
        racers.map((racer) => racer.client.call("/api/push/receive", { code })),
      );
      for (const answer of answers) expectCode("push/receive", answer.code, [0, 1039, 1040]);
      expect(answers.filter((answer) => answer.code === 0).length).toBeLessThanOrEqual(1);
    } else if (roll < 65 && openCodes.length) {
      // Usually the sender takes back a transfer still waiting; sometimes any code, by anyone.
      const waiting = await db.all<{ code: string }>("SELECT code FROM pushes WHERE state = 'created'");
      const pickedWaiting = waiting.length && rand.next() < 0.85 ? rand.pick(waiting).code : null;
      const { code, from } = openCodes.find((open) => open.code === pickedWaiting) ?? rand.pick(openCodes);
      const canceller = pickedWaiting && rand.next() < 0.9 ? from : rand.pick([from, user]);
      const answer = await canceller.client.call("/api/push/cancel", { code });
      expectCode("push/cancel", answer.code, [0, 1040]);
    } else if (roll < 68) {
      // Seven days pass for one waiting transfer.
      await db.run(
        "UPDATE pushes SET create_time = create_time - ? WHERE id = (SELECT id FROM pushes WHERE state = 'created' LIMIT 1)",
        8 * DAY_MS,
      );
      await returnExpiredPushes(ctx, now);
    } else if (roll < 74) {
      // A running trial grant reaches its expiry.
      await db.run(
        "UPDATE trial_grants SET expire_time = ? WHERE id = (SELECT id FROM trial_grants WHERE remaining > 0 ORDER BY id LIMIT 1)",
        now - 1,
      );
      if (rand.next() < 0.5) await expireDueTrials(ctx, now);
    } else if (roll < 77) {
      await buyWeekPack(user, !seen.has("buy_package") || rand.next() < 0.5, now);
    } else {
      // A node report: up to 3 GB for up to three users (expiry inside the report's transaction).
      const usage: Record<number, [number, number]> = {};
      for (const charged of users.slice(rand.int(users.length)).slice(0, 3))
        usage[charged.nodeUid] = [rand.int(GB / 4), rand.int(3 * GB)];
      if (Object.keys(usage).length) await chargeNode(server, agentId, usage, now);
    }
  }
  // Races and rate limits make some runs' dice never take a transfer back or never receive one: two
  // new customers then do each once, so that every run covers every path before the ledgers are read.
  if (!seen.get("push/receive")?.has(0) || !seen.get("push/cancel")?.has(0)) {
    const pair = [];
    for (let i = 0; i < 2; i++) {
      const { user, client } = await loggedInClient(server);
      expect((await client.call("/api/coupon/redeem_coupon", { code: "WELCOME" })).code).toBe(0);
      pair.push({ id: user.id, nodeUid: user.node_uid, client, day: 0 });
    }
    users.push(...pair);
    const [sender, receiver] = pair as [(typeof users)[number], (typeof users)[number]];
    for (const action of ["push/receive", "push/cancel"] as const) {
      if (seen.get(action)?.has(0)) continue;
      const made = await sender.client.call<{ code: string }>("/api/push/create", { pushNumber: 2 });
      expectCode("push/create", made.code, [0]);
      const done =
        action === "push/receive"
          ? await receiver.client.call("/api/push/receive", { code: made.data.code })
          : await sender.client.call("/api/push/cancel", { code: made.data.code });
      expectCode(action, done.code, [0]);
    }
  }
  if (!seen.has("buy_package")) await buyWeekPack(rand.pick(users), true, Date.now());
  const summary = [...seen].map(([action, c]) => `${action} ${[...c].sort().join("/")}`).join(", ");

  const sumOf = async (sql: string, ...params: (string | number)[]) =>
    (await db.get<{ n: number }>(sql, ...params))?.n ?? 0;
  for (const { id } of users) {
    const row = await db.get<{ traffic: number; vip_expire_time: number }>(
      "SELECT traffic, vip_expire_time FROM users JOIN balances ON user_id = id WHERE id = ?",
      id,
    );
    const ledger = {
      traffic: await sumOf(
        "SELECT COALESCE(SUM(traffic_change), 0) AS n FROM traffic_records WHERE user_id = ?",
        id,
      ),
      vip: await sumOf("SELECT COALESCE(SUM(vip_change), 0) AS n FROM traffic_records WHERE user_id = ?", id),
    };
    expect({ user: id, traffic: row?.traffic, vip: row?.vip_expire_time }).toEqual({ user: id, ...ledger });
    // Trial traffic is a part of traffic, never more; a swept grant holds nothing.
    const trial = await sumOf(
      "SELECT COALESCE(SUM(remaining), 0) AS n FROM trial_grants WHERE user_id = ?",
      id,
    );
    expect(trial).toBeLessThanOrEqual(row?.traffic ?? 0);
    expect(
      await sumOf(
        "SELECT COUNT(*) AS n FROM trial_grants WHERE user_id = ? AND expired_time IS NOT NULL AND remaining > 0",
        id,
      ),
    ).toBe(0);
    // Each kind of record adds up to what its own table says happened.
    // sign -1 gives what left the balance (in SQL, so an empty sum is 0, never -0).
    const byType = async (type: string, sign = 1) =>
      await sumOf(
        "SELECT COALESCE(SUM(traffic_change * ?), 0) AS n FROM traffic_records WHERE user_id = ? AND type = ?",
        sign,
        id,
        type,
      );
    expect(await byType("sign_use")).toBe(
      await sumOf("SELECT COALESCE(SUM(add_traffic), 0) AS n FROM sign_uses WHERE user_id = ?", id),
    );
    expect(await byType("prize_spend")).toBe(
      await sumOf("SELECT -COALESCE(SUM(cost), 0) AS n FROM prize_draws WHERE user_id = ?", id),
    );
    expect(await byType("prize_reward")).toBe(
      await sumOf("SELECT COALESCE(SUM(gain_traffic), 0) AS n FROM prize_draws WHERE user_id = ?", id),
    );
    expect(await byType("push_spend")).toBe(
      await sumOf(
        "SELECT -COALESCE(SUM(push_number), 0) AS n FROM pushes WHERE from_user_id = ? AND state != 'returned'",
        id,
      ),
    );
    expect(await byType("push_receive")).toBe(
      await sumOf(
        "SELECT COALESCE(SUM(receive_number), 0) AS n FROM pushes WHERE to_user_id = ? AND state = 'received'",
        id,
      ),
    );
    expect(await byType("coupon")).toBe(
      await sumOf(
        "SELECT COALESCE(SUM(add_traffic), 0) AS n FROM coupon_uses WHERE user_id = ? AND is_delete = 0",
        id,
      ),
    );
    // Packages: what was bought is what the paid orders sold; what expired is at most what they sold.
    expect(await byType("buy")).toBe(
      await sumOf(
        "SELECT COALESCE(SUM(add_traffic), 0) AS n FROM orders WHERE user_id = ? AND status = 'paied'",
        id,
      ),
    );
    expect(await byType("buy_expire", -1)).toBeLessThanOrEqual(
      await sumOf(
        "SELECT COALESCE(SUM(amount), 0) AS n FROM trial_grants WHERE user_id = ? AND order_id IS NOT NULL AND expired_time IS NOT NULL",
        id,
      ),
    );
    // Node traffic: what left balances.traffic is what the usage statistics say was charged to it.
    expect(await byType("spend", -1)).toBe(
      await sumOf("SELECT COALESCE(SUM(permanent), 0) AS n FROM usage_days WHERE user_id = ?", id),
    );
  }
  for (const coupon of await db.all<{ id: string; auth_times: number }>(
    "SELECT id, auth_times FROM coupons",
  )) {
    const active = await sumOf(
      "SELECT COUNT(*) AS n FROM coupon_uses WHERE coupon_id = ? AND is_delete = 0",
      coupon.id,
    );
    expect({ coupon: coupon.id, authTimes: coupon.auth_times }).toEqual({
      coupon: coupon.id,
      authTimes: active,
    });
  }
  // The run exercised every path: each action succeeded at least once, and trial traffic expired.
  expect([...seen.keys()].sort(), summary).toEqual(
    ["buy_package", "draw", "push/cancel", "push/create", "push/receive", "redeem_coupon", "sign_use"].sort(),
  );
  for (const action of seen.keys()) expect(seen.get(action)?.has(0), `${action}: ${summary}`).toBe(true);
  expect(
    await sumOf("SELECT COUNT(*) AS n FROM traffic_records WHERE type = 'tiyan_expire'"),
    summary,
  ).toBeGreaterThan(0);
  expect(
    await sumOf(
      "SELECT COUNT(*) AS n FROM trial_grants WHERE order_id IS NOT NULL AND expired_time IS NOT NULL",
    ),
    summary,
  ).toBeGreaterThan(0);
}, 120_000);

/**
 * Issue 15: wallets equal their entries across random purchases by invited customers (rebates to
 * the channel owner, repeated and concurrent notifications), wallet spending, withdrawals (raced),
 * settlements and refusals; each paid order of an invited customer inside the window earned
 * exactly one rebate of rate × what was paid, to the fen.
 */
test(`wallets equal their entries across rebates, withdrawals, settlements and refusals (FERRY_INVARIANT_SEED=${seed})`, async () => {
  const rand = prng(seed ^ 0x5eed_15);
  const ctx = server.context;
  const db = ctx.db;
  await ctx.settings.update({ min_charge_money: 5, openChannel: true });
  const { client: admin } = await loggedInClient(server, { role: "admin" });
  const owner = await loggedInClient(server);
  const code = `IV${seed % 10_000}`.slice(0, 6).padEnd(6, "X");
  const rate = rand.pick([0.1, 0.15, 0.5]);
  const channel = await admin.call("/api/admin/users/update_channel", {
    email: owner.email,
    name: "不变量渠道",
    code,
    rewardRate: rate,
    comsumerDuration: 30,
  });
  expect({ code: channel.code, msg: channel.msg }).toEqual({ code: 0, msg: channel.msg });
  const ownerClient = owner.client;
  const address = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
  expect(
    (await ownerClient.call("/api/wallet/change_reward_adress", { addressType: "USDT-TRC20", address })).code,
  ).toBe(0);

  const combos = await Promise.all([
    makeCombo(server, { name: "返利 10G", price: 15, traffic: 10 * GB }),
    makeCombo(server, { name: "返利 1G", price: 0.5, traffic: GB }),
    makeCombo(server, { name: "返利 三十天", price: 25.5, vipDuration: 30 }),
  ]);
  const customers: { id: string; client: ApiClient; invited: boolean }[] = [];
  for (let i = 0; i < 4; i++) {
    const { user, client } = await loggedInClient(server);
    // Three invited (one signed up 40 days ago: outside the 30-day window), one not invited.
    const invited = i < 3;
    await db.run(
      "UPDATE users SET channel_code = ?, create_time = ? WHERE id = ?",
      invited ? code : "",
      Date.now() - (i === 2 ? 40 : 1) * DAY_MS,
      user.id,
    );
    customers.push({ id: user.id, client, invited });
    await giveWallet(server, user.id, rand.int(3000));
  }
  const trades: Trade[] = [];
  const seen = new Map<string, Set<number>>();
  const expectCode = (action: string, answerCode: number, allowed: number[]) => {
    seen.set(action, (seen.get(action) ?? new Set<number>()).add(answerCode));
    expect({ action, code: answerCode, ok: allowed.includes(answerCode) }).toEqual({
      action,
      code: answerCode,
      ok: true,
    });
  };
  const openWithdrawals = async () =>
    await db.all<{ id: string }>("SELECT id FROM withdrawals WHERE status = 'request'");

  for (let step = 0; step < 250; step++) {
    const customer = rand.pick(customers);
    const roll = rand.int(100);
    if (roll < 25) {
      const order = await createOrder(customer.client, (await rand.pick(combos))._id);
      if (rand.next() < 0.4)
        expectCode(
          "wallet_check",
          (await customer.client.call("/api/shop/wallet_check", { order_id: order._id })).code,
          [0, 1000],
        );
      const answer = await dobuy(customer.client, order._id);
      expectCode("dobuy", answer.code, [0, 1000]);
      const pay = answer.data as PayResult;
      if (answer.code === 0 && pay.status !== "paied")
        trades.push({
          tradeNo: sandboxTradeNo(pay),
          orderId: order._id,
          fen: Math.round(pay.request_pay_amound * 100),
        });
    } else if (roll < 50 && trades.length) {
      // The gateway's notification, sometimes several copies at once.
      const trade = rand.pick(trades);
      const copies = rand.next() < 0.3 ? 5 : 1;
      const answers = await Promise.all(
        Array.from({ length: copies }, () => notifySandbox(server, trade.tradeNo, trade.fen)),
      );
      for (const answer of answers) expect(answer.status).toBe(303);
    } else if (roll < 58) {
      const orderId = (await orderIds(server, customer.id)).at(-1);
      if (orderId)
        expectCode(
          "cancel_order",
          (await customer.client.call("/api/order/cancel_order", { order_id: orderId })).code,
          [0, 1026],
        );
    } else if (roll < 72) {
      // The channel owner asks for the whole balance, sometimes three times at once.
      const copies = rand.next() < 0.3 ? 3 : 1;
      const answers = await Promise.all(
        Array.from({ length: copies }, () => ownerClient.call("/api/wallet/make_charge", {})),
      );
      for (const answer of answers) expectCode("make_charge", answer.code, [0, 1012]);
      expect(answers.filter((answer) => answer.code === 0).length).toBeLessThanOrEqual(1);
    } else if (roll < 86 && (await openWithdrawals()).length) {
      const [open] = await openWithdrawals();
      const answer =
        rand.next() < 0.6
          ? await admin.call("/api/admin/charge/checkout_charge", { charge_id: open?.id, txid: "" })
          : await admin.call("/api/admin/charge/refuse_charge", { charge_id: open?.id, reason: "地址有误" });
      expectCode("settle/refuse", answer.code, [0]);
    } else {
      await giveWallet(server, customer.id, 1 + rand.int(2000));
    }
  }
  const summary = [...seen].map(([action, c]) => `${action} ${[...c].sort().join("/")}`).join(", ");

  const sumOf = async (sql: string, ...params: (string | number)[]) =>
    (await db.get<{ n: number }>(sql, ...params))?.n ?? 0;
  for (const id of [owner.user.id, ...customers.map((c) => c.id)]) {
    const wallet = await sumOf("SELECT wallet_fen AS n FROM users WHERE id = ?", id);
    expect({ user: id, wallet }).toEqual({
      user: id,
      wallet: await sumOf(
        "SELECT COALESCE(SUM(change_fen), 0) AS n FROM wallet_entries WHERE user_id = ?",
        id,
      ),
    });
  }
  // Every paid order of a customer invited within the window earned exactly one rebate, to the fen.
  const paid = (
    await db.all<{
      id: string;
      user_id: string;
      order_money_fen: number;
      coupon_discount_fen: number;
      reward_fen: number;
    }>(
      "SELECT id, user_id, order_money_fen, coupon_discount_fen, reward_fen FROM orders WHERE status = 'paied'",
    )
  ).filter((order) => customers.some((c) => c.id === order.user_id));
  for (const order of paid) {
    const inWindow = customers.findIndex((c) => c.id === order.user_id) < 2;
    const spent = order.order_money_fen - order.coupon_discount_fen;
    const expected = inWindow ? Math.round((spent * Math.round(rate * 10_000)) / 10_000) : 0;
    const rewards = await db.all<{ reward_fen: number }>(
      "SELECT reward_fen FROM channel_rewards WHERE order_id = ?",
      order.id,
    );
    expect({ order: order.id, rewards: rewards.map((r) => r.reward_fen), shown: order.reward_fen }).toEqual({
      order: order.id,
      rewards: expected > 0 ? [expected] : [],
      shown: expected,
    });
  }
  const ownerId = owner.user.id;
  expect(
    await sumOf(
      "SELECT COALESCE(SUM(change_fen), 0) AS n FROM wallet_entries WHERE user_id = ? AND type = 'reward'",
      ownerId,
    ),
  ).toBe(
    await sumOf(
      "SELECT COALESCE(SUM(reward_fen), 0) AS n FROM channel_rewards WHERE channel_user_id = ?",
      ownerId,
    ),
  );
  expect(
    await sumOf(
      "SELECT COALESCE(SUM(-change_fen), 0) AS n FROM wallet_entries WHERE user_id = ? AND type = 'withdraw'",
      ownerId,
    ),
  ).toBe(await sumOf("SELECT COALESCE(SUM(money_fen), 0) AS n FROM withdrawals WHERE user_id = ?", ownerId));
  expect(
    await sumOf(
      "SELECT COALESCE(SUM(change_fen), 0) AS n FROM wallet_entries WHERE user_id = ? AND type = 'withdraw_refund'",
      ownerId,
    ),
  ).toBe(
    await sumOf(
      "SELECT COALESCE(SUM(money_fen), 0) AS n FROM withdrawals WHERE user_id = ? AND status = 'refused'",
      ownerId,
    ),
  );
  expect((await openWithdrawals()).length).toBeLessThanOrEqual(1);
  // The run did what it set out to do.
  expect(paid.length, summary).toBeGreaterThan(0);
  expect(seen.get("make_charge")?.has(0), summary).toBe(true);
  expect(seen.get("settle/refuse")?.has(0), summary).toBe(true);
  expect(
    await sumOf("SELECT COUNT(*) AS n FROM channel_rewards WHERE channel_user_id = ?", ownerId),
    summary,
  ).toBeGreaterThan(0);
}, 120_000);

/**
 * Issue 16: balances still equal their ledgers when admins adjust traffic, time package and
 * wallet (raised and lowered, some refused) and an agency allocates its permanent traffic to its
 * customers (sometimes several at once) between node reports; every adjustment has its audit row.
 */
test(`balances equal their ledgers across admin adjustments and agency allocations (FERRY_INVARIANT_SEED=${seed})`, async () => {
  const rand = prng(seed ^ 0x5eed_16);
  const ctx = server.context;
  const db = ctx.db;
  const agentId = await makeChargingNode(server, await ctx.settings.get("timezone"));
  const { client: admin } = await loggedInClient(server, { role: "admin" });
  const owner = await loggedInClient(server);
  const customers = [await loggedInClient(server), await loggedInClient(server)];
  const others = [await loggedInClient(server), await loggedInClient(server)];
  const call = async (client: ApiClient, path: string, payload: unknown) => {
    const answer = await client.call(path, payload);
    expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: answer.msg });
  };
  await call(admin, "/api/admin/agency/set", { email: owner.email, name: "不变量代理" });
  for (const customer of customers)
    await call(admin, "/api/admin/agency/attach", {
      agency_email: owner.email,
      customer_email: customer.email,
    });
  const everyone = [owner, ...customers, ...others];
  // Allocations share the transfer minimum (issue 26, C8): below it they are refused and move nothing.
  await ctx.settings.update({ minPushNum: 2 });
  // The agency buys its stock by hand (an adjustment is also how an operator sells to an agency).
  await call(admin, "/api/admin/users/update_user", {
    _id: owner.user.id,
    adjust: { trafficG: 200, days: 0, walletYuan: 0, reason: "代理进货" },
  });
  const seen = new Map<string, Set<number>>();
  const expectCode = (action: string, code: number, allowed: number[]) => {
    seen.set(action, (seen.get(action) ?? new Set<number>()).add(code));
    expect({ action, code, ok: allowed.includes(code) }).toEqual({ action, code, ok: true });
  };

  for (let step = 0; step < 200; step++) {
    const roll = rand.int(100);
    if (roll < 40) {
      // An admin raises or lowers a balance; lowering below zero is refused and writes nothing.
      const who = rand.pick(everyone);
      const adjust = {
        trafficG: rand.pick([0, 5, 20, -3, -50]),
        days: rand.pick([0, 0, 7, -2]),
        walletYuan: rand.pick([0, 0, 12.34, -5, -1000]),
        reason: rand.next() < 0.95 ? "不变量测试调整" : "",
      };
      const answer = await admin.call("/api/admin/users/update_user", { _id: who.user.id, adjust });
      expectCode("update_user", answer.code, [0, 1000]);
    } else if (roll < 70) {
      // The agency gives traffic to one of its customers, sometimes three allocations at once.
      const copies = rand.next() < 0.3 ? 3 : 1;
      const answers = await Promise.all(
        Array.from({ length: copies }, () =>
          owner.client.call("/api/agency/allocate", {
            email: rand.pick(customers).email,
            trafficG: rand.pick([1e-10, 1, 2, 2.5, 10]),
          }),
        ),
      );
      for (const answer of answers) expectCode("allocate", answer.code, [0, 1037, 1038]);
    } else if (roll < 75) {
      // Someone who is not the agency's customer is refused.
      const answer = await owner.client.call("/api/agency/allocate", {
        email: rand.pick(others).email,
        trafficG: 2,
      });
      expectCode("allocate other", answer.code, [1004]);
    } else {
      const usage: Record<number, [number, number]> = {};
      for (const charged of everyone.slice(rand.int(everyone.length)).slice(0, 3))
        usage[charged.user.node_uid] = [rand.int(GB / 4), rand.int(4 * GB)];
      await chargeNode(server, agentId, usage, Date.now());
    }
  }
  const summary = [...seen].map(([action, c]) => `${action} ${[...c].sort().join("/")}`).join(", ");

  const sumOf = async (sql: string, ...params: (string | number)[]) =>
    (await db.get<{ n: number }>(sql, ...params))?.n ?? 0;
  for (const { user } of everyone) {
    const id = user.id;
    const row = await db.get<{ traffic: number; vip_expire_time: number; wallet_fen: number }>(
      "SELECT traffic, vip_expire_time, wallet_fen FROM users JOIN balances ON user_id = id WHERE id = ?",
      id,
    );
    expect({ user: id, traffic: row?.traffic, vip: row?.vip_expire_time, wallet: row?.wallet_fen }).toEqual({
      user: id,
      traffic: await sumOf(
        "SELECT COALESCE(SUM(traffic_change), 0) AS n FROM traffic_records WHERE user_id = ?",
        id,
      ),
      vip: await sumOf("SELECT COALESCE(SUM(vip_change), 0) AS n FROM traffic_records WHERE user_id = ?", id),
      wallet: await sumOf(
        "SELECT COALESCE(SUM(change_fen), 0) AS n FROM wallet_entries WHERE user_id = ?",
        id,
      ),
    });
    // Each admin adjustment's audit row says exactly what its ledger rows did.
    expect({
      user: id,
      traffic: await sumOf(
        "SELECT COALESCE(SUM(traffic_change), 0) AS n FROM traffic_records WHERE user_id = ? AND type = 'admin_adjust'",
        id,
      ),
      vip: await sumOf(
        "SELECT COALESCE(SUM(vip_change), 0) AS n FROM traffic_records WHERE user_id = ? AND type = 'admin_adjust'",
        id,
      ),
      wallet: await sumOf(
        "SELECT COALESCE(SUM(change_fen), 0) AS n FROM wallet_entries WHERE user_id = ? AND type = 'adjust'",
        id,
      ),
    }).toEqual({
      user: id,
      traffic: await sumOf(
        "SELECT COALESCE(SUM(traffic_change), 0) AS n FROM admin_adjustments WHERE user_id = ?",
        id,
      ),
      vip: await sumOf(
        "SELECT COALESCE(SUM(vip_change), 0) AS n FROM admin_adjustments WHERE user_id = ?",
        id,
      ),
      wallet: await sumOf(
        "SELECT COALESCE(SUM(wallet_change_fen), 0) AS n FROM admin_adjustments WHERE user_id = ?",
        id,
      ),
    });
  }
  // What the agency spent is what its customers were allocated, and nobody else got any.
  const spent = await sumOf(
    "SELECT COALESCE(SUM(-traffic_change), 0) AS n FROM traffic_records WHERE type = 'agency_spend' AND user_id = ?",
    owner.user.id,
  );
  const allocated = await sumOf(
    "SELECT COALESCE(SUM(traffic_change), 0) AS n FROM traffic_records WHERE type = 'agency_allocate'",
  );
  let toCustomers = 0;
  for (const c of customers) {
    toCustomers += await sumOf(
      "SELECT COALESCE(SUM(traffic_change), 0) AS n FROM traffic_records WHERE type = 'agency_allocate' AND user_id = ?",
      c.user.id,
    );
  }
  expect({ spent, allocated }).toEqual({ spent: toCustomers, allocated: toCustomers });
  expect(seen.get("update_user")?.has(0), summary).toBe(true);
  expect(seen.get("allocate")?.has(0), summary).toBe(true);
}, 120_000);
