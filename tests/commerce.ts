/**
 * Shop test helpers: combos and coupons made through the services the back office uses, wallet
 * money given through the ledger (so balances stay derivable), and the sandbox gateway paid over
 * HTTP exactly as its cashier page's button does.
 */
import { tx } from "../src/db/db.ts";
import { formatYuan } from "../src/lib/money.ts";
import { comboInput } from "../src/modules/combo/schema.ts";
import { saveCombo } from "../src/modules/combo/service.ts";
import { couponInput } from "../src/modules/coupon/schema.ts";
import { saveCoupon } from "../src/modules/coupon/service.ts";
import { changeWallet } from "../src/modules/ledger/service.ts";
import type { Order, OrderStatus, PayResult } from "../src/modules/order/schema.ts";
import { newId } from "../src/rpc/ids.ts";
import { type ApiClient, startTestServer, type TestServer } from "./harness.ts";

/**
 * A test server whose shop collects alipay and wxpay through the sandbox gateway (a setting of
 * this server only, not the process-wide env).
 */
export async function startShopServer(options: { rateLimitScale?: number } = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  await server.context.settings.update({ sandbox_pay: true, alipay: "sandbox", wxpay: "sandbox" });
  return server;
}

export async function makeCombo(server: TestServer, fields: Record<string, unknown>) {
  return await saveCombo(server.context, comboInput.parse({ traffic: 0, vipDuration: 0, ...fields }));
}

/** Saves a coupon from the back office's wire fields (created `now` when given). */
export async function makeCoupon(server: TestServer, fields: Record<string, unknown>, now?: number) {
  return await saveCoupon(server.context, couponInput.parse(fields), now);
}

/** Adds (or, negative, takes) wallet money with its wallet entry, as a reward or an admin would. */
export async function giveWallet(server: TestServer, userId: string, fen: number, desc = "test") {
  const db = server.context.db;
  await tx(
    db,
    async () => await changeWallet(db, { userId, type: "adjust", changeFen: fen, desc, now: Date.now() }),
  );
}

export async function walletFen(server: TestServer, userId: string): Promise<number> {
  return (
    (await server.context.db.get<{ wallet_fen: number }>("SELECT wallet_fen FROM users WHERE id = ?", userId))
      ?.wallet_fen ?? Number.NaN
  );
}

/** The user's orders' ids, oldest first. */
export async function orderIds(server: TestServer, userId: string): Promise<string[]> {
  return (
    await server.context.db.all<{ id: string }>(
      "SELECT id FROM orders WHERE user_id = ? ORDER BY create_time, id",
      userId,
    )
  ).map((row) => row.id);
}

/** create_order; throws unless code 0. */
export async function createOrder(client: ApiClient, comboId: string): Promise<Order> {
  const answer = await client.call<Order>("/api/shop/create_order", { combo_id: comboId });
  if (answer.code !== 0) throw new Error(`create_order: ${answer.code} ${answer.msg}`);
  return answer.data;
}

export function dobuy(client: ApiClient, orderId: string, payMode: "alipay" | "wxpay" = "alipay") {
  return client.call<PayResult>("/api/shop/dobuy", { order_id: orderId, pay_mode: payMode, isMobile: false });
}

/** The trade number behind a sandbox pay result (its QR points at /pay/sandbox/<trade>). */
export function sandboxTradeNo(pay: PayResult): string {
  const match = /\/pay\/sandbox\/([^/?#]+)$/.exec(pay.qrcode);
  if (!match?.[1]) throw new Error(`not a sandbox payment: ${JSON.stringify(pay)}`);
  return decodeURIComponent(match[1]);
}

/** What the sandbox cashier's 确认支付 button posts. */
export function notifySandbox(server: { url: string }, tradeNo: string, fen: number): Promise<Response> {
  return fetch(`${server.url}/api/pay/notify/sandbox`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ trade_no: tradeNo, money: formatYuan(fen) }).toString(),
    redirect: "manual",
  });
}

/** dobuy with alipay and pay the exact amount through the sandbox; returns the trade number. */
export async function payWithSandbox(
  server: TestServer,
  client: ApiClient,
  orderId: string,
): Promise<string> {
  const pay = await dobuy(client, orderId);
  if (pay.code !== 0) throw new Error(`dobuy: ${pay.code} ${pay.msg}`);
  const tradeNo = sandboxTradeNo(pay.data);
  const response = await notifySandbox(server, tradeNo, Math.round(pay.data.request_pay_amound * 100));
  if (response.status !== 303) throw new Error(`sandbox notify answered ${response.status}`);
  return tradeNo;
}

export interface PaymentEvent {
  provider: string;
  trade_no: string;
  result: string;
  reason: string;
}

export async function paymentEvents(server: TestServer, tradeNo: string): Promise<PaymentEvent[]> {
  return await server.context.db.all<PaymentEvent>(
    "SELECT provider, trade_no, result, reason FROM payment_events WHERE trade_no = ? ORDER BY id",
    tradeNo,
  );
}

/**
 * `count` copies of the order `orderId` in `statuses` (taken in turn), each a second older than
 * the last: a long order history for the pager, made without the shop's open-order cap.
 */
export async function copyOrders(
  server: TestServer,
  orderId: string,
  count: number,
  statuses: readonly OrderStatus[] = ["paied"],
) {
  const db = server.context.db;
  const order = (await db.get<Record<string, unknown>>("SELECT * FROM orders WHERE id = ?", orderId)) ?? {};
  const columns = Object.keys(order);
  const insert = `INSERT INTO orders (${columns.map((c) => `"${c}"`).join(", ")})
    VALUES (${columns.map(() => "?").join(", ")})`;
  await tx(db, async () => {
    for (let i = 1; i <= count; i++) {
      const copy: Record<string, unknown> = {
        ...order,
        id: newId(),
        status: statuses[i % statuses.length],
        create_time: Number(order.create_time) - i * 1000,
      };
      await db.run(insert, ...columns.map((c) => copy[c] as string | number | null));
    }
  });
}
