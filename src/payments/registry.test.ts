/**
 * Who collects each pay mode (issue 12): FERRY_SANDBOX_PAY=1 alone makes the sandbox collect
 * alipay and wxpay wherever no real gateway is configured, the back office is told what is in
 * force and why, and a shop nobody can pay refuses the order before it exists.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
  createOrder,
  giveWallet,
  makeCombo,
  orderIds,
  payWithSandbox,
  walletFen,
} from "../../tests/commerce.ts";
import { type ApiClient, loggedInClient, startWithAdmin, type TestServer } from "../../tests/harness.ts";
import { GB } from "../lib/traffic.ts";
import type { Combo } from "../modules/combo/schema.ts";
import { OrderMsg, type PayMode } from "../modules/order/schema.ts";
import type { PaymentsInForce } from "./registry.ts";
import { SANDBOX_ENV } from "./sandbox.ts";

let server: TestServer;
let admin: ApiClient;
let combo: Combo;

beforeAll(async () => {
  delete process.env[SANDBOX_ENV];
  ({ server, admin } = await startWithAdmin());
  combo = await makeCombo(server, { name: "15 元 100G", price: 15, traffic: 100 * GB });
});
afterEach(async () => {
  delete process.env[SANDBOX_ENV];
  await server.context.settings.update({
    alipay: "",
    wxpay: "",
    sandbox_pay: false,
    epay_url: "",
    epay_pid: "",
  });
});
afterAll(async () => {
  await server?.close();
});

const payModes = async () => (await admin.call<PayMode[]>("/api/shop/pay_modes")).data;
const inForce = async () => (await admin.call<PaymentsInForce>("/api/admin/config/pay_status")).data;
const collector = (state: PaymentsInForce, mode: PayMode) =>
  state.modes.find((m) => m.mode === mode)?.provider ?? null;

describe("a fresh install with nothing configured", () => {
  test("offers no pay mode and says so in the back office", async () => {
    expect(await payModes()).toEqual([]);
    const state = await inForce();
    expect(state.modes.map((m) => [m.mode, m.provider])).toEqual([
      ["alipay", null],
      ["wxpay", null],
      ["usdt", null],
    ]);
    expect(state.sandbox).toEqual({ on: false, source: null, variable: SANDBOX_ENV });
  });

  test("refuses an order nobody could pay, and creates nothing", async () => {
    const { client, user } = await loggedInClient(server);
    const refused = await client.call("/api/shop/create_order", { combo_id: combo._id });
    expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1000, msg: OrderMsg.noPayModes });
    expect(await orderIds(server, user.id)).toEqual([]);
  });

  test("still sells to a customer whose wallet covers the price", async () => {
    const { client, user } = await loggedInClient(server);
    await giveWallet(server, user.id, 1500);
    const order = await createOrder(client, combo._id);
    expect(await orderIds(server, user.id)).toEqual([order._id]);
    expect(await walletFen(server, user.id)).toBe(1500);
  });
});

describe(`${SANDBOX_ENV}=1`, () => {
  test("alone makes the sandbox collect alipay and wxpay, and a customer can buy", async () => {
    process.env[SANDBOX_ENV] = "1";
    expect(await payModes()).toEqual(["alipay", "wxpay"]);
    const state = await inForce();
    for (const mode of ["alipay", "wxpay"] as const) {
      expect(collector(state, mode)).toEqual({ id: "sandbox", label: "沙箱支付", source: "env" });
    }
    expect(collector(state, "usdt")).toBeNull();
    expect(state.sandbox).toEqual({ on: true, source: "env", variable: SANDBOX_ENV });

    const { client } = await loggedInClient(server);
    const order = await createOrder(client, combo._id);
    await payWithSandbox(server, client, order._id);
    const status = await client.call<{ status: string }>("/api/shop/trade_status", { trade_id: order._id });
    expect(status.data.status).toBe("paied");
  });

  test("leaves a configured gateway in place and stands in only for the other mode", async () => {
    process.env[SANDBOX_ENV] = "1";
    await server.context.settings.update({
      alipay: "epay",
      epay_url: "https://pay.example.com",
      epay_pid: "1001",
      epay_key: "k".repeat(32),
    });
    const state = await inForce();
    expect(collector(state, "alipay")).toEqual({ id: "epay", label: "易支付", source: "setting" });
    expect(collector(state, "wxpay")).toEqual({ id: "sandbox", label: "沙箱支付", source: "env" });
  });
});

test("the sandbox chosen in the settings is reported as the setting's doing", async () => {
  await server.context.settings.update({ sandbox_pay: true, alipay: "sandbox" });
  expect(await payModes()).toEqual(["alipay"]);
  const state = await inForce();
  expect(collector(state, "alipay")).toEqual({ id: "sandbox", label: "沙箱支付", source: "setting" });
  expect(collector(state, "wxpay")).toBeNull();
  expect(state.sandbox).toEqual({ on: true, source: "setting", variable: SANDBOX_ENV });
});
