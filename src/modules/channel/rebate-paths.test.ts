/**
 * Rebates by the paying paths channel.test.ts does not take (issue 15 §3): the USDT watcher
 * matching a TRC20 transfer, and trade_status asking an EPay gateway directly (the notification
 * never came). A real server with a fake TronGrid and a fake EPay gateway, each speaking its real
 * wire protocol on 127.0.0.1. Each path credits the inviting channel once, to the fen, and tells the
 * owner on the bell and in Telegram.
 */
import { afterAll, beforeAll, expect, setSystemTime, test } from "bun:test";
import { walletFen } from "../../../tests/commerce.ts";
import { type FakeEpayGateway, startFakeEpayGateway } from "../../../tests/fakes/epay-gateway.ts";
import { bindChat, outboxTexts } from "../../../tests/fakes/telegram.ts";
import { type FakeTronGrid, startFakeTronGrid } from "../../../tests/fakes/trongrid.ts";
import {
  ApiClient,
  loggedInClient,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { parseDecimal } from "../../lib/money.ts";
import { pollUsdtOnce } from "../../payments/usdt-watcher.ts";
import type { Combo } from "../combo/schema.ts";
import type { Order, PayResult, TradeStatus } from "../order/schema.ts";
import { transformPassword } from "../user/password.ts";
import { createUser } from "../user/service.ts";
import type { Channel } from "./schema.ts";

const OUR_ADDRESS = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7";

let server: TestServer;
let grid: FakeTronGrid;
let gateway: FakeEpayGateway;
let admin: ApiClient;
let combo: Combo;

beforeAll(async () => {
  server = await startTestServer();
  grid = startFakeTronGrid();
  gateway = startFakeEpayGateway();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  await admin.ok("/api/admin/config/set_config", {
    alipay: "epay",
    epay_url: gateway.url,
    epay_pid: gateway.pid,
    epay_key: gateway.key,
    usdtpay: OUR_ADDRESS,
    exchange_rate: 7.2,
    usdtCheckInterval: 3600,
    trongrid_url: grid.url,
    trongrid_api_key: "test-trongrid-key",
  });
  // 10.10 yuan: 15 % of it is 151.5 fen, which rounds up to 152.
  combo = await admin.ok<Combo>("/api/admin/combo/update_combo", {
    name: "月付",
    price: 10.1,
    traffic: 1024,
    vipDuration: 0,
  });
});
afterAll(async () => {
  await server?.close();
  await grid?.close();
  await gateway?.close();
});

let codes = 0;

/** A channel at 15 % whose owner has Telegram bound, and a customer it invited, logged in. */
async function channelAndCustomer() {
  const owner = await loggedInClient(server);
  const channel = await admin.ok<Channel>("/api/admin/users/update_channel", {
    email: owner.email,
    name: "测试渠道",
    code: `P${String(++codes).padStart(5, "0")}`,
    rewardRate: 0.15,
    comsumerDuration: 30,
  });
  const chatId = 8000 + codes;
  await bindChat(server, owner.user.id, chatId);
  const email = uniqueEmail("cust");
  await createUser(server.context, {
    email,
    passwordDigest: transformPassword("correct-horse-1"),
    channelCode: channel.code,
  });
  const customer = new ApiClient(server.url);
  expect((await customer.login(email, "correct-horse-1")).code).toBe(0);
  return { owner, chatId, customer };
}

const rebatesOf = async (userId: string) =>
  await server.context.db.all<{ order_id: string; reward_fen: number }>(
    "SELECT order_id, reward_fen FROM channel_rewards WHERE channel_user_id = ?",
    userId,
  );

async function expectRebatedOnce(
  owner: { user: { id: string }; client: ApiClient },
  chatId: number,
  orderId: string,
) {
  expect(await rebatesOf(owner.user.id)).toEqual([{ order_id: orderId, reward_fen: 152 }]);
  expect(await walletFen(server, owner.user.id)).toBe(152);
  const notices = await owner.client.ok<{ desc: string }[]>("/api/user_notive/list");
  expect(notices.filter((notice) => notice.desc.startsWith("返利到账"))).toHaveLength(1);
  expect((await outboxTexts(server, chatId)).filter((text) => text.includes("1.52 元"))).toHaveLength(1);
}

test("the USDT watcher's matched transfer credits the inviting channel once", async () => {
  const { owner, chatId, customer } = await channelAndCustomer();
  const order = await customer.ok<Order>("/api/shop/create_order", { combo_id: combo._id });
  const pay = await customer.ok<PayResult>("/api/shop/dobuy", { order_id: order._id, pay_mode: "usdt" });
  const units = parseDecimal(pay.request_pay_amound_usdt, 6) ?? Number.NaN;
  grid.addTransfer({ to: OUR_ADDRESS, value: String(units) });
  await pollUsdtOnce(server.context);
  await pollUsdtOnce(server.context); // the same transfer seen again credits nothing more
  const status = await customer.ok<TradeStatus>("/api/shop/trade_status", { trade_id: order._id });
  expect(status.status).toBe("paied");
  await expectRebatedOnce(owner, chatId, order._id);
});

test("trade_status asking the gateway directly credits the inviting channel once; the late notification adds nothing", async () => {
  const { owner, chatId, customer } = await channelAndCustomer();
  const order = await customer.ok<Order>("/api/shop/create_order", { combo_id: combo._id });
  await customer.ok<PayResult>("/api/shop/dobuy", { order_id: order._id, pay_mode: "alipay" });
  const request = gateway.mapiRequests.findLast((r) => r.params.return_url?.includes(order._id));
  const trade = request?.params.out_trade_no ?? "";
  gateway.pay(trade);
  const status = () => customer.ok<TradeStatus>("/api/shop/trade_status", { trade_id: order._id });
  try {
    // The panel asks the gateway once a payment is 10 s old.
    setSystemTime(Date.now() + 11_000);
    expect((await status()).status).toBe("paied");
  } finally {
    setSystemTime();
  }
  expect(gateway.queryRequests.some((query) => query.get("out_trade_no") === trade)).toBe(true);
  expect((await gateway.notify(trade)).body).toBe("success");
  await expectRebatedOnce(owner, chatId, order._id);
});
