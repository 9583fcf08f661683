/**
 * 流量记录 and the dashboard's traffic cards in Debian's Chromium against a real server: a customer
 * buys packages (sandbox gateway) and is charged for node traffic (applyNodeReport); the page
 * lists the day's spend record with the right GB figures, filters by type and shows the empty
 * state; the dashboard shows today's quota left and permanent traffic, also after a new charge.
 * Needs the SPA built first (`bun run build:web`). Screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { businessDay } from "../../src/lib/time.ts";
import { GB } from "../../src/lib/traffic.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { findUserById } from "../../src/modules/user/service.ts";
import { createOrder, makeCombo, payWithSandbox, startShopServer } from "../commerce.ts";
import { type ApiClient, loggedInClient, type TestServer } from "../harness.ts";
import { chargeNode, makeChargingNode, noonOfDay, noonZone } from "../traffic.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf, poll, screenshots } from "./chromium.ts";

const PATH = "/api/traffic/my_traffic_records";
const zone = noonZone();
let server: TestServer;
let browser: Browser;
let agentId = "";

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
  agentId = await makeChargingNode(server, zone);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function buy(client: ApiClient, fields: Record<string, unknown>) {
  const combo = await makeCombo(server, { price: 10, ...fields });
  await payWithSandbox(server, client, (await createOrder(client, combo._id))._id);
}

const nodeUid = async (user: UserRow) => ((await findUserById(server.context, user.id)) as UserRow).node_uid;

/** The body rows of the records table, cell texts. */
const tableRows = (page: Page) =>
  page
    .locator("table tbody tr")
    .evaluateAll((rows) =>
      rows.map((row) => Array.from(row.querySelectorAll("td"), (cell) => cell.textContent?.trim() ?? "")),
    );

/** The rows without the 更新时间 column (formatted in the browser's timezone). */
const rowsWithoutTime = async (page: Page) => (await tableRows(page)).map((cells) => cells.slice(0, 7));

const statValue = (page: Page, card: string) =>
  page.getByRole("region", { name: card }).locator(".stat-value").textContent();

describe("traffic records", () => {
  let customer: Awaited<ReturnType<typeof loggedInClient>>;
  const today = businessDay(Date.now(), zone);
  const twoDaysAgo = businessDay(noonOfDay(Date.now(), -2, zone), zone);

  beforeAll(async () => {
    customer = await loggedInClient(server);
    await buy(customer.client, { name: "10G 流量包", traffic: 10 * GB });
    await buy(customer.client, { name: "30 天时间套餐", vipDuration: 30, limit: 2 * GB });
    const uid = await nodeUid(customer.user);
    // Two days ago 3 G: 2 G from that day's quota, 1 G from permanent traffic.
    await chargeNode(server, agentId, { [uid]: [0, 3 * GB] }, noonOfDay(Date.now(), -2, zone));
    // Today 0.75 G, inside today's 2 G quota.
    await chargeNode(server, agentId, { [uid]: [0.25 * GB, 0.5 * GB] }, Date.now());
  });

  test("the dashboard shows today's quota left and the permanent traffic, also after a new charge", async () => {
    const { page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, customer.email, customer.password);
    await poll(() => statValue(page, "时间套餐"), "1.25");
    const timeCard = page.getByRole("region", { name: "时间套餐" });
    await expect(timeCard.textContent()).resolves.toContain("今日剩余额度 · 已用 0.75 / 2.00 GB");
    await expect(statValue(page, "不限时流量")).resolves.toBe("9.00");
    await expect(page.getByRole("region", { name: "不限时流量" }).textContent()).resolves.toContain(
      "累计已用 3.75 GB",
    );
    await screenshots(page, "dashboard-traffic");

    // 1.5 G more today: 1.25 G finishes the quota, 0.25 G comes from permanent traffic.
    await chargeNode(server, agentId, { [await nodeUid(customer.user)]: [0, 1.5 * GB] }, Date.now());
    await page.reload();
    await poll(() => statValue(page, "时间套餐"), "0.00");
    await expect(timeCard.textContent()).resolves.toContain("已用 2.00 / 2.00 GB");
    await expect(statValue(page, "不限时流量")).resolves.toBe("8.75");
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("lists the spend records with their GB figures, newest first, and filters by type", async () => {
    const { page, errors } = await newPage(browser, 1280);
    const asked: Record<string, unknown>[] = [];
    page.on("request", (request) => {
      if (request.url().endsWith(PATH)) asked.push(payloadOf(request.postData()));
    });
    await loginInBrowser(page, server.url, customer.email, customer.password);
    await page.getByRole("link", { name: "流量记录" }).click();
    await page.getByRole("heading", { name: "流量记录" }).waitFor();
    await expect(page.getByText("仅显示最近 10 天的记录").isVisible()).resolves.toBe(true);

    const header = await page.locator("table thead th").allTextContents();
    expect(header).toEqual([
      "日期",
      "类型",
      "说明",
      "流量变化 (G)",
      "套餐抵扣 (G)",
      "剩余流量 (G)",
      "累计使用 (G)",
      "更新时间",
    ]);
    // Today's record (2.25 G: 2 G quota, 0.25 G permanent), the purchases, the record of two days ago.
    const all = [
      [today, "流量消耗", "节点流量", "-0.25", "2.00", "8.75", "5.25"],
      [today, "购买套餐", "购买 30 天时间套餐", "0.00", "0.00", "10.00", "0.00"],
      [today, "购买套餐", "购买 10G 流量包", "+10.00", "0.00", "10.00", "0.00"],
      [twoDaysAgo, "流量消耗", "节点流量", "-1.00", "2.00", "9.00", "3.00"],
    ];
    await poll(() => rowsWithoutTime(page), all);
    const times = (await tableRows(page)).map((cells) => cells[7]);
    for (const time of times) expect(time).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    await expect(
      page.locator("table tbody tr").first().locator(".traffic-minus").textContent(),
    ).resolves.toBe("-0.25");
    await screenshots(page, "traffic-records");

    const filter = page.getByLabel("记录类型");
    const options = await filter.locator("option").allTextContents();
    expect(options).toEqual([
      "全部",
      "流量消耗",
      "购买套餐",
      "兑换券",
      "签到",
      "抽奖消耗",
      "抽奖奖励",
      "流量转赠",
      "接收转赠",
      "体验到期",
      "代理消耗",
      "代理分配",
    ]);
    await filter.selectOption({ label: "流量消耗" });
    await poll(() => rowsWithoutTime(page), [all[0], all[3]]);
    await filter.selectOption({ label: "购买套餐" });
    await poll(() => rowsWithoutTime(page), [all[1], all[2]]);
    await filter.selectOption({ label: "接收转赠" });
    await page.getByText("暂无流量记录").waitFor();
    await poll(() => rowsWithoutTime(page), []);
    await filter.selectOption({ label: "全部" });
    await poll(() => rowsWithoutTime(page), all);
    expect(asked.map((payload) => payload.type)).toEqual(["all", "spend", "buy", "push_receive", "all"]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("fits a 390 px phone: the table scrolls inside its frame, not the page", async () => {
    const { page, errors } = await newPage(browser, 390);
    await loginInBrowser(page, server.url, customer.email, customer.password);
    await page.goto(`${server.url}/#/traffic_records`);
    await poll(async () => (await tableRows(page)).length, 4);
    const widths = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      frame: (document.querySelector(".table-wrap") as HTMLElement).clientWidth,
      table: (document.querySelector(".table") as HTMLElement).scrollWidth,
    }));
    expect(widths.page).toBeLessThanOrEqual(390);
    expect(widths.frame).toBeLessThanOrEqual(390);
    expect(widths.table).toBeGreaterThan(widths.frame);
    await expect(page.getByLabel("记录类型").isVisible()).resolves.toBe(true);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("a fresh user sees the empty state", async () => {
    const fresh = await loggedInClient(server);
    const { page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, fresh.email, fresh.password);
    await page.goto(`${server.url}/#/traffic_records`);
    const empty = page.getByText("暂无流量记录");
    await empty.waitFor();
    await poll(() => rowsWithoutTime(page), []);
    // On a phone the message sits inside the screen, not centred across a wide table.
    await page.setViewportSize({ width: 390, height: 800 });
    const box = await empty.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
    await screenshots(page, "traffic-records-empty");
    expect(errors).toEqual([]);
    await page.context().close();
  });

  test("a visitor is asked to log in and nothing is requested", async () => {
    const { page, errors } = await newPage(browser, 1280);
    const asked: string[] = [];
    page.on("request", (request) => {
      if (request.url().endsWith(PATH)) asked.push(request.url());
    });
    await page.goto(`${server.url}/#/traffic_records`);
    await page.getByRole("heading", { name: "登录后查看流量记录" }).waitFor();
    await expect(page.getByRole("link", { name: "登录", exact: true }).count()).resolves.toBeGreaterThan(0);
    expect(asked).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
