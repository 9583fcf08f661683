/**
 * The statistics page (/admin_stastic) in Debian's Chromium, as an admin: the tiles, the three
 * uPlot charts (drawn on canvas, in a chunk fetched only when the page opens), the 7 / 30 / 90
 * day switch asking basic_stastic again, and the seed's three tables of the last 7 days. No
 * Content-Security-Policy violation. Screenshots at 1280 and 390 px. Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { addDays, businessDay } from "../../src/lib/time.ts";
import { GB } from "../../src/lib/traffic.ts";
import { createOrder } from "../../src/modules/order/service.ts";
import { settleWithoutGateway } from "../../src/payments/credit.ts";
import { makeCombo, startShopServer } from "../commerce.ts";
import { loggedInClient, type TestServer } from "../harness.ts";
import { chargeNode, makeChargingNode, noonOfDay, noonZone } from "../traffic.ts";
import {
  launchChromium,
  loginInBrowser,
  newPage,
  payloadOf,
  poll,
  recordCspViolations,
  screenshots,
} from "./chromium.ts";

/** The server's zone, where it is about noon: the last 7 days cannot turn over while the test runs. */
const ZONE = noonZone();
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

/** A customer who bought 100 G on each of the last 10 days and used 1–10 G a day through a node. */
async function seedTenDays() {
  const ctx = server.context;
  const agentId = await makeChargingNode(server, ZONE);
  const combo = await makeCombo(server, { name: "100G", price: 15, traffic: 100 * GB });
  const { user } = await loggedInClient(server);
  const nodeUid = (
    (await ctx.db.get("SELECT node_uid FROM users WHERE id = ?", user.id)) as { node_uid: number }
  ).node_uid;
  const now = Date.now();
  for (let offset = -9; offset <= -1; offset++) {
    const noon = noonOfDay(now, offset, ZONE);
    await settleWithoutGateway(
      ctx,
      (await createOrder(ctx, user, combo._id, noon - 1000))._id,
      "manual",
      "test",
      noon,
    );
    await chargeNode(server, agentId, { [nodeUid]: [0, (10 + offset) * GB] }, noon + 1000);
  }
}

test("an admin sees tiles, uPlot charts over 7 / 30 / 90 days and the three tables", async () => {
  await seedTenDays();
  const admin = await loggedInClient(server, { role: "admin" });
  const { context, page, errors } = await newPage(browser, 1280);
  await recordCspViolations(page, errors);
  const chunks: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("/chunks/StatsCharts-")) chunks.push(request.url());
  });
  await loginInBrowser(page, server.url, admin.email, admin.password);
  expect(chunks).toEqual([]); // uPlot is not part of the first download

  const firstCall = page.waitForRequest((r) => r.url().endsWith("/api/admin/users/basic_stastic"));
  await page.goto(`${server.url}/#/admin_stastic`);
  await page.getByRole("heading", { name: "统计", exact: true }).waitFor();
  expect(payloadOf((await firstCall).postData())).toEqual({ num: 7 });
  const tiles = page.getByRole("definition");
  await tiles.first().waitFor();
  // 9 × 100 G bought, 1 + 2 + … + 9 = 45 G used: 855 G left
  expect(await tiles.allTextContents()).toEqual([
    `${(Math.round((855 / 1024) * 100) / 100).toFixed(2)} T`,
    "0",
  ]);

  // three charts, each a uPlot canvas; the income chart's legend names its series
  const charts = page.locator(".stats-chart");
  await poll(() => page.locator(".stats-chart .uplot canvas").count(), 3, 10_000);
  expect(await charts.locator("h2").allTextContents()).toEqual([
    "收入（元）",
    "流量消耗（G）",
    "活跃用户（人）",
  ]);
  expect(await charts.first().locator(".u-legend").textContent()).toContain("收入（元）");
  expect(chunks).toHaveLength(1);

  // the seed's three tables: the last 7 days, newest first; yesterday paid ¥15 and used 9 G
  const today = businessDay(Date.now(), ZONE);
  const tables = page.locator(".stats-table table");
  expect(await tables.count()).toBe(3);
  const firstColumn = await tables.first().locator("tbody tr td:first-child").allTextContents();
  expect(firstColumn).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => addDays(today, -i)));
  expect(await tables.nth(0).locator("tbody tr").nth(1).locator("td").allTextContents()).toEqual([
    addDays(today, -1),
    "0",
    "1",
    "15.00",
  ]);
  expect(await tables.nth(1).locator("tbody tr").nth(1).locator("td").allTextContents()).toEqual([
    addDays(today, -1),
    "1",
    "9.00",
    "9.00",
    "0",
    "0.00",
    "0.00",
  ]);
  await screenshots(page, "admin-stats-7");

  for (const [label, num] of [
    ["30 天", 30],
    ["90 天", 90],
    ["7 天", 7],
  ] as const) {
    const sent = page.waitForRequest((r) => r.url().endsWith("/api/admin/users/basic_stastic"));
    await page.getByRole("button", { name: label }).click();
    expect(payloadOf((await sent).postData())).toEqual({ num });
    await poll(() => page.getByRole("button", { name: label }).getAttribute("aria-pressed"), "true");
    await poll(() => page.locator(".stats-chart .uplot canvas").count(), 3, 10_000);
    // the x axis labels the days of the range: the oldest is num − 1 days ago
    const plot = page.locator(".stats-chart").first();
    await plot.locator(".u-over").hover({ position: { x: 2, y: 50 } });
    await poll(() => plot.locator(".u-legend .u-value").first().textContent(), addDays(today, -(num - 1)));
    expect(await tables.first().locator("tbody tr").count()).toBe(7);
    if (num === 90) await screenshots(page, "admin-stats-90");
  }
  expect(chunks).toHaveLength(1);
  expect(errors).toEqual([]);
  await context.close();
});

test("without any activity each chart says 暂无记录", async () => {
  const fresh = await startShopServer();
  try {
    const admin = await loggedInClient(fresh, { role: "admin" });
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, fresh.url, admin.email, admin.password);
    await page.goto(`${fresh.url}/#/admin_stastic`);
    await poll(() => page.locator(".stats-chart-empty").count(), 3, 10_000);
    expect(await page.locator(".stats-chart-empty").allTextContents()).toEqual([
      "暂无记录",
      "暂无记录",
      "暂无记录",
    ]);
    expect(await page.locator(".uplot").count()).toBe(0);
    await screenshots(page, "admin-stats-empty");
    expect(errors).toEqual([]);
    await context.close();
  } finally {
    await fresh.close();
  }
});
