/**
 * USDT-TRC20 end to end: a real server configured by an admin with a receiving address and a fake
 * TronGrid (tests/fakes/trongrid.ts) serving the real trc20 transfer listing. Tests drive the
 * watcher with pollUsdtOnce (the timer's interval is set to an hour so it stays out of the way),
 * except the one that checks the timer itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  FAKE_USDT_CONTRACT,
  type FakeTronGrid,
  randomTronAddress,
  startFakeTronGrid,
  USDT_CONTRACT,
} from "../../tests/fakes/trongrid.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "../../tests/harness.ts";
import { runsJob } from "../cluster/leases.ts";
import { parseDecimal } from "../lib/money.ts";
import { GB } from "../lib/traffic.ts";
import type { Combo } from "../modules/combo/schema.ts";
import type { Order, PayResult, TradeStatus } from "../modules/order/schema.ts";
import type { UserInfo } from "../modules/user/schema.ts";
import { Code } from "../rpc/codes.ts";
import { USDT_BUSY, USDT_SLOT_STEPS, usdtUnitsFor } from "./usdt.ts";
import { pollUsdtOnce } from "./usdt-watcher.ts";

const OUR_ADDRESS = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7";
const API_KEY = "test-trongrid-key";
const COMBO_TRAFFIC = 50 * GB;

let server: TestServer;
let grid: FakeTronGrid;
let admin: ApiClient;

/** `client.ok(path, payload)`: the data of a call that must succeed. */
const call = <T>(client: ApiClient, path: string, payload: unknown = {}) => client.ok<T>(path, payload);

const setConfig = (patch: Record<string, unknown>) => call(admin, "/api/admin/config/set_config", patch);

beforeAll(async () => {
  // Short leases: a test takes the watcher's lease away and gives it back.
  server = await startTestServer({ leases: { ttlMs: 2_000, renewMs: 100, tryMs: 100, marginMs: 500 } });
  grid = startFakeTronGrid();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  await setConfig({
    exchange_rate: 7.2,
    usdtCheckTime: 20,
    usdtCheckInterval: 3600,
    trongrid_url: grid.url,
    trongrid_api_key: API_KEY,
  });
});
afterAll(async () => {
  await server?.close();
  await grid?.close();
});

/** A combo at its own price, so each test's USDT amounts do not meet another test's reservations. */
async function comboAt(price: number): Promise<Combo> {
  return call<Combo>(admin, "/api/admin/combo/update_combo", {
    name: `流量包 ${price}`,
    price,
    traffic: COMBO_TRAFFIC,
    vipDuration: 0,
  });
}

interface UsdtPurchase {
  client: ApiClient;
  order: Order;
  pay: PayResult;
  units: number;
}

async function buyWithUsdt(combo: Combo, client?: ApiClient): Promise<UsdtPurchase> {
  const buyer = client ?? (await loggedInClient(server)).client;
  const order = await call<Order>(buyer, "/api/shop/create_order", { combo_id: combo._id });
  const pay = await call<PayResult>(buyer, "/api/shop/dobuy", { order_id: order._id, pay_mode: "usdt" });
  return { client: buyer, order, pay, units: parseDecimal(pay.request_pay_amound_usdt, 6) ?? Number.NaN };
}

const traffic = async (client: ApiClient) => (await call<UserInfo>(client, "/api/user/userinfo")).traffic;
const status = async (client: ApiClient, orderId: string) =>
  (await call<TradeStatus>(client, "/api/shop/trade_status", { trade_id: orderId })).status;

async function recordedTransfer(txId: string) {
  return await server.context.db.get<{
    status: string;
    trade_no: string | null;
    note: string;
    units: number;
  }>("SELECT status, trade_no, note, units FROM usdt_transfers WHERE tx_id = ?", txId);
}

async function paymentOf(orderId: string) {
  return await server.context.db.get<{
    trade_no: string;
    create_time: number;
    expire_time: number;
    usdt_rate_fen: number;
  }>(
    "SELECT trade_no, create_time, expire_time, usdt_rate_fen FROM payments WHERE order_id = ? ORDER BY create_time DESC LIMIT 1",
    orderId,
  );
}

async function creditedEvents(tradeNo: string) {
  return (
    await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM payment_events WHERE trade_no = ? AND result = 'credited'",
      tradeNo,
    )
  )?.n;
}

describe("USDT amounts", () => {
  test("the base amount is the price at the rate, rounded up to 0.001 USDT", () => {
    expect(usdtUnitsFor(1500, 720)).toBe(2_084_000);
    expect(usdtUnitsFor(1440, 720)).toBe(2_000_000);
    expect(usdtUnitsFor(1, 720)).toBe(2_000);
    // The largest price (¥1,000,000) at the smallest rate (0.01) stays exact.
    expect(usdtUnitsFor(100_000_000, 1)).toBe(100_000_000_000_000);
  });

  test("USDT is offered only with a TRON address set", async () => {
    const visitor = (await loggedInClient(server)).client;
    expect(await call<string[]>(visitor, "/api/shop/pay_modes")).not.toContain("usdt");
    await setConfig({ usdtpay: "not-an-address" });
    expect(await call<string[]>(visitor, "/api/shop/pay_modes")).not.toContain("usdt");
    await setConfig({ usdtpay: OUR_ADDRESS });
    expect(await call<string[]>(visitor, "/api/shop/pay_modes")).toContain("usdt");
  });

  test("nothing pending: the watcher sends no request", async () => {
    const result = await pollUsdtOnce(server.context);
    expect(result.requests).toBe(0);
    expect(grid.requests).toHaveLength(0);
  });

  test("two concurrent orders of the same price get different amounts; a transfer credits the right one", async () => {
    const combo = await comboAt(15);
    const [first, second] = await Promise.all([buyWithUsdt(combo), buyWithUsdt(combo)]);
    if (!first || !second) throw new Error("two purchases expected");
    expect([first.pay.request_pay_amound_usdt, second.pay.request_pay_amound_usdt].sort()).toEqual([
      "2.084",
      "2.085",
    ]);
    for (const purchase of [first, second]) {
      expect(purchase.pay.usdtAdress).toBe(OUR_ADDRESS);
      expect(purchase.pay.usdtNetwork).toBe("TRC20");
      expect(purchase.pay.request_pay_amound).toBe(15);
      expect(purchase.pay.third_pay_platform).toBe("USDT-TRC20");
      const payment = await paymentOf(purchase.order._id);
      expect(payment?.usdt_rate_fen).toBe(720);
      expect(purchase.pay.expireTime).toBe((payment?.create_time ?? 0) + 20 * 60_000);
      expect(payment?.expire_time).toBe(purchase.pay.expireTime);
    }
    const [cheaper, dearer] = first.units < second.units ? [first, second] : [second, first];
    const cheaperBefore = await traffic(cheaper.client);
    const dearerBefore = await traffic(dearer.client);

    const oldestPending = Math.min(...(await pendingSince()));
    const transfer = grid.addTransfer({ to: OUR_ADDRESS, value: String(dearer.units) });
    await pollUsdtOnce(server.context);

    expect(await status(dearer.client, dearer.order._id)).toBe("paied");
    expect(await traffic(dearer.client)).toBe(dearerBefore + COMBO_TRAFFIC);
    expect(await status(cheaper.client, cheaper.order._id)).toBe("topay");
    expect(await traffic(cheaper.client)).toBe(cheaperBefore);
    expect(await recordedTransfer(transfer.transaction_id)).toMatchObject({
      status: "matched",
      trade_no: (await paymentOf(dearer.order._id))?.trade_no,
      units: dearer.units,
    });

    // What the watcher asked TronGrid.
    const request = grid.requests.at(-1);
    expect(request?.address).toBe(OUR_ADDRESS);
    expect(request?.apiKey).toBe(API_KEY);
    expect(Object.fromEntries(request?.query ?? [])).toEqual({
      only_to: "true",
      only_confirmed: "true",
      contract_address: USDT_CONTRACT,
      limit: "200",
      min_timestamp: String(oldestPending - 60_000),
    });

    // The other amount pays the other order.
    grid.addTransfer({ to: OUR_ADDRESS, value: String(cheaper.units) });
    await pollUsdtOnce(server.context);
    expect(await status(cheaper.client, cheaper.order._id)).toBe("paied");
    expect(await traffic(cheaper.client)).toBe(cheaperBefore + COMBO_TRAFFIC);
  });

  test("a new order does not take an amount still held by an open one", async () => {
    const combo = await comboAt(15);
    const held = await buyWithUsdt(combo);
    const next = await buyWithUsdt(combo);
    expect(next.units).toBe(held.units + 1000);
  });

  test(`after ${USDT_SLOT_STEPS} held amounts the order is refused as busy`, async () => {
    const combo = await comboAt(77);
    const base = usdtUnitsFor(7700, 720);
    const hold = "INSERT INTO usdt_slots (address, units, trade_no, hold_until) VALUES (?, ?, 'PHELD', ?)";
    for (let step = 0; step < USDT_SLOT_STEPS; step += 1)
      await server.context.db.run(hold, OUR_ADDRESS, base + step * 1000, Date.now() + 3_600_000);
    const buyer = (await loggedInClient(server)).client;
    const order = await call<Order>(buyer, "/api/shop/create_order", { combo_id: combo._id });
    const answer = await buyer.call("/api/shop/dobuy", { order_id: order._id, pay_mode: "usdt" });
    expect(answer.code).toBe(Code.badInput);
    expect(answer.msg).toBe(USDT_BUSY);
    expect(await status(buyer, order._id)).toBe("topay");
  });
});

/** Creation times of the pending USDT payments (the watcher looks back from the oldest one). */
async function pendingSince(): Promise<number[]> {
  return (
    await server.context.db.all<{ create_time: number }>(
      "SELECT create_time FROM payments WHERE provider = 'usdt_trc20' AND status = 'pending'",
    )
  ).map((row) => row.create_time);
}

describe("USDT watcher", () => {
  test("a fake token, an Approval and a transfer to someone else credit nothing, even when the API returns them", async () => {
    const { client, order, units } = await buyWithUsdt(await comboAt(20));
    const before = await traffic(client);
    const fakeToken = grid.addTransfer({
      to: OUR_ADDRESS,
      value: String(units),
      token_info: { symbol: "USDT", address: FAKE_USDT_CONTRACT, decimals: 6, name: "Tether USD" },
    });
    const approval = grid.addTransfer({ to: OUR_ADDRESS, value: String(units), type: "Approval" });
    const elsewhere = grid.addTransfer({ to: randomTronAddress(), value: String(units) });
    const unconfirmed = grid.addTransfer({ to: OUR_ADDRESS, value: String(units), confirmed: false });

    await pollUsdtOnce(server.context);
    grid.ignoreFilters = true;
    try {
      await pollUsdtOnce(server.context);
    } finally {
      grid.ignoreFilters = false;
    }

    expect(await status(client, order._id)).toBe("topay");
    expect(await traffic(client)).toBe(before);
    for (const item of [fakeToken, approval, elsewhere])
      expect(await recordedTransfer(item.transaction_id)).toBeNull();
    // Not solidified yet: left for a later poll, not recorded.
    expect(await recordedTransfer(unconfirmed.transaction_id)).toBeNull();

    // Once the same transfer is confirmed, it pays.
    unconfirmed.confirmed = true;
    await pollUsdtOnce(server.context);
    expect(await status(client, order._id)).toBe("paied");
    expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
  });

  test("a transfer that matches no open order is recorded as unmatched, not credited", async () => {
    const { client, order, units } = await buyWithUsdt(await comboAt(25));
    const before = await traffic(client);
    const stray = grid.addTransfer({ to: OUR_ADDRESS, value: "1234000" });
    const short = grid.addTransfer({ to: OUR_ADDRESS, value: String(units - 1000) });
    const early = grid.addTransfer({
      to: OUR_ADDRESS,
      value: String(units),
      block_timestamp: order.create_time - 30_000,
    });

    await pollUsdtOnce(server.context);

    for (const item of [stray, short, early]) {
      expect(await recordedTransfer(item.transaction_id)).toMatchObject({
        status: "unmatched",
        trade_no: null,
        units: Number(item.value),
      });
    }
    expect(await status(client, order._id)).toBe("topay");
    expect(await traffic(client)).toBe(before);
    expect(await creditedEvents((await paymentOf(order._id))?.trade_no ?? "")).toBe(0);
  });

  test("the same transaction id seen twice credits once", async () => {
    const { client, order, units } = await buyWithUsdt(await comboAt(30));
    const other = await buyWithUsdt(await comboAt(30));
    const before = await traffic(client);
    const transfer = grid.addTransfer({ to: OUR_ADDRESS, value: String(units) });
    // TronGrid lists it twice (e.g. across pages) and the watcher polls twice.
    grid.transfers.push({ ...transfer });
    await pollUsdtOnce(server.context);
    await pollUsdtOnce(server.context);

    expect(await status(client, order._id)).toBe("paied");
    expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
    const trade = (await paymentOf(order._id))?.trade_no ?? "";
    expect(await creditedEvents(trade)).toBe(1);
    const rows = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM usdt_transfers WHERE tx_id = ?",
      transfer.transaction_id,
    );
    expect(rows?.n).toBe(1);

    // A second, different transfer of the same amount is money to review, not a second crediting.
    const again = grid.addTransfer({ to: OUR_ADDRESS, value: String(units) });
    await pollUsdtOnce(server.context);
    expect(await traffic(client)).toBe(before + COMBO_TRAFFIC);
    expect(await recordedTransfer(again.transaction_id)).toMatchObject({
      status: "unmatched",
      trade_no: trade,
    });
    expect(await status(other.client, other.order._id)).toBe("topay");
  });

  test("a transfer for a cancelled order is recorded and logged, not credited", async () => {
    const { client, order, units } = await buyWithUsdt(await comboAt(35));
    const before = await traffic(client);
    await call<Order>(client, "/api/order/cancel_order", { order_id: order._id });
    await buyWithUsdt(await comboAt(36)); // keeps the address watched
    const transfer = grid.addTransfer({ to: OUR_ADDRESS, value: String(units) });
    await pollUsdtOnce(server.context);

    expect(await status(client, order._id)).toBe("cancled");
    expect(await traffic(client)).toBe(before);
    const trade = (await paymentOf(order._id))?.trade_no;
    expect(await recordedTransfer(transfer.transaction_id)).toMatchObject({
      status: "rejected",
      trade_no: trade,
    });
    const event = await server.context.db.get<{ result: string; reason: string }>(
      "SELECT result, reason FROM payment_events WHERE trade_no = ?",
      trade ?? "",
    );
    expect(event?.result).toBe("anomaly");
    expect(event?.reason).toContain("cancled");
  });

  test("follows fingerprint pages with the same filters", async () => {
    const { client, order, units } = await buyWithUsdt(await comboAt(40));
    const match = grid.addTransfer({ to: OUR_ADDRESS, value: String(units), block_timestamp: Date.now() });
    for (let i = 1; i <= 5; i += 1)
      grid.addTransfer({
        to: OUR_ADDRESS,
        value: String(9_000_000 + i * 1000),
        block_timestamp: Date.now() + i,
      });
    grid.maxPageSize = 2;
    const from = grid.requests.length;
    try {
      await pollUsdtOnce(server.context);
    } finally {
      grid.maxPageSize = 200;
    }
    expect(await status(client, order._id)).toBe("paied");
    expect((await recordedTransfer(match.transaction_id))?.status).toBe("matched");
    const pages = grid.requests.slice(from);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    const withoutFingerprint = (query: URLSearchParams) => {
      const copy = new URLSearchParams(query);
      copy.delete("fingerprint");
      return copy.toString();
    };
    for (const page of pages.slice(1)) {
      expect(page.query.get("fingerprint")).toBeTruthy();
      expect(withoutFingerprint(page.query)).toBe(
        withoutFingerprint(pages[0]?.query ?? new URLSearchParams()),
      );
    }
  });

  test("a throttled answer stops the poll without crediting or recording anything", async () => {
    const { client, order, units } = await buyWithUsdt(await comboAt(45));
    const transfer = grid.addTransfer({ to: OUR_ADDRESS, value: String(units) });
    grid.failNext(429);
    const throttled = await pollUsdtOnce(server.context);
    expect(throttled.throttled).toBe(true);
    expect(await recordedTransfer(transfer.transaction_id)).toBeNull();
    expect(await status(client, order._id)).toBe("topay");
    const retried = await pollUsdtOnce(server.context);
    expect(retried.throttled).toBe(false);
    expect(await status(client, order._id)).toBe("paied");
  });

  test("with USDT switched off the watcher sends no request, even with orders pending", async () => {
    await buyWithUsdt(await comboAt(50));
    await setConfig({ usdtpay: "" });
    try {
      const from = grid.requests.length;
      const result = await pollUsdtOnce(server.context);
      expect(result.requests).toBe(0);
      expect(grid.requests.length).toBe(from);
    } finally {
      await setConfig({ usdtpay: OUR_ADDRESS });
    }
  });

  test("the server's own watcher polls every usdtCheckInterval seconds and credits", async () => {
    const { client, order, units } = await buyWithUsdt(await comboAt(55));
    grid.addTransfer({ to: OUR_ADDRESS, value: String(units) });
    await setConfig({ usdtCheckInterval: 3 });
    try {
      let seen = "topay";
      for (let tries = 0; tries < 100 && seen !== "paied"; tries += 1) {
        await Bun.sleep(200);
        seen = await status(client, order._id);
      }
      expect(seen).toBe("paied");
    } finally {
      await setConfig({ usdtCheckInterval: 3600 });
    }
  });
});

test("a watcher whose lease went to another replica and came back polls and credits again (issue 28)", async () => {
  const { client, order, units } = await buyWithUsdt(await comboAt(60));
  const db = server.context.db;
  // Another replica holds the lease (as after this one was cut off): the watcher stops.
  await db.run(
    "UPDATE leases SET holder = 'another-replica', expire_time = ? WHERE job = 'usdt-watcher'",
    Date.now() + 600_000,
  );
  for (let tries = 0; tries < 100 && runsJob(server.context, "usdt-watcher"); tries += 1) await Bun.sleep(50);
  expect(runsJob(server.context, "usdt-watcher")).toBe(false);
  // That replica stopped cleanly: this one takes the lease again and starts a new watcher.
  await db.run("DELETE FROM leases WHERE job = 'usdt-watcher'");
  for (let tries = 0; tries < 100 && !runsJob(server.context, "usdt-watcher"); tries += 1)
    await Bun.sleep(50);
  expect(runsJob(server.context, "usdt-watcher")).toBe(true);
  grid.addTransfer({ to: OUR_ADDRESS, value: String(units) });
  await setConfig({ usdtCheckInterval: 3 });
  try {
    let seen = "topay";
    for (let tries = 0; tries < 100 && seen !== "paied"; tries += 1) {
      await Bun.sleep(200);
      seen = await status(client, order._id);
    }
    expect(seen).toBe("paied");
  } finally {
    await setConfig({ usdtCheckInterval: 3600 });
  }
});
