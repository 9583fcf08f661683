/**
 * Issue 16 §3–§5 in Debian's Chromium: an admin filters every user's traffic records by type on
 * /all_traffic_records and clears the error log on /admin_error (confirmation, the button blocked
 * while it runs, 成功清理了 N 条错误记录); an agency owner sees the 代理中心 tab (a normal user does
 * not) and allocates traffic to its customer. Screenshots at 1280 and 390 px land in test-results/.
 * Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { attachCustomer, setAgency } from "../../src/modules/agency/service.ts";
import { recordError } from "../../src/modules/errors/service.ts";
import type { TrafficRecordType } from "../../src/modules/traffic/schema.ts";
import { toBase64Json } from "../../src/rpc/envelope.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { recordTraffic } from "../traffic.ts";
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

const db = () => server.context.db;
const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text }).last();
const bodyRows = (page: Page) => page.locator(".admin-list tbody tr");
const trafficOf = async (id: string) =>
  (await db().get<{ traffic: number }>("SELECT traffic FROM balances WHERE user_id = ?", id))?.traffic;

const record = async (userId: string, type: TrafficRecordType, bytes: number) =>
  await recordTraffic(server, userId, type, bytes);

test("an admin filters all traffic records by type and clears the error log", async () => {
  const admin = await loggedInClient(server, { role: "admin" });
  const buyer = await loggedInClient(server);
  const winner = await loggedInClient(server);
  await record(buyer.user.id, "buy", 10 * GB);
  await record(winner.user.id, "prize_reward", 2 * GB);
  await recordError(db(), "node push", new Error("SQLITE_BUSY: database is locked"));
  await recordError(db(), "usdt watcher", new Error("HTTP 500"));

  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/all_traffic_records`);
  await page.getByRole("heading", { name: "全部流量记录" }).waitFor();
  await poll(() => bodyRows(page).count(), 2);
  expect(await page.getByLabel("天数").inputValue()).toBe("2");
  const sent = page.waitForRequest((r) => r.url().endsWith("/api/admin/traffic_spend/traffic_records"));
  await page.getByLabel("记录类型").selectOption("prize_reward");
  expect(payloadOf((await sent).postData())).toEqual({ type: "prize_reward", day_num: 2 });
  await poll(() => bodyRows(page).count(), 1);
  const cells = await bodyRows(page).first().getByRole("cell").allInnerTexts();
  expect(cells.slice(0, 7)).toEqual([
    winner.user.id,
    winner.email,
    expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    "抽奖奖励",
    "+2.00",
    "0.00",
    "2.00",
  ]);
  await screenshots(page, "admin-all-traffic-records");
  await page.getByLabel("记录类型").selectOption("push_spend");
  await page.getByRole("cell", { name: "暂无记录" }).waitFor();

  // the error log: 清理 asks first; cancelling keeps the rows
  await page.goto(`${server.url}/#/admin_error`);
  await page.getByRole("heading", { name: "运维日志" }).waitFor();
  await poll(() => bodyRows(page).count(), 2);
  await bodyRows(page).first().getByText("展开").click();
  await screenshots(page, "admin-error");
  await page.getByRole("button", { name: "清理", exact: true }).click();
  const confirm = page.getByRole("dialog", { name: "清理确认" });
  await confirm.getByRole("button", { name: "取消" }).click();
  await confirm.waitFor({ state: "hidden" });
  expect(await bodyRows(page).count()).toBe(2);

  // a clear the server answers with an error (999, as an unexpected failure is answered): 清理失败
  // and the rows stay
  await page.route("**/api/admin/errors/clear", (route) =>
    route.fulfill({
      contentType: "application/json",
      body: JSON.stringify({ data: toBase64Json({ code: 999, data: null, msg: "服务器内部错误" }) }),
    }),
  );
  await page.getByRole("button", { name: "清理", exact: true }).click();
  await confirm.getByRole("button", { name: "清理" }).click();
  await toast(page, "清理失败").waitFor();
  expect(await bodyRows(page).count()).toBe(2);
  expect((await db().get<{ n: number }>("SELECT COUNT(*) AS n FROM error_logs"))?.n).toBe(2);
  await page.unroute("**/api/admin/errors/clear");

  // confirmed: the button is blocked while the clear runs, then the toast with N and an empty list
  await page.route("**/api/admin/errors/clear", async (route) => {
    await Bun.sleep(300);
    await route.continue();
  });
  await page.getByRole("button", { name: "清理", exact: true }).click();
  await confirm.getByRole("button", { name: "清理" }).click();
  await page.getByRole("button", { name: "清理中…" }).waitFor();
  expect(await page.getByRole("button", { name: "清理中…" }).isDisabled()).toBe(true);
  await toast(page, "成功清理了 2 条错误记录").waitFor();
  await page.getByRole("cell", { name: "暂无记录" }).waitFor();
  expect((await db().get<{ n: number }>("SELECT COUNT(*) AS n FROM error_logs"))?.n).toBe(0);
  expect(errors).toEqual([]);
  await context.close();
});

test("an agency owner sees 代理中心 and allocates traffic to its customer; others have no such tab", async () => {
  const owner = await loggedInClient(server);
  const customer = await loggedInClient(server);
  await setAgency(server.context, { email: owner.email, name: "华东代理" });
  await attachCustomer(server.context, { agency_email: owner.email, customer_email: customer.email });
  await record(owner.user.id, "buy", 5 * GB);

  const other = await newPage(browser, 1280);
  const plain = await loggedInClient(server);
  await loginInBrowser(other.page, server.url, plain.email, plain.password);
  expect(await other.page.getByRole("link", { name: "流量记录" }).count()).toBeGreaterThan(0);
  expect(await other.page.getByRole("link", { name: "代理中心" }).count()).toBe(0);
  await other.context.close();

  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, owner.email, owner.password);
  await page.getByRole("link", { name: "代理中心" }).click();
  await page.getByRole("heading", { name: "代理中心 · 华东代理" }).waitFor();
  expect(await page.getByTestId("agency-available").textContent()).toBe("5.00 G");
  // below the transfer minimum (minPushNum, 20 G by default): said beside the field, nothing sent
  const amount = page.getByLabel("流量(G)");
  expect(await amount.getAttribute("placeholder")).toBe("最低 20 G");
  let allocations = 0;
  page.on("request", (r) => {
    if (r.url().endsWith("/api/agency/allocate")) allocations += 1;
  });
  await amount.fill("2");
  await page.getByRole("button", { name: "分配" }).click();
  await page.getByText("最低分配20G").waitFor();
  expect(allocations).toBe(0);
  await server.context.settings.update({ minPushNum: 1 });
  await page.reload();
  await page.getByRole("heading", { name: "代理中心 · 华东代理" }).waitFor();
  await page.getByLabel("流量(G)").fill("2");
  const sent = page.waitForRequest((r) => r.url().endsWith("/api/agency/allocate"));
  await page.getByRole("button", { name: "分配" }).click();
  expect(payloadOf((await sent).postData())).toEqual({ email: customer.email, trafficG: 2 });
  await toast(page, `已向 ${customer.email} 分配 2G`).waitFor();
  await poll(() => page.getByTestId("agency-available").textContent(), "3.00 G");
  expect(await trafficOf(customer.user.id)).toBe(2 * GB);
  expect(await trafficOf(owner.user.id)).toBe(3 * GB);
  await screenshots(page, "agency");

  // more than it has: the server's refusal is shown and nothing moves
  await page.getByLabel("流量(G)").fill("4");
  await page.getByRole("button", { name: "分配" }).click();
  await toast(page, "分配失败:可分配的永久流量不足（当前 3G").waitFor();
  expect(await trafficOf(owner.user.id)).toBe(3 * GB);
  expect(errors).toEqual([]);
  await context.close();
});
