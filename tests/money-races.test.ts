/**
 * Issue 27 §7: the money races, each through many requests at once. On PostgreSQL a second server
 * runs on the same database, and the requests alternate between the two, so two connection pools
 * (two processes' worth of writers) race; on SQLite the one server's writer queues them. Each race
 * must take effect exactly once, and every balance must equal its ledger afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonValuesSql } from "../src/db/db.ts";
import { GB } from "../src/lib/traffic.ts";
import { findAgentRow } from "../src/modules/node-record/service.ts";
import type { Order } from "../src/modules/order/schema.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import { newId } from "../src/rpc/ids.ts";
import { startServer } from "../src/server.ts";
import {
  createOrder,
  dobuy,
  giveWallet,
  makeCombo,
  makeCoupon,
  notifySandbox,
  sandboxTradeNo,
  startShopServer,
  walletFen,
} from "./commerce.ts";
import { ApiClient, loggedInClient, type TestServer, uniqueEmail } from "./harness.ts";
import { ledgerMismatches } from "./ledgers.ts";
import { saveNode } from "./nodes.ts";
import { testDatabaseOf } from "./pg.ts";
import { makeChargingNode, pullUserListOf, recordTraffic } from "./traffic.ts";

let first: TestServer;
/** On PostgreSQL another server on the same database; on SQLite the first server again. */
let second: TestServer;
let servers: TestServer[];

/** A second server process's worth of state (its own pool, caches and limiter) on the first one's database. */
async function startSecondServer(server: TestServer): Promise<TestServer> {
  const databaseUrl = testDatabaseOf(server.dataDir);
  if (!databaseUrl) return server;
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-test-second-"));
  const running = await startServer({
    dataDir,
    databaseUrl,
    host: "127.0.0.1",
    port: 0,
    rateLimitScale: 1000,
    allowPrivateUrls: true,
  });
  return {
    ...running,
    dataDir,
    async close() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

beforeAll(async () => {
  first = await startShopServer();
  await first.context.settings.update({ min_charge_money: 5, openChannel: true });
  // Settings are all made before the second server starts, so both read the same.
  second = await startSecondServer(first);
  servers = [first, second];
});
afterAll(async () => {
  if (second !== first) await second?.close();
  await first?.close();
});

/** The i-th of many racing requests goes to this server: they alternate. */
const serverFor = (i: number) => servers[i % servers.length] as TestServer;

/** The same logged-in customer talking to another server (the session is in the shared database). */
function sameCustomerOn(client: ApiClient, server: TestServer): ApiClient {
  const other = new ApiClient(server.url);
  for (const [name, value] of client.cookies) other.cookies.set(name, value);
  return other;
}

/** `count` copies of a call at once, alternating between the servers. */
async function atOnce<T>(count: number, call: (server: TestServer, i: number) => Promise<T>): Promise<T[]> {
  return await Promise.all(Array.from({ length: count }, (_, i) => call(serverFor(i), i)));
}

const db = () => first.context.db;
const count = async (sql: string, ...params: string[]) =>
  (await db().get<{ n: number }>(sql, ...params))?.n ?? Number.NaN;

describe("money races", () => {
  test("one sandbox payment notified 50 times at once credits the order, the rebate and the ledgers once", async () => {
    const owner = await loggedInClient(first);
    const admin = (await loggedInClient(first, { role: "admin" })).client;
    const channel = await admin.call("/api/admin/users/update_channel", {
      email: owner.email,
      name: "竞争渠道",
      code: "RACE50",
      rewardRate: 0.15,
      comsumerDuration: 30,
    });
    expect({ code: channel.code, msg: channel.msg }).toEqual({ code: 0, msg: channel.msg });
    const customer = await loggedInClient(first);
    await db().run("UPDATE users SET channel_code = ? WHERE id = ?", "RACE50", customer.user.id);
    const combo = await makeCombo(first, { name: "十G月付", price: 10.1, traffic: 10 * GB });
    const order = await createOrder(customer.client, combo._id);
    const pay = await dobuy(customer.client, order._id);
    expect(pay.code).toBe(0);
    const tradeNo = sandboxTradeNo(pay.data);

    const answers = await atOnce(50, (server) => notifySandbox(server, tradeNo, 1010));
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(303));

    // A repeated event is counted on its row (repeat_count), not stored again.
    const events = await db().all<{ result: string; n: number }>(
      "SELECT result, SUM(repeat_count) AS n FROM payment_events WHERE trade_no = ? GROUP BY result ORDER BY result",
      tradeNo,
    );
    expect(events).toEqual([
      { result: "credited", n: 1 },
      { result: "duplicate", n: 49 },
    ]);
    expect(
      await count("SELECT COUNT(*) AS n FROM traffic_records WHERE order_id = ? AND type = 'buy'", order._id),
    ).toBe(1);
    expect(
      await count("SELECT COUNT(*) AS n FROM payments WHERE order_id = ? AND status = 'paid'", order._id),
    ).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM channel_rewards WHERE order_id = ?", order._id)).toBe(1);
    expect(
      (await db().get<{ status: string }>("SELECT status FROM orders WHERE id = ?", order._id))?.status,
    ).toBe("paied");
    expect(await walletFen(first, owner.user.id)).toBe(152);
    expect((await customer.client.ok<{ traffic: number }>("/api/user/userinfo")).traffic).toBe(10 * GB);
    expect(await ledgerMismatches(db(), [customer.user.id, owner.user.id])).toEqual([]);
  });

  test("a payment notified 10 times while the order is cancelled twice, at once: either paid once or cancelled once", async () => {
    const customer = await loggedInClient(first);
    await giveWallet(first, customer.user.id, 300);
    const combo = await makeCombo(first, { name: "五G", price: 8, traffic: 5 * GB });
    const order = await createOrder(customer.client, combo._id);
    expect((await customer.client.call("/api/shop/wallet_check", { order_id: order._id })).code).toBe(0);
    const pay = await dobuy(customer.client, order._id);
    expect(pay.code).toBe(0);
    const tradeNo = sandboxTradeNo(pay.data);

    const [notified, cancelled] = await Promise.all([
      atOnce(10, (server) => notifySandbox(server, tradeNo, 500)),
      atOnce(2, (server) =>
        sameCustomerOn(customer.client, server).call("/api/order/cancel_order", { order_id: order._id }),
      ),
    ]);
    expect(notified.map((answer) => answer.status)).toEqual(Array(10).fill(303));
    const status = (await db().get<{ status: string }>("SELECT status FROM orders WHERE id = ?", order._id))
      ?.status;
    const events = await db().all<{ result: string; n: number }>(
      "SELECT result, SUM(repeat_count) AS n FROM payment_events WHERE trade_no = ? GROUP BY result ORDER BY result",
      tradeNo,
    );
    const buys = await count(
      "SELECT COUNT(*) AS n FROM traffic_records WHERE order_id = ? AND type = 'buy'",
      order._id,
    );
    const refunds = await count(
      "SELECT COUNT(*) AS n FROM wallet_entries WHERE order_id = ? AND type = 'order_refund'",
      order._id,
    );
    const cancelCodes = cancelled.map((answer) => answer.code).sort();
    if (status === "paied") {
      expect({ cancelCodes, buys, refunds, wallet: await walletFen(first, customer.user.id) }).toEqual({
        cancelCodes: [1026, 1026],
        buys: 1,
        refunds: 0,
        wallet: 0,
      });
      expect(events).toEqual([
        { result: "credited", n: 1 },
        { result: "duplicate", n: 9 },
      ]);
    } else {
      // Cancelled first: the money that arrived is an anomaly for the operator, nothing is credited.
      expect({
        status,
        cancelCodes,
        buys,
        refunds,
        wallet: await walletFen(first, customer.user.id),
      }).toEqual({
        status: "cancled",
        cancelCodes: [0, 1026],
        buys: 0,
        refunds: 1,
        wallet: 300,
      });
      expect(events).toEqual([{ result: "anomaly", n: 10 }]);
    }
    expect(await ledgerMismatches(db(), [customer.user.id])).toEqual([]);
  });

  test("the last use of a cash coupon, raced by 20 customers' orders at once, goes to exactly one", async () => {
    const coupon = await makeCoupon(first, {
      type: "cash",
      code: "LASTCASH",
      forMoney: 3,
      useNumPerUser: 1,
      NumberOfAuthorizations: 3,
    });
    const combo = await makeCombo(first, { name: "一G", price: 5, traffic: GB });
    // Two of its three uses go first, one by one.
    for (let i = 0; i < 2; i += 1) {
      const early = await loggedInClient(first);
      const order = await createOrder(early.client, combo._id);
      expect(
        (await early.client.call("/api/coupon/orderUseCoupon", { order_id: order._id, code: "LASTCASH" }))
          .code,
      ).toBe(0);
    }
    const racers = await Promise.all(Array.from({ length: 20 }, () => loggedInClient(first)));
    const orders = await Promise.all(racers.map(({ client }) => createOrder(client, combo._id)));

    const answers = await atOnce(20, (server, i) =>
      sameCustomerOn((racers[i] as (typeof racers)[number]).client, server).call<Order>(
        "/api/coupon/orderUseCoupon",
        {
          order_id: (orders[i] as Order)._id,
          code: "LASTCASH",
        },
      ),
    );
    const codes = answers.map((answer) => answer.code);
    expect(codes.filter((code) => code === 0)).toHaveLength(1);
    expect(codes.filter((code) => code === 1017)).toHaveLength(19);
    expect(await count("SELECT auth_times AS n FROM coupons WHERE id = ?", coupon._id)).toBe(3);
    expect(
      await count("SELECT COUNT(*) AS n FROM coupon_uses WHERE coupon_id = ? AND is_delete = 0", coupon._id),
    ).toBe(3);
    const discounted = await db().all<{ id: string }>(
      "SELECT id FROM orders WHERE coupon_code = 'LASTCASH' AND coupon_discount_fen = 300",
    );
    expect(discounted).toHaveLength(3);
    const winner = answers.findIndex((answer) => answer.code === 0);
    expect(discounted.map((row) => row.id)).toContain((orders[winner] as Order)._id);
  });

  test("the last use of a voucher (体验券), redeemed by 20 customers at once, goes to exactly one", async () => {
    const voucher = await makeCoupon(first, {
      type: "freeUse",
      code: "LASTTRY",
      trafficG: 2,
      useNumPerUser: 1,
      NumberOfAuthorizations: 2,
    });
    const early = await loggedInClient(first);
    expect((await early.client.call("/api/coupon/redeem_coupon", { code: "LASTTRY" })).code).toBe(0);
    const racers = await Promise.all(Array.from({ length: 20 }, () => loggedInClient(first)));

    const answers = await atOnce(20, (server, i) =>
      sameCustomerOn((racers[i] as (typeof racers)[number]).client, server).call(
        "/api/coupon/redeem_coupon",
        {
          code: "LASTTRY",
        },
      ),
    );
    const codes = answers.map((answer) => answer.code);
    expect(codes.filter((code) => code === 0)).toHaveLength(1);
    expect(codes.filter((code) => code === 1027)).toHaveLength(19);
    expect(await count("SELECT auth_times AS n FROM coupons WHERE id = ?", voucher._id)).toBe(2);
    expect(await count("SELECT COUNT(*) AS n FROM coupon_uses WHERE coupon_id = ?", voucher._id)).toBe(2);
    const ids = [early.user.id, ...racers.map(({ user }) => user.id)];
    const credited = await db().all<{ user_id: string }>(
      "SELECT user_id FROM traffic_records WHERE type = 'coupon' AND traffic_change = ?",
      2 * GB,
    );
    expect(credited.filter((row) => ids.includes(row.user_id))).toHaveLength(2);
    expect(await ledgerMismatches(db(), ids)).toEqual([]);
  });

  test("two withdrawals of one wallet at once: one takes the whole balance, the other is refused", async () => {
    const owner = await loggedInClient(first);
    const address = await owner.client.call("/api/wallet/change_reward_adress", {
      addressType: "USDT-TRC20",
      address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
    });
    expect(address.code).toBe(0);
    await giveWallet(first, owner.user.id, 2345);

    const answers = await atOnce(2, (server) =>
      sameCustomerOn(owner.client, server).call("/api/wallet/make_charge"),
    );
    expect(answers.map((answer) => answer.code).sort()).toEqual([0, 1012]);
    expect(await walletFen(first, owner.user.id)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM withdrawals WHERE user_id = ?", owner.user.id)).toBe(1);
    expect(await count("SELECT money_fen AS n FROM withdrawals WHERE user_id = ?", owner.user.id)).toBe(2345);
    expect(await ledgerMismatches(db(), [owner.user.id])).toEqual([]);
  });

  test("a withdrawal and a wallet payment of one wallet at once never spend more than it holds", async () => {
    const owner = await loggedInClient(first);
    await owner.client.call("/api/wallet/change_reward_adress", {
      addressType: "USDT-TRC20",
      address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
    });
    await giveWallet(first, owner.user.id, 800);
    const combo = await makeCombo(first, { name: "五元", price: 5, traffic: GB });
    const order = await createOrder(owner.client, combo._id);

    const [withdrawal, walletPay] = await Promise.all([
      sameCustomerOn(owner.client, serverFor(0)).call("/api/wallet/make_charge"),
      sameCustomerOn(owner.client, serverFor(1)).call<Order>("/api/shop/wallet_check", {
        order_id: order._id,
      }),
    ]);
    expect(walletPay?.code).toBe(0);
    const withdrawn = await count(
      "SELECT COALESCE(SUM(money_fen), 0) AS n FROM withdrawals WHERE user_id = ?",
      owner.user.id,
    );
    const spent = (
      await db().get<{ wallet_spend_fen: number }>(
        "SELECT wallet_spend_fen FROM orders WHERE id = ?",
        order._id,
      )
    )?.wallet_spend_fen as number;
    // Whichever went first took what it could; together they took the 8 yuan at most once.
    expect({ code: withdrawal?.code, withdrew: withdrawn > 0 }).toEqual(
      withdrawal?.code === 0 ? { code: 0, withdrew: true } : { code: 1012, withdrew: false },
    );
    expect(withdrawn + spent).toBeLessThanOrEqual(800);
    expect(await walletFen(first, owner.user.id)).toBe(800 - withdrawn - spent);
    expect(await ledgerMismatches(db(), [owner.user.id])).toEqual([]);
  });

  test("checking in 10 times at once credits one check-in", async () => {
    const customer = await loggedInClient(first);
    await db().run("UPDATE users SET paid_user = 1 WHERE id = ?", customer.user.id);

    const answers = await atOnce(10, (server) =>
      sameCustomerOn(customer.client, server).call("/api/user/sign_use"),
    );
    const codes = answers.map((answer) => answer.code);
    expect(codes.filter((code) => code === 0)).toHaveLength(1);
    expect(codes.filter((code) => code === 1005)).toHaveLength(9);
    expect(await count("SELECT COUNT(*) AS n FROM sign_uses WHERE user_id = ?", customer.user.id)).toBe(1);
    expect(
      await count(
        "SELECT COALESCE(SUM(traffic_change), 0) AS n FROM traffic_records WHERE user_id = ? AND type = 'sign_use'",
        customer.user.id,
      ),
    ).toBe(
      await count(
        "SELECT COALESCE(SUM(add_traffic), 0) AS n FROM sign_uses WHERE user_id = ?",
        customer.user.id,
      ),
    );
    expect(await ledgerMismatches(db(), [customer.user.id])).toEqual([]);
  });

  test("a node report whose id is replayed 20 times at once is charged once", async () => {
    const agentId = await makeChargingNode(first, await first.context.settings.get("timezone"));
    const node = await findAgentRow(first.context, agentId);
    if (!node) throw new Error("no node");
    const customers = [await loggedInClient(first), await loggedInClient(first)];
    for (const { user } of customers) await recordTraffic(first, user.id, "buy", 10 * GB);
    await pullUserListOf(first, agentId);
    const body = JSON.stringify(
      Object.fromEntries(customers.map(({ user }, i) => [user.node_uid, [100_000 * (i + 1), 3_000_000]])),
    );
    const reportId = newId();

    const answers = await atOnce(20, async (server) => {
      const query = new URLSearchParams({
        token: node.api_token,
        node_id: String(node.node_no),
        node_type: "ferry",
        inbound: "vmesh_tcp",
      });
      const response = await fetch(`${server.url}/api/v1/server/UniProxy/push?${query}`, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "x-request-id": reportId,
          "user-agent": "ferry-agent/9.9.9",
        },
      });
      return {
        status: response.status,
        body: (await response.json()) as { duplicate?: boolean; charged?: number },
      };
    });
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((answer) => answer.body.duplicate === false)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.duplicate === true)).toHaveLength(19);
    const charged = answers.find((answer) => answer.body.duplicate === false)?.body.charged;
    expect(charged).toBe(100_000 + 3_000_000 + 200_000 + 3_000_000);
    expect(await count("SELECT COUNT(*) AS n FROM node_reports WHERE report_id = ?", reportId)).toBe(1);
    for (const [i, { user }] of customers.entries()) {
      const spent = 100_000 * (i + 1) + 3_000_000;
      expect(await count("SELECT traffic AS n FROM balances WHERE user_id = ?", user.id)).toBe(
        10 * GB - spent,
      );
      expect(
        await count("SELECT COALESCE(SUM(permanent), 0) AS n FROM usage_days WHERE user_id = ?", user.id),
      ).toBe(spent);
    }
    expect(
      await ledgerMismatches(
        db(),
        customers.map(({ user }) => user.id),
      ),
    ).toEqual([]);
  });
});

describe("numbering races", () => {
  test("20 sign-ups at once each get their own node number", async () => {
    const emails = Array.from({ length: 20 }, () => uniqueEmail("numbered"));
    const answers = await atOnce(20, (server, i) =>
      new ApiClient(server.url).call("/api/user/signup", {
        email: emails[i],
        password: transformPassword("correct-horse-1"),
      }),
    );
    expect(answers.map((answer) => answer.code)).toEqual(Array(20).fill(0));
    const numbers = await db().all<{ node_uid: number | null }>(
      `SELECT node_uid FROM users WHERE email IN ${jsonValuesSql(db(), "?", "text")}`,
      JSON.stringify(emails),
    );
    expect(numbers).toHaveLength(20);
    expect(new Set(numbers.map((row) => row.node_uid)).size).toBe(20);
    expect(numbers.every((row) => Number.isInteger(row.node_uid) && (row.node_uid as number) > 0)).toBe(true);
  });

  test("10 nodes saved at once each get their own node number", async () => {
    const saved = await atOnce(10, (server, i) =>
      saveNode(server, { name: `并发 ${i}`, country: { code: "JP" }, ip: `203.0.113.${100 + i}` }),
    );
    const numbers = await db().all<{ node_no: number }>(
      `SELECT node_no FROM agents WHERE id IN ${jsonValuesSql(db(), "?", "text")}`,
      JSON.stringify(saved.map((agent) => agent._id)),
    );
    expect(numbers).toHaveLength(10);
    expect(new Set(numbers.map((row) => row.node_no)).size).toBe(10);
  });
});
