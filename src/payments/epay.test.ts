/**
 * EPay end to end: a real server on 127.0.0.1 configured by an admin to collect alipay and wxpay
 * through a fake 彩虹易支付 gateway (tests/fakes/epay-gateway.ts) that speaks the real wire formats.
 * The gateway's notifications go through the public notify route, verify and markPaid.
 */
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import {
  type EpayOrder,
  type FakeEpayGateway,
  gatewaySign,
  startFakeEpayGateway,
} from "../../tests/fakes/epay-gateway.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "../../tests/harness.ts";
import { tx } from "../db/db.ts";
import { GB } from "../lib/traffic.ts";
import type { Combo } from "../modules/combo/schema.ts";
import { changeWallet } from "../modules/ledger/service.ts";
import type { Order, PayResult, TradeStatus } from "../modules/order/schema.ts";
import type { UserInfo } from "../modules/user/schema.ts";
import { Code } from "../rpc/codes.ts";
import { epaySign } from "./epay.ts";

let server: TestServer;
let gateway: FakeEpayGateway;
let admin: ApiClient;
let combo: Combo;

const COMBO_TRAFFIC = 100 * GB;

beforeAll(async () => {
  server = await startTestServer();
  gateway = startFakeEpayGateway();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  const config = await admin.call("/api/admin/config/set_config", {
    alipay: "epay",
    wxpay: "epay",
    epay_url: gateway.url,
    epay_pid: gateway.pid,
    epay_key: gateway.key,
  });
  expect(config.code).toBe(0);
  const saved = await admin.call<Combo>("/api/admin/combo/update_combo", {
    name: "月付套餐",
    price: 15,
    traffic: COMBO_TRAFFIC,
    vipDuration: 0,
  });
  expect(saved.code).toBe(0);
  combo = saved.data;
});
afterAll(async () => {
  await gateway?.close();
  await server?.close();
});

interface Purchase {
  client: ApiClient;
  userId: string;
  order: Order;
  pay: PayResult;
  /** The gateway's view of the order: out_trade_no (ours) and trade_no (EPay's). */
  gatewayOrder: EpayOrder;
}

async function call<T>(client: ApiClient, path: string, payload: unknown = {}): Promise<T> {
  const answer = await client.call<T>(path, payload);
  if (answer.code !== 0) throw new Error(`${path}: ${answer.code} ${answer.msg}`);
  return answer.data;
}

async function newBuyer() {
  const { client, user } = await loggedInClient(server);
  return { client, userId: user.id };
}

/** A new customer orders the combo, optionally spends wallet money on it, and asks to pay. */
async function buy(
  options: { walletFen?: number; payMode?: "alipay" | "wxpay"; isMobile?: boolean } = {},
): Promise<Purchase> {
  const { client, userId } = await newBuyer();
  let order = await call<Order>(client, "/api/shop/create_order", { combo_id: combo._id });
  if (options.walletFen) {
    const db = server.context.db;
    tx(db, () =>
      changeWallet(db, {
        userId,
        type: "adjust",
        changeFen: options.walletFen ?? 0,
        desc: "test",
        now: Date.now(),
      }),
    );
    order = await call<Order>(client, "/api/shop/wallet_check", { order_id: order._id });
  }
  const pay = await call<PayResult>(client, "/api/shop/dobuy", {
    order_id: order._id,
    pay_mode: options.payMode ?? "alipay",
    isMobile: options.isMobile ?? false,
  });
  const request = gateway.mapiRequests.findLast((r) => r.params.return_url?.includes(order._id));
  const gatewayOrder = gateway.orders.get(request?.params.out_trade_no ?? "");
  if (!gatewayOrder) throw new Error("the gateway never saw this order");
  return { client, userId, order, pay, gatewayOrder };
}

const traffic = async (client: ApiClient) => (await call<UserInfo>(client, "/api/user/userinfo")).traffic;
const status = async (client: ApiClient, orderId: string) =>
  (await call<TradeStatus>(client, "/api/shop/trade_status", { trade_id: orderId })).status;
const walletFen = (userId: string) =>
  server.context.db
    .query<{ wallet_fen: number }, [string]>("SELECT wallet_fen FROM users WHERE id = ?")
    .get(userId)?.wallet_fen;

function events(tradeNo: string) {
  return server.context.db
    .query<{ result: string; reason: string; raw: string }, [string]>(
      "SELECT result, reason, raw FROM payment_events WHERE trade_no = ? ORDER BY id",
    )
    .all(tradeNo);
}

const notifyUrl = () => `${server.url}/api/pay/notify/epay`;

describe("EPay sign", () => {
  test("reproduces both payments.md test vectors", () => {
    const key = "K7sD2mQ9vX4pL8nR3tY6wZ1aB5cE0fGh";
    const mapi = {
      pid: "1001",
      type: "alipay",
      out_trade_no: "P20240501123000AB12",
      notify_url: "https://panel.example.com/api/pay/notify/epay",
      return_url: "https://panel.example.com/order/P20240501123000AB12",
      name: "月付套餐",
      money: "15.00",
      clientip: "203.0.113.5",
      device: "pc",
      param: "",
    };
    expect(epaySign(mapi, key)).toBe("ca9c6a282cf68fd718e85c71f485e877");
    const notify = {
      pid: "1001",
      trade_no: "2024050112301599871",
      out_trade_no: "P20240501123000AB12",
      type: "alipay",
      name: "月付套餐",
      money: "15",
      trade_status: "TRADE_SUCCESS",
      sign_type: "MD5",
    };
    expect(epaySign(notify, key)).toBe("f6529bda820a650ac05d3fee6121760a");
    // sign and sign_type never take part, whatever they hold.
    expect(epaySign({ ...notify, sign: "x", sign_type: "RSA" }, key)).toBe(
      "f6529bda820a650ac05d3fee6121760a",
    );
  });
});

describe("dobuy through EPay", () => {
  test("alipay returns the gateway's QR, and mapi.php got a valid signature, the money and our notify_url", async () => {
    const { pay, gatewayOrder, order } = await buy();
    expect(pay.status).toBe("topay");
    expect(pay.qrcode).toBe(`https://qr.alipay.com/bax0${gatewayOrder.tradeNo}`);
    expect(pay.payurl).toBe("");
    expect(pay.third_pay_platform).toBe("易支付");
    expect(pay.request_pay_amound).toBe(15);
    expect(pay.sandbox).toBe(false);

    const request = gateway.mapiRequests.findLast((r) => r.params.out_trade_no === gatewayOrder.outTradeNo);
    expect(request?.contentType).toContain("application/x-www-form-urlencoded");
    expect(request?.signValid).toBe(true);
    expect(request?.params).toMatchObject({
      pid: "1001",
      type: "alipay",
      money: "15.00",
      name: "月付套餐",
      notify_url: notifyUrl(),
      clientip: "127.0.0.1",
      device: "pc",
      sign_type: "MD5",
    });
    expect(request?.params.return_url).toStartWith(server.url);
    expect(request?.params.return_url).toContain(order._id);
    expect(request?.params.out_trade_no).toMatch(/^P\d{14}[A-Z0-9]{6}$/);
  });

  test("wxpay goes to EPay as type=wxpay", async () => {
    const { gatewayOrder, pay } = await buy({ payMode: "wxpay" });
    expect(gatewayOrder.type).toBe("wxpay");
    expect(pay.qrcode).not.toBe("");
  });

  test("a payurl answer is a QR of the cashier on desktop and a redirect on mobile", async () => {
    gateway.mode = "payurl";
    try {
      const desktop = await buy();
      expect(desktop.pay.qrcode).toBe(`${gateway.url}pay/alipay/${desktop.gatewayOrder.tradeNo}/`);
      expect(desktop.pay.payurl).toBe(desktop.pay.qrcode);
      const mobile = await buy({ isMobile: true });
      expect(mobile.pay.payurl).toBe(`${gateway.url}pay/alipay/${mobile.gatewayOrder.tradeNo}/`);
      expect(mobile.pay.qrcode).toBe("");
      const request = gateway.mapiRequests.findLast(
        (r) => r.params.out_trade_no === mobile.gatewayOrder.outTradeNo,
      );
      expect(request?.params.device).toBe("mobile");
    } finally {
      gateway.mode = "qrcode";
    }
  });

  test("a refusal by the gateway reaches the customer as 1000 with the gateway's reason", async () => {
    gateway.mode = { code: -2, msg: "该商户未开通此支付方式" };
    try {
      const { client } = await newBuyer();
      const order = await call<Order>(client, "/api/shop/create_order", { combo_id: combo._id });
      const answer = await client.call("/api/shop/dobuy", { order_id: order._id, pay_mode: "alipay" });
      expect(answer.code).toBe(Code.badInput);
      expect(answer.msg).toBe("支付网关错误: 该商户未开通此支付方式");
      expect(await status(client, order._id)).toBe("topay");
    } finally {
      gateway.mode = "qrcode";
    }
  });
});

describe("EPay notifications", () => {
  test("a paid notification delivered 50 times at once credits once", async () => {
    const { client, order, gatewayOrder } = await buy();
    const before = await traffic(client);
    gateway.pay(gatewayOrder.outTradeNo);

    const deliveries = await Promise.all(
      Array.from({ length: 50 }, () => gateway.notify(gatewayOrder.outTradeNo)),
    );

    for (const delivery of deliveries) {
      expect(delivery.status).toBe(200);
      expect(delivery.body).toBe("success");
    }
    expect(deliveries[0]?.url).toContain("money=15&");
    expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
    expect(await status(client, order._id)).toBe("paied");
    const results = events(gatewayOrder.outTradeNo).map((e) => e.result);
    expect(results.filter((r) => r === "credited")).toHaveLength(1);
    expect(results.filter((r) => r === "duplicate")).toHaveLength(49);
    expect(results).toHaveLength(50);
    const records = server.context.db
      .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM traffic_records WHERE order_id = ?")
      .get(order._id);
    expect(records?.n).toBe(1);
    const payment = server.context.db
      .query<{ gateway_trade_no: string; status: string }, [string]>(
        "SELECT gateway_trade_no, status FROM payments WHERE trade_no = ?",
      )
      .get(gatewayOrder.outTradeNo);
    expect(payment).toEqual({ gateway_trade_no: gatewayOrder.tradeNo, status: "paid" });
  });

  test("a bad signature, a wrong amount, an unknown order and a cancelled order change nothing and are logged", async () => {
    // An order half paid from the wallet (¥5 of ¥15), the rest through EPay.
    const open = await buy({ walletFen: 500 });
    expect(open.order.status).toBe("wallet_spend");
    expect(open.pay.request_pay_amound).toBe(10);
    gateway.pay(open.gatewayOrder.outTradeNo);
    const trade = open.gatewayOrder.outTradeNo;
    const trafficBefore = await traffic(open.client);
    const walletBefore = walletFen(open.userId);
    expect(walletBefore).toBe(0);

    // 1. Signed with another key.
    const forged = gateway.notification(trade);
    forged.sign = gatewaySign(forged, "0".repeat(32));
    const badSign = await gateway.send(notifyUrl(), forged);
    expect(badSign.body).toBe("fail");
    // The same fields with one changed after signing.
    const tampered = { ...gateway.notification(trade), money: "0.01" };
    expect((await gateway.send(notifyUrl(), tampered)).body).toBe("fail");

    // 2. Correctly signed, but not the amount the order owes (¥10).
    const wrongAmount = await gateway.notify(trade, { money: "0.01" });
    expect(wrongAmount.status).toBe(200);

    // 3. Correctly signed, for a trade number we never issued.
    const unknownTrade = "P20990101000000ZZZZZZ";
    const unknown = await gateway.send(
      notifyUrl(),
      gateway.notification(trade, { out_trade_no: unknownTrade }),
    );
    expect(unknown.body).toBe("success");

    // 4. A cancelled order paid anyway.
    const cancelled = await buy({ walletFen: 300 });
    const cancelledTrafficBefore = await traffic(cancelled.client);
    await call<Order>(cancelled.client, "/api/order/cancel_order", { order_id: cancelled.order._id });
    expect(walletFen(cancelled.userId)).toBe(300);
    gateway.pay(cancelled.gatewayOrder.outTradeNo);
    await gateway.notify(cancelled.gatewayOrder.outTradeNo);

    expect(await traffic(open.client)).toBe(trafficBefore);
    expect(await status(open.client, open.order._id)).toBe("wallet_spend");
    expect(walletFen(open.userId)).toBe(walletBefore);
    expect(await traffic(cancelled.client)).toBe(cancelledTrafficBefore);
    expect(await status(cancelled.client, cancelled.order._id)).toBe("cancled");
    expect(walletFen(cancelled.userId)).toBe(300);

    const logged = events(trade);
    expect(logged.map((e) => e.result)).toEqual(["rejected", "rejected", "anomaly"]);
    expect(logged[0]?.reason).toBe("bad signature");
    expect(logged[2]?.reason).toContain("amount 1 CNY, expected 1000");
    expect(events(unknownTrade).map((e) => [e.result, e.reason])).toEqual([
      ["rejected", "unknown trade number"],
    ]);
    const cancelledEvents = events(cancelled.gatewayOrder.outTradeNo);
    expect(cancelledEvents.map((e) => e.result)).toEqual(["anomaly"]);
    expect(cancelledEvents[0]?.reason).toContain("cancled");
    for (const event of logged) expect(event.raw).toContain(trade);

    // The genuine notification still works afterwards.
    expect((await gateway.notify(trade)).body).toBe("success");
    expect(await status(open.client, open.order._id)).toBe("paied");
    expect(await traffic(open.client)).toBe(trafficBefore + COMBO_TRAFFIC);
  });

  test("failure acknowledgements never contain success or ok", async () => {
    const { gatewayOrder } = await buy();
    const notStatus = await gateway.notify(gatewayOrder.outTradeNo, { trade_status: "WAIT_BUYER_PAY" });
    const otherPid = await gateway.notify(gatewayOrder.outTradeNo, { pid: "1002" });
    const nothing = await gateway.send(notifyUrl(), {});
    for (const delivery of [notStatus, otherPid, nothing]) {
      expect(delivery.body).toBe("fail");
      expect(delivery.body).not.toMatch(/success|ok/i);
    }
    expect(events(gatewayOrder.outTradeNo).map((e) => e.reason)).toEqual([
      "trade_status WAIT_BUYER_PAY",
      "pid 1002 is not ours",
    ]);
  });
});

describe("active query", () => {
  test("trade_status asks the gateway once the payment is 10 s old, at most every 15 s, and credits a paid answer", async () => {
    const { client, order, gatewayOrder } = await buy();
    const trade = gatewayOrder.outTradeNo;
    const queries = () => gateway.queryRequests.filter((q) => q.get("out_trade_no") === trade).length;
    const start = Date.now();
    try {
      expect(await status(client, order._id)).toBe("topay");
      expect(queries()).toBe(0);

      setSystemTime(start + 10_000);
      expect(await status(client, order._id)).toBe("topay");
      expect(queries()).toBe(1);
      gateway.pay(trade);
      // Less than 15 s after the last query: the gateway is not asked again.
      setSystemTime(start + 20_000);
      expect(await status(client, order._id)).toBe("topay");
      expect(queries()).toBe(1);

      setSystemTime(start + 25_500);
      const before = await traffic(client);
      expect(await status(client, order._id)).toBe("paied");
      expect(queries()).toBe(2);
      expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
      expect(events(trade).map((e) => [e.result, e.reason])).toEqual([["credited", "query"]]);
      const query = gateway.queryRequests.findLast((q) => q.get("out_trade_no") === trade);
      expect(query?.get("act")).toBe("order");
      expect(query?.get("pid")).toBe(gateway.pid);

      // The notification that arrives later is acknowledged and credits nothing more.
      expect((await gateway.notify(trade)).body).toBe("success");
      expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
      expect(events(trade).map((e) => e.result)).toEqual(["credited", "duplicate"]);
    } finally {
      setSystemTime();
    }
    // The key travels only to the gateway: never into the audit rows or the error log.
    const leaked = server.context.db
      .query<{ n: number }, [string]>(
        "SELECT (SELECT COUNT(*) FROM payment_events WHERE raw LIKE ?1) + (SELECT COUNT(*) FROM error_logs WHERE msg LIKE ?1 OR stack LIKE ?1) AS n",
      )
      .get(`%${gateway.key}%`);
    expect(leaked?.n).toBe(0);
  });

  test("another user's order is never queried", async () => {
    const { order, gatewayOrder } = await buy();
    const stranger = (await newBuyer()).client;
    try {
      setSystemTime(Date.now() + 60_000);
      const answer = await stranger.call("/api/shop/trade_status", { trade_id: order._id });
      expect(answer.code).toBe(Code.notFound);
    } finally {
      setSystemTime();
    }
    expect(
      gateway.queryRequests.filter((q) => q.get("out_trade_no") === gatewayOrder.outTradeNo),
    ).toHaveLength(0);
  });
});
