/**
 * Orders over real HTTP: the wallet rule of seed 000 §5, coupons on orders with every error code
 * of seed 000 §8, cancel, feedback, create_order and what paying credits (DESIGN §7). Payments go
 * through the sandbox gateway's notification route and markPaid.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  copyOrders,
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
import { tx } from "../../db/db.ts";
import { businessDay, DAY_MS } from "../../lib/time.ts";
import { DEFAULT_DAILY_LIMIT, GB } from "../../lib/traffic.ts";
import { settleWithoutGateway } from "../../payments/credit.ts";
import { newId } from "../../rpc/ids.ts";
import type { Combo } from "../combo/schema.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { PermissionGrant, UserInfo } from "../user/schema.ts";
import { type Order, type OrderListPage, OrderMsg, type PayResult, type TradeStatus } from "./schema.ts";
import { walletDeductionFen } from "./service.ts";

let server: TestServer;
let combo15: Combo;

beforeAll(async () => {
  server = await startShopServer();
  combo15 = await makeCombo(server, { name: "15 元 100G", price: 15, traffic: 100 * GB });
});
afterAll(async () => {
  await server?.close();
});

const db = () => server.context.db;
const fen = (yuan: number) => Math.round(yuan * 100);

async function walletEntries(userId: string) {
  return await db().all<{ type: string; change_fen: number; balance_fen: number; order_id: string | null }>(
    "SELECT type, change_fen, balance_fen, order_id FROM wallet_entries WHERE user_id = ? ORDER BY id",
    userId,
  );
}

async function couponState(couponId: string) {
  const coupon = await db().get<{ auth_times: number }>(
    "SELECT auth_times FROM coupons WHERE id = ?",
    couponId,
  );
  const uses = await db().all<{ order_id: string; is_delete: number }>(
    "SELECT order_id, is_delete FROM coupon_uses WHERE coupon_id = ? ORDER BY time, id",
    couponId,
  );
  return { authTimes: coupon?.auth_times, uses };
}

async function userInfo(client: Awaited<ReturnType<typeof loggedInClient>>["client"]): Promise<UserInfo> {
  const answer = await client.call<UserInfo>("/api/user/userinfo");
  expect(answer.code).toBe(0);
  return answer.data;
}

describe("wallet deduction (seed 000 §5)", () => {
  test("walletDeductionFen at each boundary", () => {
    const cases: [balance: number, payable: number, deducted: number][] = [
      // balance covers the payable: all of it
      [2000, 1500, 1500],
      [1500, 1500, 1500],
      // short by less than 1 yuan: payable − 1 yuan, so 1 yuan is paid online
      [1499, 1500, 1400],
      [1401, 1500, 1400],
      // short by exactly 1 yuan or more: the whole balance
      [1400, 1500, 1400],
      [1000, 1500, 1000],
      [1, 1500, 1],
      // nothing in the wallet
      [0, 1500, 0],
      // payable under 1 yuan: covered or nothing
      [50, 50, 50],
      [80, 50, 50],
      [49, 50, 0],
      [0, 50, 0],
      // nothing to pay
      [500, 0, 0],
    ];
    for (const [balance, payable, deducted] of cases)
      expect({ balance, payable, deducted: walletDeductionFen(balance, payable) }).toEqual({
        balance,
        payable,
        deducted,
      });
  });

  async function walletCheckWith(balanceYuan: number, priceYuan = 15) {
    const buyer = await loggedInClient(server);
    if (balanceYuan > 0) await giveWallet(server, buyer.user.id, fen(balanceYuan));
    const combo =
      priceYuan === 15 ? combo15 : await makeCombo(server, { name: `${priceYuan} 元`, price: priceYuan });
    const order = await createOrder(buyer.client, combo._id);
    const checked = await buyer.client.call<Order>("/api/shop/wallet_check", { order_id: order._id });
    expect(checked.code).toBe(0);
    return { buyer, order: checked.data };
  }

  test("balance ≥ payable: the wallet pays everything and dobuy credits at once", async () => {
    const { buyer, order } = await walletCheckWith(20);
    expect(order).toMatchObject({ status: "wallet_spend", wallet_spend: 15, pay_money: 0 });
    expect(await walletFen(server, buyer.user.id)).toBe(500);

    const pay = await dobuy(buyer.client, order._id);
    expect(pay.code).toBe(0);
    expect(pay.data).toMatchObject({ status: "paied", add_traffic: 100 * GB, qrcode: "", payurl: "" });
    const status = await buyer.client.call<TradeStatus>("/api/shop/trade_status", { trade_id: order._id });
    expect(status.data.status).toBe("paied");
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
    expect(await walletEntries(buyer.user.id)).toEqual([
      { type: "adjust", change_fen: 2000, balance_fen: 2000, order_id: null },
      { type: "order_spend", change_fen: -1500, balance_fen: 500, order_id: order._id },
    ]);
    // A second dobuy of a paid order changes nothing.
    expect((await dobuy(buyer.client, order._id)).data.status).toBe("paied");
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
  });

  test("balance exactly the payable: the wallet pays everything", async () => {
    const { buyer, order } = await walletCheckWith(15);
    expect(order).toMatchObject({ status: "wallet_spend", wallet_spend: 15, pay_money: 0 });
    expect(await walletFen(server, buyer.user.id)).toBe(0);
  });

  test("short by less than 1 yuan: payable − 1 yuan from the wallet, 1 yuan online", async () => {
    const { buyer, order } = await walletCheckWith(14.5);
    expect(order).toMatchObject({ status: "wallet_spend", wallet_spend: 14, pay_money: 1 });
    expect(await walletFen(server, buyer.user.id)).toBe(50);
    // Checking again takes nothing more.
    const again = await buyer.client.call<Order>("/api/shop/wallet_check", { order_id: order._id });
    expect(again.data).toMatchObject({ wallet_spend: 14, pay_money: 1 });
    expect(await walletFen(server, buyer.user.id)).toBe(50);

    const pay = await dobuy(buyer.client, order._id);
    expect(pay.data).toMatchObject({ status: "wallet_spend", request_pay_amound: 1, sandbox: true });
    expect((await notifySandbox(server, sandboxTradeNo(pay.data), 100)).status).toBe(303);
    expect(
      (await buyer.client.call<TradeStatus>("/api/shop/trade_status", { trade_id: order._id })).data,
    ).toEqual({ status: "paied", add_traffic: 100 * GB, add_vip_duration: 0 });
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
  });

  test("short by exactly 1 yuan or more: the whole balance", async () => {
    const exact = await walletCheckWith(14);
    expect(exact.order).toMatchObject({ status: "wallet_spend", wallet_spend: 14, pay_money: 1 });
    expect(await walletFen(server, exact.buyer.user.id)).toBe(0);
    const far = await walletCheckWith(10);
    expect(far.order).toMatchObject({ status: "wallet_spend", wallet_spend: 10, pay_money: 5 });
    expect(await walletFen(server, far.buyer.user.id)).toBe(0);
  });

  test("an empty wallet and a sub-1-yuan payable the wallet cannot cover deduct nothing", async () => {
    const empty = await walletCheckWith(0);
    expect(empty.order).toMatchObject({ status: "topay", wallet_spend: 0, pay_money: 15 });
    expect(await walletEntries(empty.buyer.user.id)).toEqual([]);

    const cheap = await walletCheckWith(0.3, 0.5);
    expect(cheap.order).toMatchObject({ status: "topay", wallet_spend: 0, pay_money: 0.5 });
    expect(await walletFen(server, cheap.buyer.user.id)).toBe(30);
    const covered = await walletCheckWith(0.5, 0.5);
    expect(covered.order).toMatchObject({ status: "wallet_spend", wallet_spend: 0.5, pay_money: 0 });
  });
});

describe("cancel_order", () => {
  test("returns the wallet deduction and frees the coupon; only topay / wallet_spend; twice is 1026", async () => {
    const buyer = await loggedInClient(server);
    await giveWallet(server, buyer.user.id, 800);
    const coupon = await makeCoupon(server, {
      type: "cash",
      code: "CANCEL5",
      forMoney: 5,
      NumberOfAuthorizations: 3,
    });
    const order = await createOrder(buyer.client, combo15._id);
    const withCoupon = await buyer.client.call<Order>("/api/coupon/orderUseCoupon", {
      order_id: order._id,
      code: "cancel5",
    });
    expect(withCoupon.data).toMatchObject({ coupon_discount: 5, coupon_code: "CANCEL5", pay_money: 10 });
    expect(await couponState(coupon._id)).toEqual({
      authTimes: 1,
      uses: [{ order_id: order._id, is_delete: 0 }],
    });
    const checked = await buyer.client.call<Order>("/api/shop/wallet_check", { order_id: order._id });
    expect(checked.data).toMatchObject({ status: "wallet_spend", wallet_spend: 8, pay_money: 2 });
    expect(await walletFen(server, buyer.user.id)).toBe(0);
    const pay = await dobuy(buyer.client, order._id);
    const tradeNo = sandboxTradeNo(pay.data);

    const cancelled = await buyer.client.call<Order>("/api/order/cancel_order", { order_id: order._id });
    expect(cancelled.code).toBe(0);
    expect(cancelled.data).toMatchObject({ status: "cancled", coupon_code: "", coupon_discount: 0 });
    expect(await walletFen(server, buyer.user.id)).toBe(800);
    expect((await walletEntries(buyer.user.id)).slice(1)).toEqual([
      { type: "order_spend", change_fen: -800, balance_fen: 0, order_id: order._id },
      { type: "order_refund", change_fen: 800, balance_fen: 800, order_id: order._id },
    ]);
    expect(await couponState(coupon._id)).toEqual({
      authTimes: 0,
      uses: [{ order_id: order._id, is_delete: 1 }],
    });

    const twice = await buyer.client.call("/api/order/cancel_order", { order_id: order._id });
    expect(twice.code).toBe(1026);
    expect(await walletFen(server, buyer.user.id)).toBe(800);
    expect((await couponState(coupon._id)).authTimes).toBe(0);

    // The gateway still delivers the old attempt's money: logged, nothing credited.
    expect((await notifySandbox(server, tradeNo, 200)).status).toBe(303);
    expect((await paymentEvents(server, tradeNo)).map((e) => e.result)).toEqual(["anomaly"]);
    expect((await userInfo(buyer.client)).traffic).toBe(0);
    const list = await buyer.client.call<Order[]>("/api/order/order_list");
    expect(list.data.map((o) => [o._id, o.status])).toEqual([[order._id, "cancled"]]);
  });

  test("a paid order is 1026; someone else's order is 1004", async () => {
    const buyer = await loggedInClient(server);
    const order = await createOrder(buyer.client, combo15._id);
    const stranger = await loggedInClient(server);
    expect((await stranger.client.call("/api/order/cancel_order", { order_id: order._id })).code).toBe(1004);
    expect((await stranger.client.call("/api/order/cancel_order", { order_id: newId() })).code).toBe(1004);
    await payWithSandbox(server, buyer.client, order._id);
    const paid = await buyer.client.call("/api/order/cancel_order", { order_id: order._id });
    expect(paid.code).toBe(1026);
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
  });
});

describe("coupons on orders (seed 000 §8)", () => {
  const applyCoupon = (
    client: Awaited<ReturnType<typeof loggedInClient>>["client"],
    orderId: string,
    code: string,
  ) => client.call<Order>("/api/coupon/orderUseCoupon", { order_id: orderId, code });

  test("empty 1000, unknown 1016, trial 1022, expired 1029, second coupon 1025", async () => {
    const buyer = await loggedInClient(server);
    const order = await createOrder(buyer.client, combo15._id);
    for (const code of ["", "   "]) {
      const empty = await applyCoupon(buyer.client, order._id, code);
      expect({ code: empty.code, msg: empty.msg }).toEqual({ code: 1000, msg: "优惠券不能为空" });
    }
    const unknown = await applyCoupon(buyer.client, order._id, "NO-SUCH-CODE");
    expect({ code: unknown.code, msg: unknown.msg }).toEqual({ code: 1016, msg: OrderMsg.couponError });

    await makeCoupon(server, { type: "freeUse", code: "TRIALG", trafficG: 8 });
    await makeCoupon(server, { type: "freeTime", code: "TRIALD", vipDay: 7 });
    expect((await applyCoupon(buyer.client, order._id, "TRIALG")).code).toBe(1022);
    expect((await applyCoupon(buyer.client, order._id, "TRIALD")).code).toBe(1022);

    const timeZone = await server.context.settings.get("timezone");
    await makeCoupon(server, {
      type: "cash",
      code: "OLD",
      forMoney: 3,
      expireTime: businessDay(Date.now() - DAY_MS, timeZone),
    });
    expect((await applyCoupon(buyer.client, order._id, "OLD")).code).toBe(1029);

    // Expiring today still works.
    await makeCoupon(server, {
      type: "cash",
      code: "TODAY",
      forMoney: 3,
      expireTime: businessDay(Date.now(), timeZone),
    });
    await makeCoupon(server, { type: "cash", code: "SECOND", forMoney: 4 });
    expect((await applyCoupon(buyer.client, order._id, " today ")).data).toMatchObject({
      coupon_code: "TODAY",
      coupon_discount: 3,
      pay_money: 12,
    });
    const second = await applyCoupon(buyer.client, order._id, "SECOND");
    expect(second.code).toBe(1025);
    // Nothing was recorded for the refused tries.
    expect(await db().get("SELECT COUNT(*) AS n FROM coupon_uses WHERE user_id = ?", buyer.user.id)).toEqual({
      n: 1,
    });
  });

  test("1017 once the user's own limit or the total is used up; a restored use counts again", async () => {
    const perUser = await makeCoupon(server, {
      type: "cash",
      code: "ONCEEACH",
      forMoney: 1,
      useNumPerUser: 1,
      NumberOfAuthorizations: 10,
    });
    const alice = await loggedInClient(server);
    const bob = await loggedInClient(server);
    const a1 = await createOrder(alice.client, combo15._id);
    expect((await applyCoupon(alice.client, a1._id, "ONCEEACH")).code).toBe(0);
    // With a coupon on it a1 is not handed back again (issue 26): a2 is a second order.
    const a2 = await createOrder(alice.client, combo15._id);
    expect(a2._id).not.toBe(a1._id);
    const again = await applyCoupon(alice.client, a2._id, "ONCEEACH");
    expect(again.code).toBe(1017);
    const b1 = await createOrder(bob.client, combo15._id);
    expect((await applyCoupon(bob.client, b1._id, "ONCEEACH")).code).toBe(0);
    expect((await couponState(perUser._id)).authTimes).toBe(2);

    const single = await makeCoupon(server, {
      type: "cash",
      code: "ONLYONE",
      forMoney: 2,
      useNumPerUser: 0,
      NumberOfAuthorizations: 1,
    });
    expect(
      (await applyCoupon(bob.client, (await createOrder(bob.client, combo15._id))._id, "ONLYONE")).code,
    ).toBe(0);
    expect((await applyCoupon(alice.client, a2._id, "ONLYONE")).code).toBe(1017);
    // Bob cancels his order: the use comes back and Alice can have it.
    const bobOrders = (await bob.client.call<Order[]>("/api/order/order_list")).data;
    const holding = bobOrders.find((o) => o.coupon_code === "ONLYONE") as Order;
    expect((await bob.client.call("/api/order/cancel_order", { order_id: holding._id })).code).toBe(0);
    expect((await couponState(single._id)).authTimes).toBe(0);
    expect((await applyCoupon(alice.client, a2._id, "ONLYONE")).code).toBe(0);
    expect((await couponState(single._id)).authTimes).toBe(1);
  });

  test("1021 after ten tries a minute (rate limits at their real size)", async () => {
    const strict = await startShopServer({ rateLimitScale: 1 });
    try {
      const combo = await makeCombo(strict, { name: "strict", price: 15, traffic: GB });
      const buyer = await loggedInClient(strict);
      const order = await createOrder(buyer.client, combo._id);
      const codes: number[] = [];
      for (let i = 0; i < 11; i++) codes.push((await applyCoupon(buyer.client, order._id, `GUESS${i}`)).code);
      expect(codes).toEqual([...Array(10).fill(1016), 1021]);
      const limited = await applyCoupon(buyer.client, order._id, "GUESS");
      expect({ code: limited.code, msg: limited.msg }).toEqual({
        code: 1021,
        msg: OrderMsg.couponTooManyTries,
      });
      // Another user is not limited by this one's guesses.
      const other = await loggedInClient(strict);
      const theirs = await createOrder(other.client, combo._id);
      expect((await applyCoupon(other.client, theirs._id, "GUESS")).code).toBe(1016);
    } finally {
      await strict.close();
    }
  });

  test("accounts made to guess codes share their address's budget of refused tries; a good code costs none", async () => {
    const strict = await startShopServer({ rateLimitScale: 1 });
    try {
      await makeCoupon(strict, {
        type: "cash",
        code: "REAL5",
        forMoney: 5,
        NumberOfAuthorizations: 0,
        useNumPerUser: 0,
      });
      const combo = await makeCombo(strict, { name: "strict", price: 15, traffic: GB });
      const codes: number[] = [];
      // Each account stays under its own 10 a minute; together they spend the address's 30, and the
      // three good codes cost nothing (else the fourth account's first guess would be refused).
      for (let account = 0; account < 3; account++) {
        const guesser = await loggedInClient(strict);
        const order = await createOrder(guesser.client, combo._id);
        expect((await applyCoupon(guesser.client, order._id, "REAL5")).code).toBe(0);
        const cancel = await guesser.client.call("/api/coupon/orderCancleCoupon", { order_id: order._id });
        expect(cancel.code).toBe(0);
        for (let i = 0; i < 9; i++)
          codes.push((await applyCoupon(guesser.client, order._id, `GUESS${i}`)).code);
      }
      expect(codes).toEqual(Array(27).fill(1016));
      const fourth = await loggedInClient(strict);
      const order = await createOrder(fourth.client, combo._id);
      for (let i = 0; i < 3; i++)
        expect((await applyCoupon(fourth.client, order._id, `MORE${i}`)).code).toBe(1016);
      expect((await applyCoupon(fourth.client, order._id, "MORE")).code).toBe(1021);
    } finally {
      await strict.close();
    }
  });

  test("cash and discount amounts, rounded to the fen; cash above the price makes the order free", async () => {
    const buyer = await loggedInClient(server);
    await makeCoupon(server, {
      type: "cash",
      code: "CASH5",
      forMoney: 5,
      NumberOfAuthorizations: 0,
      useNumPerUser: 0,
    });
    await makeCoupon(server, {
      type: "discount",
      code: "OFF10",
      discount: 0.9,
      NumberOfAuthorizations: 0,
      useNumPerUser: 0,
    });
    await makeCoupon(server, {
      type: "discount",
      code: "OFF30",
      discount: 0.7,
      NumberOfAuthorizations: 0,
      useNumPerUser: 0,
    });
    await makeCoupon(server, {
      type: "cash",
      code: "CASH20",
      forMoney: 20,
      NumberOfAuthorizations: 0,
      useNumPerUser: 0,
    });
    const odd = await makeCombo(server, { name: "1.65 元", price: 1.65, traffic: GB });

    const applied = async (comboId: string, code: string) =>
      (await applyCoupon(buyer.client, (await createOrder(buyer.client, comboId))._id, code)).data;
    expect(await applied(combo15._id, "CASH5")).toMatchObject({
      order_money: 15,
      coupon_discount: 5,
      pay_money: 10,
      couponType: "cash",
    });
    expect(await applied(combo15._id, "OFF10")).toMatchObject({
      coupon_discount: 1.5,
      pay_money: 13.5,
      couponType: "discount",
    });
    // 1.65 × 0.7 = 1.155 → 1.16 to pay (half up), 0.49 off.
    expect(await applied(odd._id, "OFF30")).toMatchObject({ coupon_discount: 0.49, pay_money: 1.16 });

    const free = await applied(combo15._id, "CASH20");
    expect(free).toMatchObject({ coupon_discount: 15, pay_money: 0, status: "topay" });
    const pay = await dobuy(buyer.client, free._id);
    expect(pay.data.status).toBe("paied");
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
  });

  test("orderCancleCoupon takes the coupon off and gives the use back; the same coupon can go on again", async () => {
    const buyer = await loggedInClient(server);
    const coupon = await makeCoupon(server, { type: "cash", code: "TAKEOFF", forMoney: 2 });
    const order = await createOrder(buyer.client, combo15._id);
    expect((await applyCoupon(buyer.client, order._id, "TAKEOFF")).data.pay_money).toBe(13);
    const off = await buyer.client.call<Order>("/api/coupon/orderCancleCoupon", { order_id: order._id });
    expect(off.code).toBe(0);
    expect(off.data).toMatchObject({ coupon_code: "", coupon_name: "", coupon_discount: 0, pay_money: 15 });
    expect(await couponState(coupon._id)).toEqual({
      authTimes: 0,
      uses: [{ order_id: order._id, is_delete: 1 }],
    });
    expect((await applyCoupon(buyer.client, order._id, "TAKEOFF")).data.pay_money).toBe(13);
    expect((await couponState(coupon._id)).authTimes).toBe(1);
  });

  test("once the wallet has paid part of the order its coupon is fixed", async () => {
    const buyer = await loggedInClient(server);
    await giveWallet(server, buyer.user.id, 300);
    await makeCoupon(server, { type: "cash", code: "LATE", forMoney: 2 });
    const order = await createOrder(buyer.client, combo15._id);
    expect(
      (await buyer.client.call<Order>("/api/shop/wallet_check", { order_id: order._id })).data.status,
    ).toBe("wallet_spend");
    const late = await applyCoupon(buyer.client, order._id, "LATE");
    expect({ code: late.code, msg: late.msg }).toEqual({ code: 1000, msg: OrderMsg.walletLocked });
    expect((await buyer.client.call("/api/coupon/orderCancleCoupon", { order_id: order._id })).code).toBe(
      1000,
    );
  });

  test("1017 at dobuy when the admin lowered the limit after the coupon went on", async () => {
    const coupon = await makeCoupon(server, {
      type: "cash",
      code: "LOWERED",
      forMoney: 1,
      useNumPerUser: 1,
      NumberOfAuthorizations: 2,
    });
    const alice = await loggedInClient(server);
    const bob = await loggedInClient(server);
    const aliceOrder = await createOrder(alice.client, combo15._id);
    const bobOrder = await createOrder(bob.client, combo15._id);
    expect((await applyCoupon(alice.client, aliceOrder._id, "LOWERED")).code).toBe(0);
    expect((await applyCoupon(bob.client, bobOrder._id, "LOWERED")).code).toBe(0);

    await makeCoupon(server, {
      _id: coupon._id,
      type: "cash",
      code: "LOWERED",
      forMoney: 1,
      useNumPerUser: 1,
      NumberOfAuthorizations: 1,
    });
    const refused = await dobuy(alice.client, aliceOrder._id);
    expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1017, msg: OrderMsg.couponUsedUp });
    expect(await db().get("SELECT COUNT(*) AS n FROM payments WHERE order_id = ?", aliceOrder._id)).toEqual({
      n: 0,
    });

    // Alice takes it off; Bob's order is within the new limit and pays.
    expect(
      (await alice.client.call("/api/coupon/orderCancleCoupon", { order_id: aliceOrder._id })).code,
    ).toBe(0);
    await payWithSandbox(server, bob.client, bobOrder._id);
    expect(
      (await bob.client.call<TradeStatus>("/api/shop/trade_status", { trade_id: bobOrder._id })).data.status,
    ).toBe("paied");
    expect((await couponState(coupon._id)).authTimes).toBe(1);
  });

  test("a coupon put on after dobuy closes that attempt: paying its old amount credits nothing", async () => {
    const buyer = await loggedInClient(server);
    await makeCoupon(server, { type: "cash", code: "AFTERQR", forMoney: 5 });
    const order = await createOrder(buyer.client, combo15._id);
    const first = await dobuy(buyer.client, order._id);
    expect(first.data.request_pay_amound).toBe(15);
    expect((await applyCoupon(buyer.client, order._id, "AFTERQR")).data.pay_money).toBe(10);
    const oldTrade = sandboxTradeNo(first.data);
    expect(
      (await db().get<{ status: string }>("SELECT status FROM payments WHERE trade_no = ?", oldTrade))
        ?.status,
    ).toBe("closed");

    // Taking the coupon off again would make the old attempt's amount look right once more.
    const second = await dobuy(buyer.client, order._id);
    expect(second.data.request_pay_amound).toBe(10);
    expect((await buyer.client.call("/api/coupon/orderCancleCoupon", { order_id: order._id })).code).toBe(0);
    await notifySandbox(server, sandboxTradeNo(second.data), 1000);
    expect((await paymentEvents(server, sandboxTradeNo(second.data))).map((e) => e.result)).toEqual([
      "anomaly",
    ]);
    expect((await userInfo(buyer.client)).traffic).toBe(0);

    // The old attempt for 15 now matches what the order owes: the customer did pay 15, so it credits.
    await notifySandbox(server, oldTrade, 1500);
    expect((await paymentEvents(server, oldTrade)).map((e) => e.result)).toEqual(["anomaly", "credited"]);
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
  });
});

describe("order/feedback", () => {
  test("at most 30 characters, only on paied and wallet_spend orders, only on one's own", async () => {
    const buyer = await loggedInClient(server);
    const open = await createOrder(buyer.client, combo15._id);
    const send = (orderId: string, msg: string, client = buyer.client) =>
      client.call<Order>("/api/order/feedback", { order_id: orderId, msg });
    expect((await send(open._id, "还没付款")).code).toBe(1000);

    await payWithSandbox(server, buyer.client, open._id);
    const thirty = "一".repeat(30);
    const ok = await send(open._id, thirty);
    expect(ok.code).toBe(0);
    expect(ok.data.user_feedback).toBe(thirty);
    expect((await send(open._id, "一".repeat(31))).code).toBe(1000);
    expect((await send(open._id, "   ")).code).toBe(1000);
    const stranger = await loggedInClient(server);
    expect((await send(open._id, "不是我的", stranger.client)).code).toBe(1004);
    const listed = await buyer.client.call<Order[]>("/api/order/order_list");
    expect(listed.data.find((o) => o._id === open._id)?.user_feedback).toBe(thirty);

    await giveWallet(server, buyer.user.id, 500);
    const partly = await createOrder(buyer.client, combo15._id);
    await buyer.client.call("/api/shop/wallet_check", { order_id: partly._id });
    expect((await send(partly._id, "钱包扣了但没到账")).code).toBe(0);
    await buyer.client.call("/api/order/cancel_order", { order_id: partly._id });
    expect((await send(partly._id, "取消了")).code).toBe(1000);
  });
});

describe("create_order and crediting (DESIGN §7)", () => {
  test("agency users are refused; unknown combos are 1004", async () => {
    const agent = await loggedInClient(server);
    await db().run("UPDATE users SET is_agency = 1 WHERE id = ?", agent.user.id);
    const refused = await agent.client.call("/api/shop/create_order", { combo_id: combo15._id });
    expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1003, msg: OrderMsg.agencyRefused });
    const buyer = await loggedInClient(server);
    expect((await buyer.client.call("/api/shop/create_order", { combo_id: newId() })).code).toBe(1004);
    expect((await buyer.client.call("/api/shop/create_order", { combo_id: "nope" })).code).toBe(1000);
    expect(
      await db().get(
        "SELECT COUNT(*) AS n FROM orders WHERE user_id IN (?, ?)",
        agent.user.id,
        buyer.user.id,
      ),
    ).toEqual({
      n: 0,
    });
  });

  test("traffic packs add traffic × (1 + bonus%), repeat purchases add, paidUser is set", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const created = await admin.client.call<Combo>("/api/admin/combo/update_combo", {
      name: "100G 加赠 20%",
      price: 30,
      traffic: 100 * GB,
      vipDuration: 0,
      additionPersend: 20,
    });
    expect(created.code).toBe(0);
    const buyer = await loggedInClient(server);
    expect((await userInfo(buyer.client)).paidUser).toBe(false);
    const order = await createOrder(buyer.client, created.data._id);
    expect(order).toMatchObject({ add_traffic: 120 * GB, order_money: 30, status: "topay" });
    await payWithSandbox(server, buyer.client, order._id);
    let info = await userInfo(buyer.client);
    expect({ traffic: info.traffic, paidUser: info.paidUser }).toEqual({ traffic: 120 * GB, paidUser: true });

    await payWithSandbox(server, buyer.client, (await createOrder(buyer.client, created.data._id))._id);
    info = await userInfo(buyer.client);
    expect(info.traffic).toBe(240 * GB);
    const records = await db().all<{ type: string; traffic_change: number; order_id: string }>(
      "SELECT type, traffic_change, order_id FROM traffic_records WHERE user_id = ? ORDER BY id",
      buyer.user.id,
    );
    expect(records.map((r) => [r.type, r.traffic_change])).toEqual([
      ["buy", 120 * GB],
      ["buy", 120 * GB],
    ]);
  });

  test("days bought on top of a running package keep the larger daily quota; a lapsed one takes the new quota", async () => {
    const big = await makeCombo(server, { name: "大流量月卡", price: 60, vipDuration: 30, limit: 100 * GB });
    const small = await makeCombo(server, { name: "小流量周卡", price: 10, vipDuration: 7, limit: 20 * GB });
    const buyer = await loggedInClient(server);
    await payWithSandbox(server, buyer.client, (await createOrder(buyer.client, big._id))._id);
    expect((await userInfo(buyer.client)).limit).toBe(100 * GB);
    await payWithSandbox(server, buyer.client, (await createOrder(buyer.client, small._id))._id);
    const stacked = await userInfo(buyer.client);
    expect(stacked.limit).toBe(100 * GB);

    // Once the package has lapsed, a new one sets its own quota.
    const lapsed = Date.now() - DAY_MS;
    await tx(
      db(),
      async () =>
        await changeTraffic(db(), {
          userId: buyer.user.id,
          type: "tiyan_expire",
          desc: "test",
          vipExpireTime: lapsed,
          now: Date.now(),
          timeZone: "Asia/Shanghai",
        }),
    );
    await payWithSandbox(server, buyer.client, (await createOrder(buyer.client, small._id))._id);
    expect((await userInfo(buyer.client)).limit).toBe(20 * GB);
  });

  test("time packs extend vipExpireTime from max(now, expiry) and set the daily limit; permissions extend", async () => {
    const permission = newId();
    await db().run(
      "INSERT INTO permissions (id, name, \"desc\", create_time) VALUES (?, 'netflix', '奈飞', ?)",
      permission,
      Date.now(),
    );
    const month = await makeCombo(server, {
      name: "月卡",
      price: 25,
      vipDuration: 30,
      additionPersend: 10,
      permissionsGain: [permission],
      permissionDuration: 30,
    });
    const buyer = await loggedInClient(server);
    // An expiry in the past does not count: days start from now.
    const longAgo = Date.now() - 100 * DAY_MS;
    await tx(
      db(),
      async () =>
        await changeTraffic(db(), {
          userId: buyer.user.id,
          type: "tiyan_expire",
          desc: "test",
          vipExpireTime: longAgo,
          now: Date.now(),
          timeZone: "Asia/Shanghai",
        }),
    );

    const order = await createOrder(buyer.client, month._id);
    expect(order).toMatchObject({
      add_vip_duration: 30,
      add_traffic: 0,
      gainPermission: [permission],
      permissionDuration: 30,
    });
    const before = Date.now();
    await payWithSandbox(server, buyer.client, order._id);
    const after = Date.now();
    let info = await userInfo(buyer.client);
    expect(info.vipExpireTime).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(info.vipExpireTime).toBeLessThanOrEqual(after + 30 * DAY_MS);
    expect(info.limit).toBe(Math.round(DEFAULT_DAILY_LIMIT * 1.1));
    expect(info.paidUser).toBe(true);
    const firstExpiry = info.vipExpireTime;
    const grant = (list: PermissionGrant[]) => list.find((p) => p.id === permission);
    const firstGrant = grant(info.permissions)?.expireTime as number;
    expect(firstGrant).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(firstGrant).toBeLessThanOrEqual(after + 30 * DAY_MS);

    await payWithSandbox(server, buyer.client, (await createOrder(buyer.client, month._id))._id);
    info = await userInfo(buyer.client);
    expect(info.vipExpireTime).toBe(firstExpiry + 30 * DAY_MS);
    expect(grant(info.permissions)?.expireTime).toBe(firstGrant + 30 * DAY_MS);
    expect(
      (await db().get<{ use_times: number }>("SELECT use_times FROM permissions WHERE id = ?", permission))
        ?.use_times,
    ).toBe(2);
    // The ledger adds up to the expiry.
    const sum = await db().get<{ s: number }>(
      "SELECT SUM(vip_change) AS s FROM traffic_records WHERE user_id = ?",
      buyer.user.id,
    );
    expect(sum?.s).toBe(info.vipExpireTime);
  });

  test("settleWithoutGateway (the operator's manual crediting) credits once and refuses a paid order", async () => {
    const buyer = await loggedInClient(server);
    const order = await createOrder(buyer.client, combo15._id);
    const settled = await settleWithoutGateway(server.context, order._id, "manual", "manual: paid in cash");
    expect(settled).toEqual({ result: "credited", orderId: order._id });
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
    await expect(settleWithoutGateway(server.context, order._id, "manual", "manual: again")).rejects.toThrow(
      /paied/,
    );
    expect((await userInfo(buyer.client)).traffic).toBe(100 * GB);
    const pay = await dobuy(buyer.client, order._id);
    expect((pay.data as PayResult).status).toBe("paied");
  });
});

describe("order_list paged on the server (issue 31 §5)", () => {
  test("pages of the seed's sizes, newest first, with the total; past the end the last page; a status group filtered", async () => {
    const { client, user } = await loggedInClient(server);
    const first = await createOrder(client, combo15._id);
    await copyOrders(server, first._id, 44, ["paied", "cancled", "paied"]);
    const everything = (await client.call<Order[]>("/api/order/order_list")).data;
    expect(everything).toHaveLength(45);
    expect(
      everything.every((order, i) => i === 0 || order.create_time <= (everything[i - 1]?.create_time ?? 0)),
    ).toBe(true);

    const page = async (input: Record<string, unknown>) =>
      await client.call<OrderListPage>("/api/order/order_list", input);
    const one = await page({ page: 1, pageSize: 20 });
    expect(one.code).toBe(0);
    expect(one.data).toEqual({ orders: everything.slice(0, 20), total: 45, page: 1 });
    expect((await page({ page: 3, pageSize: 20 })).data).toEqual({
      orders: everything.slice(40),
      total: 45,
      page: 3,
    });
    expect((await page({ page: 9, pageSize: 20 })).data).toEqual({
      orders: everything.slice(40),
      total: 45,
      page: 3,
    });
    expect((await page({ page: 2, pageSize: 5 })).data.orders).toEqual(everything.slice(5, 10));
    expect((await page({ page: 1, pageSize: 0 })).data).toEqual({ orders: everything, total: 45, page: 1 });

    const paid = everything.filter((order) => order.status === "paied");
    expect((await page({ page: 2, pageSize: 20, filter: "success" })).data).toEqual({
      orders: paid.slice(20, 40),
      total: paid.length,
      page: 2,
    });
    const unpaid = (await page({ page: 1, pageSize: 20, filter: "unpaid" })).data;
    expect(unpaid).toEqual({ orders: everything.slice(0, 1), total: 1, page: 1 });
    expect(unpaid.orders[0]?._id).toBe(first._id);
    expect(await orderIds(server, user.id)).toHaveLength(45);

    for (const bad of [
      { page: 1, pageSize: 7 },
      { page: 0 },
      { page: 1, filter: "paied" },
      { page: 1, pageSize: 1000 },
    ])
      expect((await page(bad)).code).toBe(1000);
  });
});
