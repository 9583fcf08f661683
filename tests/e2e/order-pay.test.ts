/**
 * Issue 26 in Chromium on the built SPA: backing out of the order-confirm dialog leaves one unpaid
 * order, which 订单记录's 去支付 then pays (item 4); a phone paying through the sandbox cashier comes
 * back to 订单记录 with the success toast (item 6); and on a phone 订单记录 shows cards whose
 * product, amount, status and actions are all in view, none covering another (item 12).
 * Needs the SPA built first (`bun scripts/build-web.ts`). Screenshots land in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Locator, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { Combo } from "../../src/modules/combo/schema.ts";
import type { Order, OrderListPage } from "../../src/modules/order/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { fromBase64Json } from "../../src/rpc/envelope.ts";
import {
  copyOrders,
  createOrder,
  giveWallet,
  makeCombo,
  makeCoupon,
  orderIds,
  payWithSandbox,
  startShopServer,
} from "../commerce.ts";
import { ApiClient, decodeAnswer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, SHOTS, screenshots } from "./chromium.ts";
import { payOnSandboxCashier } from "./sandbox-cashier.ts";

const PASSWORD = "password123";
const PACK = "流量套餐 100G";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

let server: TestServer;
let browser: Browser;
let pack: Combo;

beforeAll(async () => {
  browser = await launchChromium();
  // The sandbox collects 支付宝 and 微信 (a setting of this server only).
  server = await startShopServer();
  pack = await makeCombo(server, { name: PACK, price: 15, traffic: 100 * GB });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function newCustomer(prefix: string): Promise<{ email: string; user: UserRow }> {
  const email = uniqueEmail(prefix);
  const user = await createUser(server.context, { email, passwordDigest: transformPassword(PASSWORD) });
  return { email, user };
}

const statusOf = async (orderId: string) =>
  (await server.context.db.get<{ status: string }>("SELECT status FROM orders WHERE id = ?", orderId))
    ?.status;

/** Shop → 立即购买 → the order-confirm dialog. */
async function openConfirm(page: Page) {
  await page.goto(`${server.url}/#/shop`);
  await page.getByRole("article", { name: PACK }).getByRole("button", { name: "立即购买" }).click();
  const dialog = page.getByRole("dialog", { name: "确认订单" });
  await dialog.waitFor();
  return dialog;
}

describe("an unpaid order", () => {
  test("four looks at the confirm dialog leave one unpaid order; 去支付 on 订单记录 pays it", async () => {
    const { email, user } = await newCustomer("looker");
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, email, PASSWORD);

    for (let look = 0; look < 4; look++) {
      const dialog = await openConfirm(page);
      await expect(dialog.textContent()).resolves.toContain("¥15.00");
      await dialog.getByRole("button", { name: "返回" }).click();
      await poll(() => dialog.count(), 0);
    }
    const [orderId] = await orderIds(server, user.id);
    expect(await orderIds(server, user.id)).toEqual([orderId as string]);
    expect(await statusOf(orderId as string)).toBe("topay");

    await page.goto(`${server.url}/#/order`);
    const row = page.locator("tbody tr").filter({ hasText: PACK });
    await row.waitFor();
    await expect(page.locator("tbody tr").count()).resolves.toBe(1);
    await expect(row.textContent()).resolves.toContain("未支付");
    await row.getByRole("button", { name: "去支付" }).click();
    const confirm = page.getByRole("dialog", { name: "确认订单" });
    await expect(confirm.textContent()).resolves.toContain(PACK);
    await screenshots(page, "order-pay-again");
    await confirm.getByRole("button", { name: "确认支付" }).click();
    const qr = page.getByRole("dialog", { name: "支付宝扫码支付" });
    await qr.waitFor();
    await expect(qr.textContent()).resolves.toContain("应付金额 ¥15.00");
    const payUrl = (await qr.getByRole("link", { name: "打开支付页面" }).getAttribute("href")) as string;

    const cashier = await context.newPage();
    await cashier.goto(payUrl);
    await payOnSandboxCashier(cashier);
    await cashier.close();

    // The 3 s poll sees it: the toast, the dialog gone, the row 成功 with no 去支付; still 订单记录.
    await page.getByRole("status").filter({ hasText: "购买成功" }).waitFor({ timeout: 8000 });
    await poll(() => qr.count(), 0);
    await poll(async () => ((await row.textContent()) ?? "").includes("成功"), true);
    await expect(row.getByRole("button", { name: "去支付" }).count()).resolves.toBe(0);
    expect(new URL(page.url()).hash).toBe("#/order");
    expect(await statusOf(orderId as string)).toBe("paied");
    expect(await orderIds(server, user.id)).toEqual([orderId as string]);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  test("a phone pays through the sandbox cashier and comes back to 订单记录 with the success toast", async () => {
    const { email, user } = await newCustomer("phone");
    const context = await browser.newContext({
      viewport: { width: 390, height: 800 },
      userAgent: IPHONE,
      isMobile: true,
      hasTouch: true,
      locale: "zh-CN",
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await loginInBrowser(page, server.url, email, PASSWORD);

    const confirm = await openConfirm(page);
    await confirm.getByRole("button", { name: "确认支付" }).click();
    const appLink = page.getByRole("dialog", { name: "支付宝支付" });
    await appLink.getByRole("button", { name: "打开支付宝" }).click();
    // The page itself goes to the cashier, as it would to the wallet app.
    await page.waitForURL((url) => url.pathname.startsWith("/pay/sandbox/"));
    await payOnSandboxCashier(page);
    await page.locator(".order-card").filter({ hasText: "成功" }).waitFor();
    await page.screenshot({ path: `${SHOTS}/order-pay-phone-return-390.png` });
    const [orderId] = await orderIds(server, user.id);
    expect(await statusOf(orderId as string)).toBe("paied");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});

/** The on-screen box of a locator, failing when it is not rendered. */
async function box(locator: Locator) {
  const found = await locator.boundingBox();
  if (!found) throw new Error(`not rendered: ${locator}`);
  return found;
}

type Box = { x: number; y: number; width: number; height: number };
const overlap = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe("订单记录 on a phone (item 12)", () => {
  test("at 390 px every order is a card: product, amount, status and actions in view, none overlapping, no sideways scroll", async () => {
    const { email, user } = await newCustomer("cards");
    const client = new ApiClient(server.url);
    expect((await client.login(email, PASSWORD)).code).toBe(0);
    // A paid order, an unpaid one with a coupon and a wallet part, and a cancelled one.
    await payWithSandbox(server, client, (await createOrder(client, pack._id))._id);
    const code = `CARD${Date.now()}`;
    await makeCoupon(server, { name: "立减2元", type: "cash", code, forMoney: 2 });
    const open = await createOrder(
      client,
      (await makeCombo(server, { name: "时间套餐 三十天长名称", price: 30, vipDuration: 30 }))._id,
    );
    await client.ok("/api/coupon/orderUseCoupon", { order_id: open._id, code });
    await giveWallet(server, user.id, 300);
    await client.ok("/api/shop/wallet_check", { order_id: open._id });
    const cancelled = await createOrder(
      client,
      (await makeCombo(server, { name: "取消的套餐", price: 8 }))._id,
    );
    await client.ok("/api/order/cancel_order", { order_id: cancelled._id });

    const { context, page, errors } = await newPage(browser, 390);
    await loginInBrowser(page, server.url, email, PASSWORD);
    await page.goto(`${server.url}/#/order`);
    const cards = page.locator(".order-card");
    await poll(() => cards.count(), 3);
    await expect(page.locator("table").count()).resolves.toBe(0);

    for (const card of await cards.all()) {
      const parts: [string, Locator][] = [
        ["商品", card.locator(".order-card-title")],
        ["状态", card.locator(".order-status")],
        ["订单金额", card.locator("dt", { hasText: "订单金额" })],
        ["金额", card.locator("dt", { hasText: "订单金额" }).locator("xpath=following-sibling::dd")],
        ...(await card.getByRole("button").all()).map((button, i): [string, Locator] => [
          `按钮 ${i}`,
          button,
        ]),
      ];
      const boxes: [string, Box][] = [];
      for (const [name, part] of parts) {
        await expect(part.isVisible()).resolves.toBe(true);
        const found = await box(part);
        // Inside the screen: nothing needs a sideways scroll to be read.
        expect({ name, left: found.x >= 0, right: found.x + found.width <= 390 }).toEqual({
          name,
          left: true,
          right: true,
        });
        boxes.push([name, found]);
      }
      for (const [i, [a, boxA]] of boxes.entries())
        for (const [b, boxB] of boxes.slice(i + 1))
          expect({ a, b, overlap: overlap(boxA, boxB) }).toEqual({ a, b, overlap: false });
      await expect(card.locator("dd").first().textContent()).resolves.toMatch(/^¥\d+\.\d{2}$/);
    }
    const unpaid = cards.filter({ hasText: "时间套餐 三十天长名称" });
    for (const text of ["未支付", "¥30.00", "立减2元 −¥2.00", "¥3.00"])
      await expect(unpaid.textContent()).resolves.toContain(text);
    for (const name of ["去支付", "详情", "取消", "反馈"])
      await expect(unpaid.getByRole("button", { name }).isVisible()).resolves.toBe(true);
    const scroll = await page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0);
    expect(scroll).toBeLessThanOrEqual(390);
    await page.screenshot({ path: `${SHOTS}/order-cards-390.png`, fullPage: true });

    // Wider than a phone the table is back, its 操作 column clear of 订单金额 at the narrowest table width.
    await page.setViewportSize({ width: 1024, height: 800 });
    await page.locator("table").waitFor();
    const money = await box(page.getByRole("columnheader", { name: "订单金额" }));
    const actions = await box(page.getByRole("columnheader", { name: "操作" }));
    expect(overlap(money, actions)).toBe(false);
    const wrap = await page.locator(".table-wrap").evaluate((el) => [el.scrollWidth, el.clientWidth]);
    expect(wrap[0]).toBeLessThanOrEqual(wrap[1] as number);
    await page.screenshot({ path: `${SHOTS}/order-table-1024.png`, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});

describe("订单记录 pages through the server (issue 31 §5)", () => {
  test("a customer with more orders than one page sees page 2 from the server", async () => {
    const { email } = await newCustomer("many");
    const client = new ApiClient(server.url);
    expect((await client.login(email, PASSWORD)).code).toBe(0);
    await copyOrders(server, (await createOrder(client, pack._id))._id, 24);
    const newestFirst = (await client.call<Order[]>("/api/order/order_list")).data;
    expect(newestFirst).toHaveLength(25);

    const { context, page, errors } = await newPage(browser, 1280);
    const asked: unknown[] = [];
    page.on("request", (request) => {
      if (!request.url().endsWith("/api/order/order_list")) return;
      const sent = fromBase64Json((request.postDataJSON() as { data: string }).data);
      asked.push(sent.ok ? sent.value : sent.reason);
    });
    await loginInBrowser(page, server.url, email, PASSWORD);
    await page.goto(`${server.url}/#/order`);
    const rows = page.locator("table tbody tr");
    await poll(() => rows.count(), 20);
    await page.getByText("共 25 条，第 1/2 页").waitFor();
    const served = page.waitForResponse((response) => response.url().endsWith("/api/order/order_list"));
    await page.getByRole("button", { name: "下一页" }).click();
    const answer = await decodeAnswer<OrderListPage>(new Response(await (await served).text()));
    // The page came from the server: only its 5 orders were sent, not the whole history.
    expect(answer.data.orders.map((order) => order._id)).toEqual(newestFirst.slice(20).map((o) => o._id));
    expect(answer.data.total).toBe(25);
    await poll(() => rows.count(), 5);
    await page.getByText("共 25 条，第 2/2 页").waitFor();
    expect(asked).toContainEqual({ filter: "all", page: 2, pageSize: 20 });
    expect(asked).not.toContainEqual({});
    await page.screenshot({ path: `${SHOTS}/order-page-2-1280.png`, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
