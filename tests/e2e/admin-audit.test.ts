/**
 * 操作日志 (issue 30) in Debian's Chromium: an admin's changes through the back office are listed
 * newest first with who, IP, action and target; a row's diff opens in place as a field / 原值 /
 * 新值 table with the secret masked; the filters narrow the list and an empty result says so; the
 * pager moves through pages; at 390 px the table scrolls sideways inside its frame with the 变更
 * column kept in view; axe finds no serious or critical violation at 1280 and 390 px. Screenshots
 * land in test-results/. Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { AxeResults } from "axe-core";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { SECRET_MASK } from "../../src/modules/settings/schema.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

const SECRET = "smtp-Browser-Secret-9";

let server: TestServer;
let browser: Browser;
let admin: Awaited<ReturnType<typeof loggedInClient>>;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  admin = await loggedInClient(server, { role: "admin" });
  await admin.client.ok("/api/admin/config/set_config", { smtp_password: SECRET });
  for (let i = 1; i <= 24; i++)
    await admin.client.ok("/api/admin/permissions/update", { name: `权限${i}`, desc: "" });
  await admin.client.ok("/api/admin/entrys/update", { name: "审计入口", ip: "198.51.100.9" });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const rows = (page: Page) => page.locator(".admin-list table.table > tbody > tr");

async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axe.source);
  const results = await page.evaluate(
    () =>
      (window as unknown as { axe: typeof axe }).axe.run(document, {
        resultTypes: ["violations"],
      }) as Promise<AxeResults>,
  );
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((node) => `${v.id}: ${node.target.join(" ")}`));
}

test("an admin reads, opens, filters and pages the trail at 1280 and 390 px", async () => {
  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/admin_audit`);
  await page.getByRole("heading", { name: "操作日志" }).waitFor();
  await page.getByRole("cell", { name: "entry.create" }).waitFor();
  // The tab sits next to 运维日志.
  const tabs = await page.locator("nav a").allInnerTexts();
  expect(tabs.indexOf("操作日志")).toBe(tabs.indexOf("运维日志") + 1);

  // Newest first: the entry, then the permissions; 20 a page.
  expect(await rows(page).count()).toBe(20);
  const first = await rows(page).first().getByRole("cell").allInnerTexts();
  expect(first.slice(0, 5)).toEqual([
    expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    admin.email,
    "127.0.0.1",
    "entry.create",
    expect.stringMatching(/^[0-9a-f]{24}$/),
  ]);
  await page.getByText(/共 \d+ 条/).waitFor();
  await expect(seriousViolations(page)).resolves.toEqual([]);

  // The settings row's diff opens in place: the secret is the mask.
  await page.getByLabel("操作", { exact: true }).fill("settings");
  await page.getByLabel("操作人").fill(admin.email);
  await page.getByRole("button", { name: "查询" }).click();
  await poll(() => rows(page).count(), 1);
  await rows(page).first().getByText("1 项变更").click();
  const diff = rows(page).first().locator(".audit-diff-table tbody tr");
  expect(await diff.first().locator("th, td").allInnerTexts()).toEqual([
    "smtp_password",
    "（空）",
    SECRET_MASK,
  ]);
  expect(await page.content()).not.toContain(SECRET);
  await expect(seriousViolations(page)).resolves.toEqual([]);
  await screenshots(page, "admin-audit-diff");

  // Nothing matches: the empty state says so.
  await page.getByLabel("对象").fill("no-such-target");
  await page.getByRole("button", { name: "查询" }).click();
  await page.getByRole("cell", { name: "没有符合条件的记录" }).waitFor();

  // 清除 brings the whole list back; the pager moves to the last page.
  await page.getByRole("button", { name: "清除" }).click();
  await poll(() => rows(page).count(), 20);
  await page.getByRole("button", { name: "末页" }).click();
  await poll(
    async () =>
      ((await rows(page).first().getByRole("cell").nth(3).textContent()) ?? "").startsWith("permission"),
    true,
  );
  await page.getByRole("button", { name: "首页" }).click();
  await page.getByRole("cell", { name: "entry.create" }).waitFor();
  await screenshots(page, "admin-audit");

  // 390 px: the table scrolls sideways in its frame and 变更 stays at the frame's right edge.
  await page.setViewportSize({ width: 390, height: 800 });
  const frame = page.getByRole("region", { name: "操作日志" });
  await frame.waitFor();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  const diffCell = rows(page).first().getByRole("cell").last();
  const timeCell = rows(page).first().getByRole("cell").first();
  const before = { diff: await diffCell.boundingBox(), time: await timeCell.boundingBox() };
  await frame.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
  await poll(async () => await frame.evaluate((el) => el.scrollLeft > 0), true);
  // The time scrolled away; 变更 stayed (to the sub-pixel the sticky cell is drawn at).
  expect((await timeCell.boundingBox())?.x).toBeLessThan((before.time?.x as number) - 50);
  expect((await diffCell.boundingBox())?.x).toBeCloseTo(before.diff?.x as number, 0);
  await expect(seriousViolations(page)).resolves.toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
});

test("an empty trail says 暂无操作记录; yunying has no 操作日志 tab", async () => {
  const { context, page, errors } = await newPage(browser, 390);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/admin_audit`);
  await page.getByLabel("开始日期").fill("2999-01-01");
  await page.getByRole("button", { name: "查询" }).click();
  await page.getByRole("cell", { name: "没有符合条件的记录" }).waitFor();
  await context.close();

  const fresh = await startTestServer();
  try {
    const first = await loggedInClient(fresh, { role: "admin" });
    const view = await newPage(browser, 390);
    await loginInBrowser(view.page, fresh.url, first.email, first.password);
    // The harness saved site_url as the system: that row is there; none by a person.
    await view.page.goto(`${fresh.url}/#/admin_audit`);
    await view.page.getByLabel("操作人").fill(first.email);
    await view.page.getByRole("button", { name: "查询" }).click();
    await view.page.getByRole("cell", { name: "没有符合条件的记录" }).waitFor();
    await expect(seriousViolations(view.page)).resolves.toEqual([]);
    await screenshots(view.page, "admin-audit-empty");
    expect(view.errors).toEqual([]);
    await view.context.close();

    const yunying = await loggedInClient(fresh, { role: "yunying" });
    const other = await newPage(browser, 1280);
    await loginInBrowser(other.page, fresh.url, yunying.email, yunying.password);
    await other.page.getByRole("link", { name: "优惠券管理" }).first().waitFor();
    expect(await other.page.locator("nav a").allInnerTexts()).not.toContain("操作日志");
    await other.context.close();
  } finally {
    await fresh.close();
  }
  expect(errors).toEqual([]);
});
