/**
 * Issue 26, items 4 and 5: create_order hands back the customer's open order for the same combo
 * instead of making another, unless that order can no longer stand for a new one (coupon on it,
 * wallet part taken, the combo's terms changed, close to the sweeper's cut, cancelled or paid);
 * concurrent calls leave one order; new orders are limited per account (1005); and the server's
 * sweeper cancels what stayed unpaid for a day, giving the coupon use and the wallet part back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createOrder,
  dobuy,
  giveWallet,
  makeCombo,
  makeCoupon,
  notifySandbox,
  orderIds,
  paymentEvents,
  payWithSandbox,
  sandboxTradeNo,
  startShopServer,
  walletFen,
} from "../../../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../../../tests/harness.ts";
import { refuseWrites } from "../../../tests/refuse-writes.ts";
import { HOUR_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { Code } from "../../rpc/codes.ts";
import { startServer } from "../../server.ts";
import { type Combo, comboInput } from "../combo/schema.ts";
import { deleteCombo, saveCombo } from "../combo/service.ts";
import { transformPassword } from "../user/password.ts";
import { createUser } from "../user/service.ts";
import { type Order, OrderMsg } from "./schema.ts";
import {
  cancelAbandonedOrders,
  createOrder as makeOrder,
  ORDERS_PER_HOUR,
  UNPAID_ORDER_MS,
} from "./service.ts";
import { startOrderSweeper } from "./sweeper.ts";

let server: TestServer;
let combo: Combo;

beforeAll(async () => {
  server = await startShopServer();
  combo = await makeCombo(server, { name: "15 元 100G", price: 15, traffic: 100 * GB });
});
afterAll(async () => {
  await server?.close();
});

const db = () => server.context.db;

interface OrderState {
  status: string;
  coupon_use_id: string | null;
  wallet_spend_fen: number;
}

const orderState = async (orderId: string) =>
  await db().get<OrderState>(
    "SELECT status, coupon_use_id, wallet_spend_fen FROM orders WHERE id = ?",
    orderId,
  );

/** Moves an order (and its payment attempts) back in time, as if made `ms` ago. */
async function age(orderId: string, ms: number) {
  await db().run("UPDATE orders SET create_time = create_time - ? WHERE id = ?", ms, orderId);
  await db().run("UPDATE payments SET create_time = create_time - ? WHERE order_id = ?", ms, orderId);
}

async function walletEntries(userId: string) {
  return await db().all<{ type: string; change_fen: number; desc: string; order_id: string | null }>(
    'SELECT type, change_fen, "desc", order_id FROM wallet_entries WHERE user_id = ? ORDER BY id',
    userId,
  );
}

/** Σ wallet entries = the balance, for the customer (the ledger invariant). */
async function expectWalletLedgerHolds(userId: string) {
  const sum = (await walletEntries(userId)).reduce((total, entry) => total + entry.change_fen, 0);
  expect(await walletFen(server, userId)).toBe(sum);
}

const couponUses = async (couponId: string) =>
  (await db().get<{ auth_times: number }>("SELECT auth_times FROM coupons WHERE id = ?", couponId))
    ?.auth_times;

describe("create_order hands back the open order", () => {
  test("opening the dialog four times makes one order; another combo makes its own", async () => {
    const buyer = await loggedInClient(server);
    const first = await createOrder(buyer.client, combo._id);
    for (let i = 0; i < 3; i++) expect((await createOrder(buyer.client, combo._id))._id).toBe(first._id);
    expect(await orderIds(server, buyer.user.id)).toEqual([first._id]);

    const other = await makeCombo(server, { name: "30 元", price: 30, traffic: 200 * GB });
    const second = await createOrder(buyer.client, other._id);
    expect(second._id).not.toBe(first._id);
    expect((await orderIds(server, buyer.user.id)).sort()).toEqual([first._id, second._id].sort());
    // Another customer's open order is never handed to this one.
    const stranger = await loggedInClient(server);
    expect((await createOrder(stranger.client, combo._id))._id).not.toBe(first._id);
  });

  test("an order with a coupon on it or a wallet part taken stays the customer's to pay, and a new one is made", async () => {
    const buyer = await loggedInClient(server);
    await makeCoupon(server, { type: "cash", code: "REUSE2", forMoney: 2, NumberOfAuthorizations: 0 });
    const withCoupon = await createOrder(buyer.client, combo._id);
    const applied = await buyer.client.call<Order>("/api/coupon/orderUseCoupon", {
      order_id: withCoupon._id,
      code: "REUSE2",
    });
    expect(applied.code).toBe(0);
    const afterCoupon = await createOrder(buyer.client, combo._id);
    expect(afterCoupon._id).not.toBe(withCoupon._id);
    expect(afterCoupon).toMatchObject({ coupon_code: "", pay_money: 15 });

    await giveWallet(server, buyer.user.id, 500);
    const checked = await buyer.client.call<Order>("/api/shop/wallet_check", { order_id: afterCoupon._id });
    expect(checked.data).toMatchObject({ status: "wallet_spend", wallet_spend: 5 });
    const afterWallet = await createOrder(buyer.client, combo._id);
    expect(new Set([withCoupon._id, afterCoupon._id, afterWallet._id]).size).toBe(3);
    expect(afterWallet).toMatchObject({ status: "topay", wallet_spend: 0 });
    // Both earlier orders are still open and payable.
    expect([(await orderState(withCoupon._id))?.status, (await orderState(afterCoupon._id))?.status]).toEqual(
      ["topay", "wallet_spend"],
    );
  });

  test("a changed price, credit or name makes a new order; the old one keeps what it was sold", async () => {
    const buyer = await loggedInClient(server);
    const own = await makeCombo(server, { name: "会变的套餐", price: 10, traffic: 50 * GB });
    const first = await createOrder(buyer.client, own._id);

    await makeCombo(server, { _id: own._id, name: "会变的套餐", price: 12, traffic: 50 * GB });
    const pricier = await createOrder(buyer.client, own._id);
    expect(pricier._id).not.toBe(first._id);
    expect(pricier.order_money).toBe(12);

    await makeCombo(server, { _id: own._id, name: "会变的套餐", price: 12, traffic: 60 * GB });
    const bigger = await createOrder(buyer.client, own._id);
    expect(bigger._id).not.toBe(pricier._id);
    expect(bigger.add_traffic).toBe(60 * GB);

    await makeCombo(server, { _id: own._id, name: "改了名的套餐", price: 12, traffic: 60 * GB });
    const renamed = await createOrder(buyer.client, own._id);
    expect(renamed._id).not.toBe(bigger._id);
    expect(renamed.desc).toBe("改了名的套餐");
    // Unchanged since: handed back.
    expect((await createOrder(buyer.client, own._id))._id).toBe(renamed._id);

    // Deleted: no new order, but the open one can still be paid and credits what it was sold.
    await deleteCombo(server.context, own._id);
    const gone = await buyer.client.call("/api/shop/create_order", { combo_id: own._id });
    expect(gone.code).toBe(Code.notFound);
    await payWithSandbox(server, buyer.client, first._id);
    expect((await orderState(first._id))?.status).toBe("paied");
    const info = await buyer.client.ok<{ traffic: number }>("/api/user/userinfo");
    expect(info.traffic).toBe(50 * GB);
  });

  test("cancelled, paid and nearly day-old orders are not handed back", async () => {
    const buyer = await loggedInClient(server);
    const cancelled = await createOrder(buyer.client, combo._id);
    expect((await buyer.client.call("/api/order/cancel_order", { order_id: cancelled._id })).code).toBe(0);
    const paid = await createOrder(buyer.client, combo._id);
    expect(paid._id).not.toBe(cancelled._id);
    await payWithSandbox(server, buyer.client, paid._id);
    const old = await createOrder(buyer.client, combo._id);
    expect(old._id).not.toBe(paid._id);
    // 22 h old: still handed back; 23 h old: an hour before the sweeper's cut, a new one is made.
    await age(old._id, 22 * HOUR_MS);
    expect((await createOrder(buyer.client, combo._id))._id).toBe(old._id);
    await age(old._id, HOUR_MS);
    const fresh = await createOrder(buyer.client, combo._id);
    expect(fresh._id).not.toBe(old._id);
    expect(await orderIds(server, buyer.user.id)).toHaveLength(4);
  });

  test("20 create_order at once leave one open order", async () => {
    const buyer = await loggedInClient(server);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        buyer.client.call<Order>("/api/shop/create_order", { combo_id: combo._id }),
      ),
    );
    expect(new Set(answers.map((answer) => answer.code))).toEqual(new Set([0]));
    expect(new Set(answers.map((answer) => answer.data._id)).size).toBe(1);
    expect(await orderIds(server, buyer.user.id)).toHaveLength(1);
  });
});

describe("new orders are limited per account (limits at their real size)", () => {
  test(`100 create_order in a row: refused with 1005 after ${ORDERS_PER_HOUR.max} new orders, rows bounded`, async () => {
    const strict = await startShopServer({ rateLimitScale: 1 });
    try {
      const combos = await Promise.all(
        Array.from({ length: 4 }, async (_, i) => await makeCombo(strict, { name: `限 ${i}`, price: 5 + i })),
      );
      const buyer = await loggedInClient(strict);
      const codes: number[] = [];
      const messages = new Set<string>();
      // A customer who gives up each order at once, so every call asks for a new one.
      for (let i = 0; i < 100; i++) {
        const answer = await buyer.client.call<Order>("/api/shop/create_order", {
          combo_id: combos[i % combos.length]?._id,
        });
        codes.push(answer.code);
        if (answer.code !== 0) messages.add(answer.msg);
        else await buyer.client.ok("/api/order/cancel_order", { order_id: answer.data._id });
      }
      expect(codes).toEqual([
        ...Array(ORDERS_PER_HOUR.max).fill(0),
        ...Array(100 - ORDERS_PER_HOUR.max).fill(Code.tooManyRequests),
      ]);
      expect([...messages]).toEqual([OrderMsg.tooManyOrders]);
      const rows = await strict.context.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM orders WHERE user_id = ?",
        buyer.user.id,
      );
      expect(rows?.n).toBe(ORDERS_PER_HOUR.max);

      // Handing back an open order makes none, so it is never refused; other accounts are not limited.
      const keeper = await loggedInClient(strict);
      const kept = await createOrder(keeper.client, combos[0]?._id as string);
      for (let i = 0; i < 100; i++)
        expect((await createOrder(keeper.client, combos[0]?._id as string))._id).toBe(kept._id);
    } finally {
      await strict.close();
    }
  });
});

describe("the order sweeper", () => {
  test("cancels what stayed unpaid for a day: the coupon use and the wallet part come back through the ledger", async () => {
    const buyer = await loggedInClient(server);
    const coupon = await makeCoupon(server, {
      type: "cash",
      code: "SWEPT3",
      forMoney: 3,
      NumberOfAuthorizations: 5,
    });
    await giveWallet(server, buyer.user.id, 700);
    const abandoned = await createOrder(buyer.client, combo._id);
    await buyer.client.ok("/api/coupon/orderUseCoupon", { order_id: abandoned._id, code: "SWEPT3" });
    await buyer.client.ok("/api/shop/wallet_check", { order_id: abandoned._id });
    const pay = await dobuy(buyer.client, abandoned._id);
    const lateTrade = sandboxTradeNo(pay.data);
    expect(await orderState(abandoned._id)).toMatchObject({ status: "wallet_spend", wallet_spend_fen: 700 });
    expect(await couponUses(coupon._id)).toBe(1);
    expect(await walletFen(server, buyer.user.id)).toBe(0);

    const paid = await createOrder(buyer.client, combo._id);
    await payWithSandbox(server, buyer.client, paid._id);
    const now = Date.now();
    await age(abandoned._id, UNPAID_ORDER_MS + 1000);
    await age(paid._id, 2 * UNPAID_ORDER_MS);

    expect(await cancelAbandonedOrders(server.context, now)).toBe(1);
    expect(await orderState(abandoned._id)).toEqual({
      status: "cancled",
      coupon_use_id: null,
      wallet_spend_fen: 0,
    });
    expect((await orderState(paid._id))?.status).toBe("paied");
    expect(await couponUses(coupon._id)).toBe(0);
    expect(await walletFen(server, buyer.user.id)).toBe(700);
    expect((await walletEntries(buyer.user.id)).slice(1)).toEqual([
      { type: "order_spend", change_fen: -700, desc: "购买 15 元 100G", order_id: abandoned._id },
      {
        type: "order_refund",
        change_fen: 700,
        desc: OrderMsg.expiredRefundDesc("15 元 100G"),
        order_id: abandoned._id,
      },
    ]);
    await expectWalletLedgerHolds(buyer.user.id);
    // Once only.
    expect(await cancelAbandonedOrders(server.context, now)).toBe(0);
    expect(await walletFen(server, buyer.user.id)).toBe(700);

    // The old attempt's money arriving anyway is logged for a refund by hand, nothing credited.
    expect((await notifySandbox(server, lateTrade, 500)).status).toBe(303);
    expect((await paymentEvents(server, lateTrade)).map((event) => event.result)).toEqual(["anomaly"]);
    expect(await walletFen(server, buyer.user.id)).toBe(700);
  });

  test("an order younger than a day, or with a payment attempt younger than a day, is left open", async () => {
    const buyer = await loggedInClient(server);
    const young = await createOrder(buyer.client, combo._id);
    await age(young._id, UNPAID_ORDER_MS - 60_000);
    const tried = await createOrder(
      buyer.client,
      (await makeCombo(server, { name: "刚付款", price: 2 }))._id,
    );
    await age(tried._id, 3 * UNPAID_ORDER_MS);
    const pay = await dobuy(buyer.client, tried._id);
    expect(pay.code).toBe(0); // the customer is paying it right now
    await cancelAbandonedOrders(server.context);
    expect([(await orderState(young._id))?.status, (await orderState(tried._id))?.status]).toEqual([
      "topay",
      "topay",
    ]);
  });

  test("a failing round goes to the error log as 'order sweeper' and changes nothing", async () => {
    const buyer = await loggedInClient(server);
    await giveWallet(server, buyer.user.id, 300);
    const order = await createOrder(
      buyer.client,
      (await makeCombo(server, { name: "扫不动", price: 9 }))._id,
    );
    await buyer.client.ok("/api/shop/wallet_check", { order_id: order._id });
    await age(order._id, 2 * UNPAID_ORDER_MS);
    const allowCancel = await refuseWrites(db(), {
      name: "refuse_cancel",
      event: "UPDATE OF status",
      table: "orders",
      message: "disk says no",
    });
    const errors = async () =>
      (await db().all<{ msg: string }>("SELECT msg FROM error_logs WHERE name = 'order sweeper'")).map(
        (row) => row.msg,
      );
    const sweeper = await startOrderSweeper(server.context, 20);
    try {
      for (let i = 0; i < 200 && (await errors()).length === 0; i++) await Bun.sleep(10);
    } finally {
      await sweeper.stop();
      await allowCancel();
    }
    expect(await errors()).toEqual(["disk says no"]);
    expect((await orderState(order._id))?.status).toBe("wallet_spend");
    expect(await walletFen(server, buyer.user.id)).toBe(0);
    await expectWalletLedgerHolds(buyer.user.id);
  });

  test("`ferry serve` runs it: a day-old unpaid order is cancelled when the server starts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ferry-sweep-"));
    try {
      const first = await startServer({ dataDir, host: "127.0.0.1", port: 0 });
      const ctx = first.context;
      await ctx.settings.update({ sandbox_pay: true, alipay: "sandbox" });
      const user = await createUser(ctx, {
        email: "sweep@example.com",
        passwordDigest: transformPassword("password123"),
      });
      const own = await saveCombo(
        ctx,
        comboInput.parse({ name: "隔夜", price: 8, traffic: GB, vipDuration: 0 }),
      );
      const order = await makeOrder(ctx, user, own._id, Date.now() - 2 * UNPAID_ORDER_MS);
      await first.stop();

      const second = await startServer({ dataDir, host: "127.0.0.1", port: 0 });
      try {
        const status = async () =>
          (
            await second.context.db.get<{ status: string }>(
              "SELECT status FROM orders WHERE id = ?",
              order._id,
            )
          )?.status;
        for (let i = 0; i < 200 && (await status()) !== "cancled"; i++) await Bun.sleep(10);
        expect(await status()).toBe("cancled");
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
