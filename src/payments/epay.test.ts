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
  type MapiMode,
  startFakeEpayGateway,
} from "../../tests/fakes/epay-gateway.ts";
import {
  type ApiClient,
  decodeAnswer,
  loggedInClient,
  startTestServer,
  type TestServer,
} from "../../tests/harness.ts";
import { LOG_WINDOW_MS } from "../db/counted-log.ts";
import { tx } from "../db/db.ts";
import { GB } from "../lib/traffic.ts";
import type { Combo } from "../modules/combo/schema.ts";
import { changeWallet } from "../modules/ledger/service.ts";
import { type Order, OrderMsg, type PayResult, type TradeStatus } from "../modules/order/schema.ts";
import type { UserInfo } from "../modules/user/schema.ts";
import { Code } from "../rpc/codes.ts";
import { toBase64Json } from "../rpc/envelope.ts";
import { epaySign } from "./epay.ts";
import { logPaymentEvent, REJECTED_PER_WINDOW } from "./events.ts";

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

/** `client.ok(path, payload)`: the data of a call that must succeed. */
const call = <T>(client: ApiClient, path: string, payload: unknown = {}) => client.ok<T>(path, payload);

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
    await tx(
      db,
      async () =>
        await changeWallet(db, {
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
const walletFen = async (userId: string) =>
  (await server.context.db.get<{ wallet_fen: number }>("SELECT wallet_fen FROM users WHERE id = ?", userId))
    ?.wallet_fen;

async function events(tradeNo: string) {
  return await server.context.db.all<{ result: string; reason: string; raw: string; repeat_count: number }>(
    "SELECT result, reason, raw, repeat_count FROM payment_events WHERE trade_no = ? ORDER BY id",
    tradeNo,
  );
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
    // One credit, and the 49 repeats counted on one row rather than stored 49 times.
    expect((await events(gatewayOrder.outTradeNo)).map((e) => [e.result, e.repeat_count])).toEqual([
      ["credited", 1],
      ["duplicate", 49],
    ]);
    const records = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM traffic_records WHERE order_id = ?",
      order._id,
    );
    expect(records?.n).toBe(1);
    const payment = await server.context.db.get<{ gateway_trade_no: string; status: string }>(
      "SELECT gateway_trade_no, status FROM payments WHERE trade_no = ?",
      gatewayOrder.outTradeNo,
    );
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
    const walletBefore = await walletFen(open.userId);
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
    expect(await walletFen(cancelled.userId)).toBe(300);
    gateway.pay(cancelled.gatewayOrder.outTradeNo);
    await gateway.notify(cancelled.gatewayOrder.outTradeNo);

    expect(await traffic(open.client)).toBe(trafficBefore);
    expect(await status(open.client, open.order._id)).toBe("wallet_spend");
    expect(await walletFen(open.userId)).toBe(walletBefore);
    expect(await traffic(cancelled.client)).toBe(cancelledTrafficBefore);
    expect(await status(cancelled.client, cancelled.order._id)).toBe("cancled");
    expect(await walletFen(cancelled.userId)).toBe(300);

    const logged = await events(trade);
    // Both forgeries are the same event (bad signature on this trade): one row counting two.
    expect(logged.map((e) => [e.result, e.repeat_count])).toEqual([
      ["rejected", 2],
      ["anomaly", 1],
    ]);
    expect(logged[0]?.reason).toBe("bad signature");
    expect(logged[1]?.reason).toContain("amount 1 CNY, expected 1000");
    expect((await events(unknownTrade)).map((e) => [e.result, e.reason])).toEqual([
      ["rejected", "unknown trade number"],
    ]);
    const cancelledEvents = await events(cancelled.gatewayOrder.outTradeNo);
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
    expect((await events(gatewayOrder.outTradeNo)).map((e) => e.reason)).toEqual([
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
      expect((await events(trade)).map((e) => [e.result, e.reason])).toEqual([["credited", "query"]]);
      const query = gateway.queryRequests.findLast((q) => q.get("out_trade_no") === trade);
      expect(query?.get("act")).toBe("order");
      expect(query?.get("pid")).toBe(gateway.pid);

      // The notification that arrives later is acknowledged and credits nothing more.
      expect((await gateway.notify(trade)).body).toBe("success");
      expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
      expect((await events(trade)).map((e) => e.result)).toEqual(["credited", "duplicate"]);
    } finally {
      setSystemTime();
    }
    // The key travels only to the gateway: never into the audit rows or the error log.
    const leaked = await server.context.db.get<{ n: number }>(
      "SELECT (SELECT COUNT(*) FROM payment_events WHERE raw LIKE ?1) + (SELECT COUNT(*) FROM error_logs WHERE msg LIKE ?1 OR stack LIKE ?1) AS n",
      `%${gateway.key}%`,
    );
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

/** An envelope call with extra request headers (a forged Host, say). */
async function callWithHeaders<T>(
  client: ApiClient,
  path: string,
  payload: unknown,
  headers: Record<string, string>,
) {
  return decodeAnswer<T>(await client.raw(path, JSON.stringify({ data: toBase64Json(payload) }), headers));
}

const FORGED_HOST = {
  host: "evil.example",
  "x-forwarded-host": "evil.example",
  "x-forwarded-proto": "https",
};

async function errorRows(name: string) {
  return await server.context.db.all<{ msg: string; repeat_count: number }>(
    "SELECT msg, repeat_count FROM error_logs WHERE name = ? ORDER BY id",
    name,
  );
}

describe("callback URLs (issue 11, finding 7)", () => {
  test("a forged Host header never reaches the gateway: notify_url and return_url are on the configured origin", async () => {
    const site = "https://pay-panel.example";
    await server.context.settings.update({ site_url: site });
    try {
      const { client } = await newBuyer();
      const order = await call<Order>(client, "/api/shop/create_order", { combo_id: combo._id });
      const answer = await callWithHeaders<PayResult>(
        client,
        "/api/shop/dobuy",
        { order_id: order._id, pay_mode: "alipay", return_url: "https://evil.example/#/order" },
        FORGED_HOST,
      );
      expect(answer.code).toBe(0);
      const request = gateway.mapiRequests.at(-1);
      expect(request?.signValid).toBe(true);
      expect(request?.params.notify_url).toBe(`${site}/api/pay/notify/epay`);
      // The customer's return URL pointed elsewhere: the panel's own is used.
      expect(request?.params.return_url).toBe(`${site}/#/order?payment=success&order=${order._id}`);
      expect(JSON.stringify(gateway.mapiRequests.at(-1)?.params)).not.toContain("evil.example");

      // A return URL on the site itself is kept; the notify_url setting wins for callbacks.
      await server.context.settings.update({ notify_url: "https://callback.example/" });
      const second = await call<Order>(client, "/api/shop/create_order", { combo_id: combo._id });
      const kept = await callWithHeaders<PayResult>(
        client,
        "/api/shop/dobuy",
        { order_id: second._id, pay_mode: "wxpay", return_url: `${site}/#/order?payment=success` },
        FORGED_HOST,
      );
      expect(kept.code).toBe(0);
      expect(gateway.mapiRequests.at(-1)?.params).toMatchObject({
        notify_url: "https://callback.example/api/pay/notify/epay",
        return_url: `${site}/#/order?payment=success`,
      });
    } finally {
      await server.context.settings.update({ site_url: server.url, notify_url: "" });
    }
  });

  test("without a site origin a gateway payment is refused, the gateway is not asked, and the error log says why", async () => {
    await server.context.settings.update({ site_url: "", preferDomain: "" });
    try {
      const { client } = await newBuyer();
      const order = await call<Order>(client, "/api/shop/create_order", { combo_id: combo._id });
      const asked = gateway.mapiRequests.length;
      const answer = await client.call("/api/shop/dobuy", { order_id: order._id, pay_mode: "alipay" });
      expect(answer.code).toBe(Code.badInput);
      expect(answer.msg).toBe(OrderMsg.noSiteOrigin);
      expect(answer.msg).toContain("站点地址");
      expect(gateway.mapiRequests.length).toBe(asked);
      expect(await status(client, order._id)).toBe("topay");
      const attempts = await server.context.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM payments WHERE order_id = ?",
        order._id,
      );
      expect(attempts?.n).toBe(0);
      const logged = await errorRows("pay epay 支付宝");
      expect(logged.at(-1)?.msg).toContain("site_url");
    } finally {
      await server.context.settings.update({ site_url: server.url });
    }
  });
});

describe("links from the gateway (issue 11, finding 12)", () => {
  test("javascript:, data:, vbscript: and file: links are refused (1000), the attempt closed and logged", async () => {
    const unsafe: Record<string, string>[] = [
      { payurl: "javascript:alert(1)" },
      { qrcode: "javascript:alert(document.cookie)" },
      { urlscheme: " java\tscript:alert(1)" },
      { qrcode: "data:text/html,<script>alert(1)</script>" },
      { urlscheme: "vbscript:msgbox(1)" },
      { payurl: "file:///etc/passwd" },
    ];
    const { client } = await newBuyer();
    try {
      for (const reply of unsafe) {
        for (const isMobile of [false, true]) {
          gateway.mode = { code: 1, msg: "", trade_no: "2024050112301599999", ...reply } as MapiMode;
          const order = await call<Order>(client, "/api/shop/create_order", { combo_id: combo._id });
          const answer = await client.call("/api/shop/dobuy", {
            order_id: order._id,
            pay_mode: "alipay",
            isMobile,
          });
          expect({ reply, isMobile, code: answer.code, msg: answer.msg, data: answer.data }).toEqual({
            reply,
            isMobile,
            code: Code.badInput,
            msg: OrderMsg.unsafePayLink,
            data: null,
          });
          const attempts = await server.context.db.all<{ status: string }>(
            "SELECT status FROM payments WHERE order_id = ?",
            order._id,
          );
          expect(attempts.map((a) => a.status)).toEqual(["closed"]);
          // Given up, so the next create_order makes a new order rather than handing this one back.
          await call(client, "/api/order/cancel_order", { order_id: order._id });
        }
      }
    } finally {
      gateway.mode = "qrcode";
    }
    const logged = (await errorRows("pay epay 支付宝")).map((row) => row.msg);
    for (const scheme of ["javascript:", "data:", "vbscript:", "file:"]) {
      expect(logged.some((msg) => msg.includes(`refused scheme ${scheme}`))).toBe(true);
    }
  });

  test("the wallet apps' schemes and http(s) pass", async () => {
    const allowed: Record<string, string>[] = [
      { qrcode: "weixin://wxpay/bizpayurl?pr=abc123" },
      { urlscheme: "alipays://platformapi/startapp?saId=10000007&qrcode=x" },
      { qrcode: "wxp://f2f0abc" },
      { payurl: "http://cashier.example/pay/1" },
    ];
    const { client } = await newBuyer();
    try {
      for (const reply of allowed) {
        gateway.mode = { code: 1, msg: "", trade_no: "2024050112301599998", ...reply } as MapiMode;
        const order = await call<Order>(client, "/api/shop/create_order", { combo_id: combo._id });
        const pay = await call<PayResult>(client, "/api/shop/dobuy", {
          order_id: order._id,
          pay_mode: "wxpay",
        });
        expect([pay.qrcode, pay.payurl, pay.urlscheme]).toContain(Object.values(reply)[0] as string);
        await call(client, "/api/order/cancel_order", { order_id: order._id });
      }
    } finally {
      gateway.mode = "qrcode";
    }
  });
});

describe("payment_events against strangers (issue 11, finding 13)", () => {
  test("10 000 forged notifications leave a bounded number of rows that count them; a real credit afterwards is recorded in full", async () => {
    const { client, order, gatewayOrder } = await buy();
    gateway.pay(gatewayOrder.outTradeNo);
    const db = server.context.db;
    // A window of its own, so rows of the other tests do not count towards its cap: the one after
    // next, since earlier tests set the clock up to a minute ahead and, near the top of an hour,
    // their events land in the next window.
    const windowStart = (Math.floor(Date.now() / LOG_WINDOW_MS) + 2) * LOG_WINDOW_MS;
    setSystemTime(windowStart + 60_000);
    try {
      const forged = (i: number) => {
        // Half repeat one forgery, half invent a new trade number each time; all badly signed.
        const params = gateway.notification(gatewayOrder.outTradeNo, {
          out_trade_no: i % 2 === 0 ? "P20240101000000FORGED" : `P2024${String(i).padStart(16, "0")}`,
          money: "0.01",
          junk: "x".repeat(4000),
        });
        return { ...params, sign: "0".repeat(32) };
      };
      for (let i = 0; i < 10_000; i += 100) {
        const batch = Array.from({ length: 100 }, (_, k) => gateway.send(notifyUrl(), forged(i + k)));
        for (const delivery of await Promise.all(batch)) expect(delivery.body).toBe("fail");
      }
      // Made-up provider names share one cap.
      await Promise.all(
        Array.from({ length: 200 }, (_, k) => fetch(`${server.url}/api/pay/notify/nope${k}?a=1`)),
      );
      const rows = await db.all<{ provider: string; n: number; counted: number; widest: number }>(
        `SELECT provider, COUNT(*) AS n, SUM(repeat_count) AS counted, MAX(LENGTH(raw)) AS widest
           FROM payment_events WHERE create_time >= ? GROUP BY provider ORDER BY provider`,
        windowStart,
      );
      expect(rows.map((r) => r.provider)).toEqual(["epay", "unknown"]);
      const [epay, unknown] = rows;
      expect(epay?.counted).toBe(10_000);
      expect(epay?.n).toBeLessThanOrEqual(REJECTED_PER_WINDOW + 1);
      expect(epay?.widest).toBeLessThanOrEqual(2048);
      expect(unknown?.counted).toBe(200);
      expect(unknown?.n).toBeLessThanOrEqual(REJECTED_PER_WINDOW + 1);
      const repeated = await events("P20240101000000FORGED");
      expect(repeated.map((e) => [e.result, e.reason, e.repeat_count])).toEqual([
        ["rejected", "bad signature", 5000],
      ]);

      // The gateway's genuine notification still credits and is stored whole.
      const before = await traffic(client);
      const real = await gateway.notify(gatewayOrder.outTradeNo);
      expect(real.body).toBe("success");
      expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
      expect(await status(client, order._id)).toBe("paied");
      const credited = (await events(gatewayOrder.outTradeNo)).filter((e) => e.result === "credited");
      expect(credited).toHaveLength(1);
      expect(credited[0]?.repeat_count).toBe(1);
      expect(credited[0]?.raw).toBe(`GET ${new URL(real.url).search} `);
    } finally {
      setSystemTime();
    }
  }, 120_000);

  test("refused and duplicate events expire after 90 days; credits and anomalies stay", async () => {
    const db = server.context.db;
    const now = Date.now() + 10 * LOG_WINDOW_MS;
    const old = now - 91 * 86_400_000;
    const recent = now - 89 * 86_400_000;
    const insert = `INSERT INTO payment_events (provider, trade_no, result, reason, create_time, last_time)
       VALUES ('epay', ?, ?, 'expiry test', ?, ?)`;
    for (const result of ["credited", "duplicate", "rejected", "anomaly"]) {
      await db.run(insert, `OLD-${result}`, result, old, old);
      await db.run(insert, `RECENT-${result}`, result, recent, recent);
    }
    // A rejected event first seen long ago but repeated recently stays.
    await db.run(insert, "OLD-BUT-SEEN", "rejected", old, recent);
    await logPaymentEvent(db, { provider: "epay", result: "rejected", reason: "expiry trigger" }, now);
    const left = (
      await db.all<{ trade_no: string }>(
        "SELECT trade_no FROM payment_events WHERE reason = 'expiry test' ORDER BY trade_no",
      )
    ).map((r) => r.trade_no);
    expect(left).toEqual([
      "OLD-BUT-SEEN",
      "OLD-anomaly",
      "OLD-credited",
      "RECENT-anomaly",
      "RECENT-credited",
      "RECENT-duplicate",
      "RECENT-rejected",
    ]);
  });
});

describe("settings that would break notifications (issue 11, finding 14)", () => {
  test("an invalid timezone already in the database falls back to the default: a notification still credits", async () => {
    const { client, order, gatewayOrder } = await buy();
    gateway.pay(gatewayOrder.outTradeNo);
    // As an older version could have saved it.
    await server.context.db.run(
      "INSERT INTO settings (key, value, update_time) VALUES ('timezone', ?, 0) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      JSON.stringify("Mars/Olympus"),
    );
    await server.context.settings.update({});
    try {
      expect(await server.context.settings.get("timezone")).toBe("Asia/Shanghai");
      const before = await traffic(client);
      const delivery = await gateway.notify(gatewayOrder.outTradeNo);
      expect([delivery.status, delivery.body]).toEqual([200, "success"]);
      expect(await status(client, order._id)).toBe("paied");
      expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
    } finally {
      await server.context.db.run("DELETE FROM settings WHERE key = 'timezone'");
      await server.context.settings.update({});
    }
  });
});

describe("notification bodies (issue 11, finding 14)", () => {
  test("a chunked 1 MB body is refused (the limit is 64 KB) and leaves no event", async () => {
    const before = (await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM payment_events"))
      ?.n;
    let pulled = 0;
    const chunk = new Uint8Array(16 * 1024).fill(0x61);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 1024 * 1024) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${server.url}/api/pay/notify/epay`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toBe("fail");
    const after = (await server.context.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM payment_events"))?.n;
    expect(after).toBe(before);
  });
});
