/**
 * The shop journey in Debian's Chromium (playwright-core) against a real server with the sandbox
 * payment provider: log in → shop → buy a traffic pack with 支付宝 → sandbox QR dialog → pay on
 * the sandbox cashier page → the 3 s poll sees it → 购买成功 → home shows the new traffic; the
 * orders page, the coupon texts, cancel, feedback, and the poll stopping with the dialog.
 * Needs the SPA built first (`bun scripts/build-web.ts`). Screenshots land in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { Combo } from "../../src/modules/combo/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { makeCoupon } from "../commerce.ts";
import { type FakeTronGrid, randomTronAddress, startFakeTronGrid } from "../fakes/trongrid.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";
import { payOnSandboxCashier } from "./sandbox-cashier.ts";

const PASSWORD = "password123";
const TRAFFIC_PACK = "流量套餐 100G";
const TIME_PACK = "时间套餐 30天";

let server: TestServer;
let browser: Browser;
let admin: ApiClient;
let grid: FakeTronGrid;
const USDT_ADDRESS = randomTronAddress();

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  grid = startFakeTronGrid();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  // The sandbox by setting, for 支付宝 only (FERRY_SANDBOX_PAY=1 would stand in for 微信 too).
  const config = await admin.call("/api/admin/config/set_config", {
    sandbox_pay: true,
    alipay: "sandbox",
    usdtpay: USDT_ADDRESS,
    exchange_rate: 7.2,
    usdtCheckTime: 20,
    usdtCheckInterval: 3,
    trongrid_url: grid.url,
  });
  expect(config.code).toBe(0);
  for (const combo of [
    {
      name: TRAFFIC_PACK,
      price: 15,
      traffic: 100 * GB,
      vipDuration: 0,
      additionPersend: 20,
      speed: "150Mbps",
    },
    { name: TIME_PACK, price: 30, traffic: 0, vipDuration: 30, limit: 50 * GB, deviceNum: 3, orderID: 1 },
  ]) {
    const saved = await admin.call<Combo>("/api/admin/combo/update_combo", combo);
    expect(saved.code).toBe(0);
  }
  await makeCoupon(server, {
    name: "立减5元",
    type: "cash",
    code: "CASH5",
    forMoney: 5,
    useNumPerUser: 10,
    NumberOfAuthorizations: 0,
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await grid?.close();
});

async function newUser(prefix: string): Promise<string> {
  const email = uniqueEmail(prefix);
  await createUser(server.context, { email, passwordDigest: transformPassword(PASSWORD) });
  return email;
}

const login = (page: Page, email: string) => loginInBrowser(page, server.url, email, PASSWORD);

const card = (page: Page, name: string) => page.getByRole("article", { name });

/** An order on 订单记录: a table row, or on a phone a card. */
const orderEntry = (page: Page, name: string) =>
  page.locator("tbody tr, .order-card").filter({ hasText: name });

/** Shop → 立即购买 on a card → the order-confirm dialog. */
async function openOrder(page: Page, name: string) {
  await page.goto(`${server.url}/#/shop`);
  await card(page, name).getByRole("button", { name: "立即购买" }).click();
  const dialog = page.getByRole("dialog", { name: "确认订单" });
  await dialog.waitFor();
  return dialog;
}

describe("shop", () => {
  test("buy a traffic pack with the sandbox 支付宝 → paid → home shows the new traffic", async () => {
    const email = await newUser("buyer");
    const { context, page, errors } = await newPage(browser, 1280);
    await login(page, email);

    // The cards: the admin's combos, split into traffic and time packages.
    await page.goto(`${server.url}/#/shop`);
    const traffic = card(page, TRAFFIC_PACK);
    await traffic.waitFor();
    const trafficSection = page.getByRole("region", { name: "流量套餐" });
    const timeSection = page.getByRole("region", { name: "时间套餐" });
    await expect(trafficSection.getByRole("article").count()).resolves.toBe(1);
    await expect(timeSection.getByRole("article", { name: TIME_PACK }).count()).resolves.toBe(1);
    const trafficText = await traffic.textContent();
    for (const part of ["¥15.00", "赠送20%", "100.00 G", "120.00 G", "永久有效", "150Mbps"]) {
      expect(trafficText).toContain(part);
    }
    const timeText = await card(page, TIME_PACK).textContent();
    for (const part of ["¥30.00", "30 天", "50.00 G", "1.46 T", "3 台"]) expect(timeText).toContain(part);
    await screenshots(page, "shop");

    // Order confirm: the coupon texts, then pay with 支付宝.
    const dialog = await openOrder(page, TRAFFIC_PACK);
    await expect(dialog.textContent()).resolves.toContain(TRAFFIC_PACK);
    await dialog.getByRole("button", { name: "使用" }).click();
    await page.getByRole("alert").filter({ hasText: "优惠券不能为空" }).waitFor();
    await dialog.getByLabel("优惠券").fill("NO-SUCH-COUPON");
    await dialog.getByRole("button", { name: "使用" }).click();
    await page.getByRole("alert").filter({ hasText: "优惠券错误" }).waitFor();
    await poll(() => dialog.getByLabel("优惠券").inputValue(), "");
    await expect(dialog.getByRole("radio", { name: "支付宝" }).isChecked()).resolves.toBe(true);
    await expect(dialog.getByRole("radio", { name: "微信支付" }).count()).resolves.toBe(0);
    await expect(dialog.getByText("¥15.00").first().isVisible()).resolves.toBe(true);
    await screenshots(page, "shop-confirm");

    const buy = page.waitForRequest((request) => request.url().endsWith("/api/shop/dobuy"));
    await dialog.getByRole("button", { name: "确认支付" }).click();
    await buy;
    const qr = page.getByRole("dialog", { name: "支付宝扫码支付" });
    await qr.waitFor();
    await expect(qr.getByText("沙箱（测试）支付").isVisible()).resolves.toBe(true);
    await expect(qr.textContent()).resolves.toContain("请使用手机支付宝扫描二维码完成支付");
    await expect(qr.textContent()).resolves.toContain("应付金额 ¥15.00");
    await qr.locator("canvas").waitFor();
    await poll(() => qr.getByText("二维码生成中…").count(), 0);
    await expect(qr.locator("canvas").evaluate((c) => [c.clientWidth, c.clientHeight])).resolves.toEqual([
      200, 200,
    ]);
    await screenshots(page, "shop-qr");

    // "Pay": the sandbox cashier page from the dialog's link, in a second tab.
    const payUrl = await qr.getByRole("link", { name: "打开支付页面" }).getAttribute("href");
    expect(payUrl).toStartWith(`${server.url}/pay/sandbox/`);
    const cashier = await context.newPage();
    await cashier.goto(payUrl as string);
    await expect(cashier.getByRole("alert").textContent()).resolves.toContain("沙箱");
    // Paid, the cashier sends the customer back to 订单记录 with the toast, as a gateway's return URL does.
    await payOnSandboxCashier(cashier);
    await cashier.close();

    // Back in the shop the poll sees it: toast, dialog closed, home after 5 s with the traffic.
    await page.getByRole("status").filter({ hasText: "购买成功" }).waitFor({ timeout: 8000 });
    await poll(() => qr.count(), 0);
    await page.waitForURL((url) => url.hash === "#/", { timeout: 8000 });
    const trafficCard = page.getByRole("region", { name: "不限时流量" });
    await poll(() => trafficCard.locator(".stat-value").textContent(), "120.00");

    // The orders page lists it as 成功.
    await page.goto(`${server.url}/#/order`);
    const row = page.locator("tbody tr").filter({ hasText: TRAFFIC_PACK });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("成功");
    await expect(row.textContent()).resolves.toContain("¥15.00");
    await expect(row.getByRole("button", { name: "取消" }).count()).resolves.toBe(0);
    await page.getByRole("button", { name: "未支付" }).click();
    await poll(() => page.getByText("暂无记录").count(), 1);
    await page.getByRole("button", { name: "成功" }).click();
    await row.waitFor();

    // Detail and feedback on the paid order.
    await row.getByRole("button", { name: "详情" }).click();
    const detail = page.getByRole("dialog", { name: "订单详情" });
    const detailText = await detail.textContent();
    for (const part of [TRAFFIC_PACK, "¥15.00", "120.00 G", "支付宝", "成功"])
      expect(detailText).toContain(part);
    await detail.getByRole("button", { name: "关闭" }).last().click();
    await row.getByRole("button", { name: "反馈" }).click();
    const feedback = page.getByRole("dialog", { name: "订单反馈" });
    await feedback.getByRole("button", { name: "提交" }).click();
    await feedback
      .locator(".field-error")
      .filter({ hasText: "简单描述，不要超过30字，管理员尽快处理" })
      .waitFor();
    await feedback.getByLabel("反馈内容").fill("到账很快");
    await feedback.getByRole("button", { name: "提交" }).click();
    await page.getByRole("status").filter({ hasText: "反馈已提交" }).waitFor();
    await poll(() => feedback.count(), 0);
    await screenshots(page, "orders");

    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  test("USDT: the exact amount, the address and the network; a matching transfer pays the order", async () => {
    const email = await newUser("usdt");
    const { context, page, errors } = await newPage(browser, 390);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await login(page, email);
    const dialog = await openOrder(page, TRAFFIC_PACK);
    await dialog.getByRole("radio", { name: "USDT-TRC20" }).check();
    await dialog.getByRole("button", { name: "确认支付" }).click();
    const usdt = page.getByRole("dialog", { name: "USDT-TRC20 支付" });
    await usdt.waitFor();
    // ¥15 at 7.2 = 2.0833… USDT, rounded up to the next 0.001.
    await expect(usdt.locator(".usdt-amount").textContent()).resolves.toBe("2.084");
    await expect(usdt.locator(".usdt-address").textContent()).resolves.toBe(USDT_ADDRESS);
    const text = (await usdt.textContent()) ?? "";
    for (const part of [
      "TRC20",
      "约 ¥15.00",
      "精确到小数点后3位",
      "手续费不能从转账金额中扣除",
      "交易所须支持3位小数",
    ]) {
      expect(text).toContain(part);
    }
    expect(await usdt.getByRole("timer").textContent()).toMatch(/^剩余支付时间 (20:00|19:[0-5]\d)$/);
    await usdt.getByRole("button", { name: "复制金额" }).click();
    await page.getByRole("status").filter({ hasText: "已复制到剪贴板" }).first().waitFor();
    await poll(() => page.evaluate(() => navigator.clipboard.readText()), "2.084");
    await usdt.getByRole("button", { name: "复制地址" }).click();
    await poll(() => page.evaluate(() => navigator.clipboard.readText()), USDT_ADDRESS);
    await poll(() => usdt.getByText("二维码生成中…").count(), 0);
    await screenshots(page, "shop-usdt");

    // The customer sends exactly 2.084 USDT: the watcher sees it, the 3 s poll sees the order paid.
    grid.addTransfer({ to: USDT_ADDRESS, value: "2084000" });
    await page.getByRole("status").filter({ hasText: "购买成功" }).waitFor({ timeout: 15_000 });
    await poll(() => usdt.count(), 0);
    await page.waitForURL((url) => url.hash === "#/", { timeout: 8000 });
    await poll(
      () => page.getByRole("region", { name: "不限时流量" }).locator(".stat-value").textContent(),
      "120.00",
    );
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("closing the pay dialog stops the poll; cancel on the orders page; the payment-success query", async () => {
    const email = await newUser("canceller");
    const { context, page, errors } = await newPage(browser, 390);
    await login(page, email);
    const dialog = await openOrder(page, TIME_PACK);
    // A cash coupon lowers the amount due; 取消 gives it back; it can be put on again.
    const due = dialog.locator(".order-due strong");
    await dialog.getByLabel("优惠券").fill(" CASH5 ");
    await dialog.getByRole("button", { name: "使用" }).click();
    await page.getByRole("status").filter({ hasText: "优惠券使用成功" }).waitFor();
    await poll(() => due.textContent(), "¥25.00");
    await dialog.getByRole("button", { name: "取消", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "已取消使用优惠券" }).waitFor();
    await poll(() => due.textContent(), "¥30.00");
    await dialog.getByLabel("优惠券").fill("CASH5");
    await dialog.getByRole("button", { name: "使用" }).click();
    await poll(() => due.textContent(), "¥25.00");
    await dialog.getByRole("button", { name: "确认支付" }).click();
    const qr = page.getByRole("dialog", { name: "支付宝扫码支付" });
    await qr.waitFor();
    await expect(qr.textContent()).resolves.toContain("应付金额 ¥25.00");
    // One status request within a poll period shows the poll runs; none after closing.
    await page.waitForRequest((request) => request.url().endsWith("/api/shop/trade_status"), {
      timeout: 5000,
    });
    let polls = 0;
    page.on("request", (request) => {
      if (request.url().endsWith("/api/shop/trade_status")) polls += 1;
    });
    await qr.getByRole("button", { name: "关闭" }).last().click();
    await poll(() => qr.count(), 0);
    await page.waitForTimeout(4000);
    expect(polls).toBe(0);

    // The unpaid order can be cancelled.
    await page.goto(`${server.url}/#/order`);
    // 390 px: the orders are cards (issue 26).
    const row = orderEntry(page, TIME_PACK);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("未支付");
    await expect(row.textContent()).resolves.toContain("立减5元 −¥5.00");
    await row.getByRole("button", { name: "取消" }).click();
    const confirm = page.getByRole("dialog", { name: "取消订单" });
    await confirm.getByRole("button", { name: "确定取消" }).click();
    await page.getByRole("status").filter({ hasText: "订单已取消" }).waitFor();
    await poll(async () => ((await row.textContent()) ?? "").includes("已取消"), true);
    await expect(row.getByRole("button", { name: "反馈" }).count()).resolves.toBe(0);

    // The gateways' return URL: one toast, and the query is dropped.
    await page.goto(`${server.url}/#/order?payment=success`);
    await page.getByRole("status").filter({ hasText: "购买成功" }).waitFor();
    await page.waitForURL((url) => url.hash === "#/order");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("visitors are asked to log in before buying; agency users are sent home", async () => {
    const { context, page } = await newPage(browser, 390);
    await page.goto(`${server.url}/#/shop`);
    await card(page, TRAFFIC_PACK).getByRole("button", { name: "立即购买" }).click();
    await page.getByRole("alert").filter({ hasText: "暂未登录，请登录" }).waitFor();
    await page.waitForURL((url) => url.hash === "#/login", { timeout: 5000 });
    await context.close();

    const email = await newUser("agency");
    await server.context.db.run("UPDATE users SET is_agency = 1 WHERE email = ?", email);
    const agency = await newPage(browser, 1280);
    await login(agency.page, email);
    await agency.page.goto(`${server.url}/#/shop`);
    await agency.page.waitForURL((url) => url.hash === "#/");
    await agency.context.close();
  }, 60_000);
});
