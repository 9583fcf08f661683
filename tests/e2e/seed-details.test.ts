/**
 * Seed details of issue 26 item 24 in Debian's Chromium against a real server: the dashboard's
 * promo card (seed 000 §2, §6: shown to a customer, hidden in agency mode); 重置更新次数 answered
 * with an error toasts 刷新失败 (seed 001 §8) and changes nothing; a lucky-draw prize with a
 * discount of 0 (seed 001 §5: 0 to 1) is saved from the prize form and its 免单 coupon makes the
 * winner's order cost nothing; a combo's duration (seed 001 §3) set in 商品管理 shows on the shop
 * card, and the traffic bought with it shows on the dashboard with its expiry. Needs the SPA built
 * first. Screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import dayjs from "dayjs";
import type { Browser, Page } from "playwright-core";
import { DAY_MS } from "../../src/lib/time.ts";
import { GB } from "../../src/lib/traffic.ts";
import { attachCustomer, setAgency } from "../../src/modules/agency/service.ts";
import { changeTraffic } from "../../src/modules/ledger/service.ts";
import type { DrawResult } from "../../src/modules/prize/schema.ts";
import { setRole } from "../../src/modules/user/service.ts";
import { giveWallet, makeCombo, startShopServer } from "../commerce.ts";
import { loggedInClient, type TestServer } from "../harness.ts";
import { saveNode } from "../nodes.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const db = () => server.context.db;
const toasts = (page: Page) => page.locator(".toast-msg").allTextContents();
const promo = (page: Page) => page.getByRole("region", { name: "选购套餐" });

describe("the dashboard's promo card", () => {
  test("a customer sees the package points and goes to the shop from it", async () => {
    const customer = await loggedInClient(server);
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, customer.email, customer.password);
    await promo(page).waitFor();
    expect(await promo(page).getByRole("listitem").allTextContents()).toEqual([
      "流量套餐不限时",
      "时间套餐不限量",
      "不限设备",
      "不限速度",
      "4K 专线",
    ]);
    expect(await promo(page).locator(".card-note").textContent()).toBe(
      "流量套餐永不过期，时间套餐每日流量充足，按需选择。",
    );
    await screenshots(page, "home-promo");
    await promo(page).getByRole("link", { name: "查看套餐" }).click();
    await page.waitForURL((url) => url.hash === "#/shop");
    await page.getByRole("heading", { name: "商店" }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test("an agency customer sees neither the promo card nor the top-up link", async () => {
    const owner = await loggedInClient(server);
    const customer = await loggedInClient(server);
    await setAgency(server.context, { email: owner.email, name: "华南代理" });
    await attachCustomer(server.context, { agency_email: owner.email, customer_email: customer.email });
    const { context, page, errors } = await newPage(browser, 390);
    await loginInBrowser(page, server.url, customer.email, customer.password);
    // The cards render together: once the traffic card is there, so would the promo card be.
    await page.getByRole("region", { name: "不限时流量" }).waitFor();
    expect(await promo(page).count()).toBe(0);
    expect(await page.getByRole("link", { name: "充值流量" }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("节点管理 › 重置更新次数", () => {
  test("a refused reset toasts 刷新失败 with the server's reason and keeps the counts", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const node = await saveNode(server, { name: "e2e 刷新节点", ip: "203.0.113.26" });
    await db().run("UPDATE agents SET update_config_times = 3 WHERE id = ?", node._id);
    const counts = async () =>
      (await db().get<{ n: number }>("SELECT update_config_times AS n FROM agents WHERE id = ?", node._id))
        ?.n;
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, admin.email, admin.password);
    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("row").filter({ hasText: "e2e 刷新节点" }).waitFor();

    // The account loses its admin role while the page is open (as `ferry user set-role` does).
    await setRole(server.context, admin.email, "normal");
    await page.getByRole("button", { name: "重置更新次数" }).click();
    await page.getByRole("dialog", { name: "重置确认" }).getByRole("button", { name: "重置" }).click();
    await poll(async () => (await toasts(page)).includes("刷新失败:没有权限"), true);
    expect(await counts()).toBe(3);

    // Given back its role, the same button zeroes the counts with the seed's 更新成功.
    await setRole(server.context, admin.email, "admin");
    await page.getByRole("button", { name: "重置更新次数" }).click();
    await page.getByRole("dialog", { name: "重置确认" }).getByRole("button", { name: "重置" }).click();
    await poll(async () => (await toasts(page)).includes("更新成功"), true);
    expect(await counts()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("抽奖管理 › a discount of 0", () => {
  test("the prize form saves 免单; the winner's coupon makes an order cost nothing", async () => {
    const operator = await loggedInClient(server, { role: "yunying" });
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, operator.email, operator.password);
    await page.goto(`${server.url}/#/admin_prize`);
    await page.getByRole("heading", { name: "抽奖管理" }).waitFor();
    await page.getByRole("button", { name: "添加奖品" }).click();
    const form = page.getByRole("dialog", { name: "添加奖品" });
    await form.getByLabel("名称").fill("免单大奖");
    await form.getByLabel("奖励流量(G)").fill("0");
    await form.getByRole("switch", { name: "赠送折扣券" }).check();
    await form.getByLabel("折扣(0-1，0.9 即九折，0 为免单)").fill("0");
    await form.getByLabel("折扣券有效天数").fill("3");
    await form.getByRole("button", { name: "保存" }).click();
    await poll(async () => (await toasts(page)).includes("添加成功"), true);
    await page.getByRole("cell", { name: "免单 · 3 天" }).waitFor();
    const stored = await db().get<{ discount_value: number; has_discount_coupon: number }>(
      "SELECT discount_value, has_discount_coupon FROM prizes WHERE name = '免单大奖'",
    );
    expect(stored).toEqual({ discount_value: 0, has_discount_coupon: 1 });
    await context.close();

    // A customer draws it (the only prize) and uses the coupon on an order in the shop.
    await db().run("DELETE FROM prizes WHERE name <> '免单大奖'");
    const winner = await loggedInClient(server);
    await db().run("UPDATE users SET paid_user = 1 WHERE id = ?", winner.user.id);
    await db().tx(
      async () =>
        await changeTraffic(db(), {
          userId: winner.user.id,
          type: "buy",
          desc: "test",
          traffic: GB,
          now: Date.now(),
          timeZone: "UTC",
        }),
    );
    const drawn = await winner.client.call<DrawResult>("/api/prize/draw");
    expect(drawn.code).toBe(0);
    const code = drawn.data.couponCode;
    await makeCombo(server, { name: "免单测试包", price: 66, traffic: 20 * GB });
    const shopper = await newPage(browser, 390);
    await loginInBrowser(shopper.page, server.url, winner.email, winner.password);
    await shopper.page.goto(`${server.url}/#/shop`);
    await shopper.page
      .getByRole("article", { name: "免单测试包" })
      .getByRole("button", { name: "立即购买" })
      .click();
    const dialog = shopper.page.getByRole("dialog", { name: "确认订单" });
    await dialog.getByLabel("优惠券").fill(code);
    await dialog.getByRole("button", { name: "使用" }).click();
    await poll(() => dialog.locator(".order-due strong").textContent(), "¥0.00");
    expect(await dialog.textContent()).toContain("优惠券抵扣−¥66.00");
    await dialog.getByRole("button", { name: "确认支付" }).click();
    await shopper.page.getByRole("status").filter({ hasText: "购买成功" }).waitFor();
    const balance = await db().get<{ traffic: number }>(
      "SELECT traffic FROM balances WHERE user_id = ?",
      winner.user.id,
    );
    expect(balance?.traffic).toBe(20 * GB);
    expect([...errors, ...shopper.errors]).toEqual([]);
    await shopper.context.close();
  });
});

describe("商品管理 › 流量有效期 (the seed's duration)", () => {
  test("set in the form, shown on the shop card, and the bought traffic shows its expiry on the dashboard", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, admin.email, admin.password);
    await page.goto(`${server.url}/#/admin_combos`);
    await page.getByRole("heading", { name: "商品管理" }).waitFor();
    await page.getByRole("button", { name: "添加" }).click();
    const form = page.getByRole("dialog", { name: "添加商品" });
    expect(await form.getByLabel("流量有效期(天)").inputValue()).toBe("0");
    await form.getByLabel("名称").fill("三十天流量包");
    await form.getByLabel("价格(元)").fill("9");
    await form.getByLabel("流量(G)").fill("10");
    await form.getByLabel("VIP天数").fill("0");
    await form.getByLabel("流量有效期(天)").fill("30");
    await form.getByRole("button", { name: "保存" }).click();
    const row = page.getByRole("row").filter({ hasText: "三十天流量包" });
    await row.waitFor();
    expect(await row.getByRole("cell", { name: "10.00 · 30 天" }).count()).toBe(1);
    const stored = await db().get<{ duration: number }>(
      "SELECT duration FROM combos WHERE name = '三十天流量包'",
    );
    expect(stored).toEqual({ duration: 30 });
    await context.close();

    // A customer sees it on the card and buys it with wallet money.
    const customer = await loggedInClient(server);
    await giveWallet(server, customer.user.id, 900);
    const shopper = await newPage(browser, 390);
    await loginInBrowser(shopper.page, server.url, customer.email, customer.password);
    await shopper.page.goto(`${server.url}/#/shop`);
    const card = shopper.page.getByRole("article", { name: "三十天流量包" });
    await card.waitFor();
    const facts = await card.locator(".combo-fact").allInnerTexts();
    expect(facts.map((fact) => fact.replace(/\s+/g, " "))).toContain("有效期 购买后 30 天");
    await card.getByRole("button", { name: "立即购买" }).click();
    const dialog = shopper.page.getByRole("dialog", { name: "确认订单" });
    // The wallet covers the price when the order is confirmed: it is settled at once.
    await dialog.waitFor();
    const paidAt = Date.now();
    await dialog.getByRole("button", { name: "确认支付" }).click();
    await shopper.page.getByRole("status").filter({ hasText: "购买成功" }).waitFor();
    await shopper.page.goto(`${server.url}/#/`);
    const note = shopper.page.getByTestId("trial-traffic-note");
    await note.waitFor();
    const expiry = dayjs(paidAt + 30 * DAY_MS).format("M月D日");
    expect(await note.textContent()).toStartWith(`含限时流量 10.00 GB，${expiry} `);
    expect(await note.textContent()).toEndWith(" 到期");
    await screenshots(shopper.page, "home-expiring-package");
    expect([...errors, ...shopper.errors]).toEqual([]);
    await shopper.context.close();
  });
});
