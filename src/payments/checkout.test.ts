/**
 * Issue 26, item 5: dobuy shows the open payment attempt of an unchanged order again instead of
 * asking the gateway anew (one row, one gateway request, also for 50 calls at once); a changed
 * order, pay mode or device, or an old attempt, makes a new one; new attempts are limited per order
 * and per account (1005, limits at their real size). Against a fake 彩虹易支付 on 127.0.0.1.
 * Item 6: the sandbox cashier sends a paid customer back to 订单记录, as a gateway's return URL does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  createOrder,
  giveWallet,
  makeCombo,
  makeCoupon,
  notifySandbox,
  sandboxTradeNo,
  startShopServer,
} from "../../tests/commerce.ts";
import { type FakeEpayGateway, startFakeEpayGateway } from "../../tests/fakes/epay-gateway.ts";
import { type ApiClient, loggedInClient, type TestServer } from "../../tests/harness.ts";
import { rowOrderSql } from "../db/db.ts";
import type { Combo } from "../modules/combo/schema.ts";
import { type Order, OrderMsg, type PayResult } from "../modules/order/schema.ts";
import { Code } from "../rpc/codes.ts";
import { PAY_ATTEMPTS_PER_ACCOUNT, PAY_ATTEMPTS_PER_ORDER, PAYMENT_REUSE_MS } from "./checkout.ts";

let server: TestServer;
let gateway: FakeEpayGateway;
let combo: Combo;

beforeAll(async () => {
  server = await startShopServer({ rateLimitScale: 1 });
  gateway = startFakeEpayGateway();
  await server.context.settings.update({
    alipay: "epay",
    wxpay: "epay",
    epay_url: gateway.url,
    epay_pid: gateway.pid,
    epay_key: gateway.key,
  });
  combo = await makeCombo(server, { name: "月付套餐", price: 15, traffic: 1 });
});
afterAll(async () => {
  await gateway?.close();
  await server?.close();
});

const dobuy = (
  client: ApiClient,
  orderId: string,
  payMode: "alipay" | "wxpay" = "alipay",
  isMobile = false,
) => client.call<PayResult>("/api/shop/dobuy", { order_id: orderId, pay_mode: payMode, isMobile });

/** How many times the gateway was asked to create a payment for this order. */
const gatewayCalls = (orderId: string) =>
  gateway.mapiRequests.filter((request) => request.params.return_url?.includes(orderId)).length;

const attempts = async (orderId: string) =>
  await server.context.db.all<{ trade_no: string; status: string }>(
    `SELECT trade_no, status FROM payments WHERE order_id = ? ORDER BY create_time, ${rowOrderSql(server.context.db)}`,
    orderId,
  );

async function newOrder(): Promise<{ client: ApiClient; order: Order; userId: string }> {
  const { client, user } = await loggedInClient(server);
  return { client, order: await createOrder(client, combo._id), userId: user.id };
}

describe("an unchanged order's open attempt is shown again", () => {
  test("50 dobuy in a row on one order: one gateway request, one attempt, the same QR each time", async () => {
    const { client, order } = await newOrder();
    const answers: PayResult[] = [];
    for (let i = 0; i < 50; i++) {
      const answer = await dobuy(client, order._id);
      expect(answer.code).toBe(0);
      answers.push(answer.data);
    }
    expect(gatewayCalls(order._id)).toBe(1);
    expect((await attempts(order._id)).map((a) => a.status)).toEqual(["pending"]);
    expect(new Set(answers.map((a) => a.qrcode)).size).toBe(1);
    expect(answers[0]).toMatchObject({ request_pay_amound: 15, third_pay_platform: "易支付" });
    expect(answers[0]?.qrcode).toStartWith("https://qr.alipay.com/");

    // And paying it credits the order once.
    const tradeNo = (await attempts(order._id))[0]?.trade_no as string;
    gateway.pay(tradeNo);
    expect((await gateway.notify(tradeNo)).body).toBe("success");
    expect((await dobuy(client, order._id)).data.status).toBe("paied");
  });

  test("50 dobuy at once on one order: one gateway request, every answer the same QR", async () => {
    const { client, order } = await newOrder();
    const answers = await Promise.all(Array.from({ length: 50 }, () => dobuy(client, order._id)));
    expect(new Set(answers.map((a) => a.code))).toEqual(new Set([0]));
    expect(new Set(answers.map((a) => a.data.qrcode)).size).toBe(1);
    expect(gatewayCalls(order._id)).toBe(1);
    expect(await attempts(order._id)).toHaveLength(1);
  });

  test("another pay mode, another device, a coupon or the wallet, or a ten-minute-old attempt make a new one", async () => {
    const { client, order } = await newOrder();
    const first = (await dobuy(client, order._id)).data;
    const wx = (await dobuy(client, order._id, "wxpay")).data;
    expect(wx.qrcode).not.toBe(first.qrcode);
    const phone = (await dobuy(client, order._id, "wxpay", true)).data;
    expect(phone.qrcode).not.toBe(wx.qrcode);
    expect(gatewayCalls(order._id)).toBe(3);
    // Only the newest is open: the others were superseded.
    expect((await attempts(order._id)).map((a) => a.status)).toEqual(["closed", "closed", "pending"]);

    await server.context.db.run(
      "UPDATE payments SET create_time = create_time - ? WHERE order_id = ?",
      PAYMENT_REUSE_MS,
      order._id,
    );
    await dobuy(client, order._id, "wxpay", true);
    expect(gatewayCalls(order._id)).toBe(4);

    // A coupon, then the wallet, change what the order owes: each time a new attempt.
    const { client: other, order: changed, userId } = await newOrder();
    expect((await dobuy(other, changed._id)).data.request_pay_amound).toBe(15);
    await makeCoupon(server, { type: "cash", code: "CHANGE1", forMoney: 1, NumberOfAuthorizations: 0 });
    await other.ok("/api/coupon/orderUseCoupon", { order_id: changed._id, code: "CHANGE1" });
    expect((await dobuy(other, changed._id)).data.request_pay_amound).toBe(14);
    await giveWallet(server, userId, 200);
    await other.ok("/api/shop/wallet_check", { order_id: changed._id });
    expect((await dobuy(other, changed._id)).data.request_pay_amound).toBe(12);
    expect((await dobuy(other, changed._id)).data.request_pay_amound).toBe(12);
    expect(gatewayCalls(changed._id)).toBe(3);
    expect((await attempts(changed._id)).map((a) => a.status)).toEqual(["closed", "closed", "pending"]);
  });
});

describe("new attempts are limited (limits at their real size)", () => {
  test(`alternating pay modes on one order: at most ${PAY_ATTEMPTS_PER_ORDER.max} gateway requests a minute, then 1005`, async () => {
    const { client, order } = await newOrder();
    const codes: number[] = [];
    const messages = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const answer = await dobuy(client, order._id, i % 2 === 0 ? "alipay" : "wxpay");
      codes.push(answer.code);
      if (answer.code !== 0) messages.add(answer.msg);
    }
    // Past the limit, the mode of the open attempt (支付宝, the fifth) is still shown: the customer
    // can pay; switching to 微信 would be a new attempt and is refused.
    const max = PAY_ATTEMPTS_PER_ORDER.max;
    expect(codes).toEqual([
      ...Array(max).fill(0),
      ...Array.from({ length: 50 - max }, (_, i) => (i % 2 === 0 ? Code.tooManyRequests : 0)),
    ]);
    expect([...messages]).toEqual([OrderMsg.tooManyPayAttempts]);
    expect(gatewayCalls(order._id)).toBe(max);
    expect(await attempts(order._id)).toHaveLength(max);
  });

  test("50 alternating dobuy at once: at most the limited number of gateway requests", async () => {
    const { client, order } = await newOrder();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => dobuy(client, order._id, i % 2 === 0 ? "alipay" : "wxpay")),
    );
    expect(answers.filter((a) => a.code === Code.tooManyRequests).length).toBeGreaterThan(0);
    expect(answers.every((a) => a.code === 0 || a.code === Code.tooManyRequests)).toBe(true);
    expect(gatewayCalls(order._id)).toBeLessThanOrEqual(PAY_ATTEMPTS_PER_ORDER.max);
    expect((await attempts(order._id)).length).toBeLessThanOrEqual(PAY_ATTEMPTS_PER_ORDER.max);
  });

  test(`an account's new attempts over all its orders: ${PAY_ATTEMPTS_PER_ACCOUNT.max} an hour`, async () => {
    const { client } = await loggedInClient(server);
    const combos = await Promise.all(
      Array.from(
        { length: 7 },
        async (_, i) => await makeCombo(server, { name: `账户限额 ${i}`, price: 3 + i }),
      ),
    );
    let accepted = 0;
    let refused = 0;
    for (const each of combos) {
      const order = await createOrder(client, each._id);
      for (let i = 0; i < PAY_ATTEMPTS_PER_ORDER.max; i++) {
        const answer = await dobuy(client, order._id, i % 2 === 0 ? "alipay" : "wxpay");
        if (answer.code === 0) accepted += 1;
        else {
          expect({ code: answer.code, msg: answer.msg }).toEqual({
            code: Code.tooManyRequests,
            msg: OrderMsg.tooManyPayAttempts,
          });
          refused += 1;
        }
      }
    }
    expect({ accepted, refused }).toEqual({
      accepted: PAY_ATTEMPTS_PER_ACCOUNT.max,
      refused: 7 * PAY_ATTEMPTS_PER_ORDER.max - PAY_ATTEMPTS_PER_ACCOUNT.max,
    });
  });
});

describe("the sandbox cashier (item 6)", () => {
  test("after 确认支付 a paid customer lands on 订单记录 with the success query; an unpaid one sees why", async () => {
    await server.context.settings.update({ alipay: "sandbox" });
    try {
      const { client, order } = await newOrder();
      const pay = await dobuy(client, order._id, "alipay", true);
      const tradeNo = sandboxTradeNo(pay.data);
      const notified = await notifySandbox(server, tradeNo, 1500);
      expect(notified.status).toBe(303);
      const done = notified.headers.get("location") as string;
      expect(done).toBe(`/pay/sandbox/${tradeNo}?done=1`);
      const back = await fetch(new URL(done, server.url), { redirect: "manual" });
      expect(back.status).toBe(303);
      expect(back.headers.get("location")).toBe(`/#/order?payment=success&order=${order._id}`);
      // Opened again later without ?done=1, the page just says it is paid.
      const page = await fetch(`${server.url}/pay/sandbox/${tradeNo}`);
      expect(await page.text()).toContain("支付完成");

      // A cancelled order's attempt: the money is not taken, the page says so.
      const { client: second, order: cancelled } = await newOrder();
      const secondTrade = sandboxTradeNo((await dobuy(second, cancelled._id)).data);
      await second.ok("/api/order/cancel_order", { order_id: cancelled._id });
      const refused = await fetch(`${server.url}/pay/sandbox/${secondTrade}?done=1`, { redirect: "manual" });
      expect(refused.status).toBe(200);
      expect(await refused.text()).toContain("该支付单已关闭");
    } finally {
      await server.context.settings.update({ alipay: "epay" });
    }
  });
});
