/**
 * /admin_userlist in Debian's Chromium (issue 16 §1): an admin finds a customer by e-mail, adds
 * 10 G with a reason (the customer's /traffic_records shows 管理员调整 with it), sets a channel with
 * a random code, opens the debug-subscription links, and disables the customer, whose open
 * session is sent to the login page. Screenshots at 1280 and 390 px land in test-results/.
 * Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { loggedInClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf, poll, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text }).last();
const dialog = (page: Page, title: string) => page.getByRole("dialog", { name: title });
const bodyRows = (page: Page) => page.locator(".admin-list tbody tr");

test("an admin finds a customer, adds 10 G with a reason, sets a channel and disables them", async () => {
  const admin = await loggedInClient(server, { role: "admin" });
  const customer = await loggedInClient(server, { email: uniqueEmail("findme") });
  for (let i = 0; i < 3; i++) await loggedInClient(server);

  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/admin_userlist`);
  await page.getByRole("heading", { name: "用户管理" }).waitFor();
  await poll(() => bodyRows(page).count(), 5);
  expect(await page.getByLabel("数量").inputValue()).toBe("100");

  // Find the customer by e-mail.
  await page.getByLabel("筛选").fill(customer.email.slice(0, 12).toUpperCase());
  const listed = page.waitForRequest((r) => r.url().endsWith("/api/admin/users/userlist"));
  await page.getByRole("button", { name: "搜索" }).click();
  expect(payloadOf((await listed).postData())).toMatchObject({
    number: 100,
    filterStr: customer.email.slice(0, 12).toUpperCase(),
  });
  await poll(() => bodyRows(page).count(), 1);
  const row = bodyRows(page).first();
  await row.getByRole("cell", { name: customer.email }).waitFor();
  await row.getByRole("cell", { name: "无", exact: true }).waitFor();
  await screenshots(page, "admin-userlist");

  // 编辑: the daily-unlimited amount shows only with the special limit on; +10 G needs a reason.
  await row.getByRole("button", { name: "编辑" }).click();
  const form = dialog(page, `编辑用户 · ${customer.email}`);
  await form.waitFor();
  expect(await form.getByLabel("每日不限流量(G)").count()).toBe(0);
  await form.getByRole("switch", { name: "特殊每日限额" }).check();
  await form.getByLabel("每日不限流量(G)").fill("30");
  await form.getByLabel("流量(G) ±").fill("10");
  await form.getByRole("button", { name: "保存" }).click();
  await form.getByText("调整余额须填写原因").waitFor();
  await form.getByLabel("原因").fill("线路故障补偿");
  await screenshots(page, "admin-userlist-edit");
  const saved = page.waitForRequest((r) => r.url().endsWith("/api/admin/users/update_user"));
  await form.getByRole("button", { name: "保存" }).click();
  expect(payloadOf((await saved).postData())).toMatchObject({
    _id: customer.user.id,
    specialDailyUnlimitTraffic: true,
    dailyUnlimitTraffic: 30,
    adjust: { trafficG: 10, days: 0, walletYuan: 0, reason: "线路故障补偿" },
  });
  await toast(page, "更新成功").waitFor();
  await form.waitFor({ state: "hidden" });
  await row.getByRole("cell", { name: "0.00 / 10.00" }).waitFor();

  // 渠道: 随机 fills 6 characters; the channel is saved under that code.
  await row.getByRole("button", { name: "渠道" }).click();
  const channel = dialog(page, `渠道 · ${customer.email}`);
  await channel.getByLabel("渠道名称").waitFor();
  await channel.getByRole("button", { name: "随机" }).click();
  const code = await channel.getByLabel("渠道码").inputValue();
  expect(code).toMatch(/^[A-Z0-9]{6}$/);
  await channel.getByLabel("渠道名称").fill("测试渠道");
  await channel.getByLabel("返利比例(0-0.5)").fill("0.6");
  await channel.getByRole("button", { name: "保存" }).click();
  await channel.getByText("返利比例须在 0 到 0.5 之间").waitFor();
  await channel.getByLabel("返利比例(0-0.5)").fill("0.2");
  await channel.getByRole("button", { name: "保存" }).click();
  await toast(page, "渠道配置成功").waitFor();
  const stored = await admin.client.call<{ code: string; rewardRate: number }>(
    "/api/admin/users/get_user_channel",
    {
      user_id: customer.user.id,
    },
  );
  expect(stored.data).toMatchObject({ code, rewardRate: 0.2 });

  // 调试订阅: import links built from the user's id and key on the configured origin.
  await row.getByRole("button", { name: "调试订阅" }).click();
  const debug = dialog(page, `调试订阅 · ${customer.email}`);
  const clash = await debug.getByRole("link", { name: "Clash 导入" }).getAttribute("href");
  expect(decodeURIComponent(clash ?? "")).toContain(
    `${server.url}/api/subscript/clash/${customer.user.id}/${customer.user.userkey}`,
  );
  await screenshots(page, "admin-userlist-debug");
  await debug.getByRole("button", { name: "关闭" }).click();

  // The customer sees the adjustment with its reason.
  const customerPage = await newPage(browser, 1280);
  await loginInBrowser(customerPage.page, server.url, customer.email, customer.password);
  await customerPage.page.goto(`${server.url}/#/traffic_records`);
  const record = customerPage.page.locator("tr", { hasText: "管理员调整" });
  await record.getByText("线路故障补偿").waitFor();
  await screenshots(customerPage.page, "admin-userlist-customer-records");

  // 禁用: the customer's open session is over at once.
  await row.getByRole("button", { name: "编辑" }).click();
  await form.getByRole("switch", { name: "禁用账号" }).check();
  await form.getByRole("button", { name: "保存" }).click();
  await toast(page, "更新成功").waitFor();
  await row.getByText("已禁用").waitFor();
  expect((await customer.client.call("/api/user/userinfo")).code).toBe(1002);
  // Their next call (another filter of their records) answers 1002 and sends them to the login page.
  await customerPage.page.locator("select").first().selectOption({ index: 1 });
  await customerPage.page.waitForFunction(() => location.hash.startsWith("#/login"));
  expect(
    await server.context.db.get("SELECT traffic FROM balances WHERE user_id = ?", customer.user.id),
  ).toEqual({
    traffic: 10 * GB,
  });

  expect(errors).toEqual([]);
  expect(customerPage.errors).toEqual([]);
  await customerPage.context.close();
  await context.close();
}, 120_000);
