/**
 * Issue 30 §3 in Debian's Chromium: 配置管理 → Webhook. An admin adds a webhook (URL, secret, events
 * as checkboxes), sees the secret masked when editing it, sends 发送测试 to a receiver on loopback
 * (which verifies the signature), reads the delivery log, and deletes the webhook after confirming.
 * axe-core finds no serious or critical violation in the section, nor in its dialog, at 1280 and
 * 390 px. Screenshots land in test-results/. Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import axe, { type AxeResults } from "axe-core";
import type { Browser, Page } from "playwright-core";
import { SECRET_MASK, type Settings } from "../../src/modules/settings/schema.ts";
import { type FakeWebhookReceiver, startWebhookReceiver } from "../fakes/webhook-receiver.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, SHOTS } from "./chromium.ts";

const SECRET = "whsec-browser-0123456789";

let server: TestServer;
let browser: Browser;
let receiver: FakeWebhookReceiver;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer({ webhooks: { pollMs: 50 } });
  receiver = startWebhookReceiver(SECRET);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.close();
});

const section = (page: Page) => page.locator("section.webhook-section");

/** Serious and critical axe-core violations inside `selector`. */
async function violations(page: Page, selector: string): Promise<string[]> {
  await page.waitForTimeout(300); // fades and pops finish, colours are measured as drawn
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axe.source);
  const results = await page.evaluate(
    (include) =>
      (window as unknown as { axe: typeof axe }).axe.run(
        { include: [include] },
        { resultTypes: ["violations"] },
      ) as Promise<AxeResults>,
    selector,
  );
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((node) => `${v.id}: ${node.target.join(" ")}`));
}

/** The element's screenshot at 1280 and 390 px (`<name>-1280.png`, `<name>-390.png`) with axe at both. */
async function checkAtBothWidths(page: Page, selector: string, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    expect({ width, found: await violations(page, selector) }).toEqual({ width, found: [] });
    if (width === 390)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.locator(selector).screenshot({ path: join(SHOTS, `${name}-${width}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

test("an admin adds a webhook, tests it, reads the log and deletes it; axe at 1280 and 390 px", async () => {
  const admin = await loggedInClient(server, { role: "admin" });
  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/admin_config`);
  await section(page).getByRole("heading", { name: "Webhook" }).waitFor();
  await section(page).getByRole("cell", { name: "暂无记录" }).first().waitFor();

  await section(page).getByRole("button", { name: "添加 Webhook" }).click();
  const dialog = page.getByRole("dialog", { name: "添加 Webhook" });
  await dialog.waitFor();
  await dialog.getByRole("button", { name: "保存" }).click();
  await dialog.getByText("请至少选择一个事件").waitFor();
  expect(await violations(page, "[role=dialog]")).toEqual([]);
  await dialog.getByLabel("地址").fill(receiver.url);
  await dialog.getByLabel("密钥").fill(SECRET);
  await dialog.getByRole("checkbox", { name: "新工单（ticket.created）" }).check();
  await dialog.getByRole("checkbox", { name: "工单回复（ticket.replied）" }).check();
  await dialog.getByRole("button", { name: "保存" }).click();
  await dialog.waitFor({ state: "hidden" });
  await page.getByText("添加成功").waitFor();

  const rows = section(page).locator("table").first().locator("tbody tr");
  await poll(() => rows.count(), 1);
  const cells = await rows.first().getByRole("cell").allInnerTexts();
  expect(cells.slice(0, 4)).toEqual([receiver.url, "新工单、工单回复", "尚未投递", "0"]);
  const stored = (await server.context.settings.get("webhooks")) as Settings["webhooks"];
  expect(stored.map((w) => [w.url, w.secret, w.events])).toEqual([
    [receiver.url, SECRET, ["ticket.created", "ticket.replied"]],
  ]);

  // Editing shows the mask, and saving it with the mask keeps the secret.
  await rows.first().getByRole("button", { name: "编辑" }).click();
  const edit = page.getByRole("dialog", { name: "编辑 Webhook" });
  expect(await edit.getByLabel("密钥").inputValue()).toBe(SECRET_MASK);
  await edit.getByRole("checkbox", { name: "节点离线（node.down）" }).check();
  await checkAtBothWidths(page, "[role=dialog]", "admin-webhook-dialog");
  await edit.getByRole("button", { name: "保存" }).click();
  await edit.waitFor({ state: "hidden" });
  await page.getByText("更新成功").waitFor();
  expect((await server.context.settings.get("webhooks")).map((w) => [w.secret, w.events.length])).toEqual([
    [SECRET, 3],
  ]);

  // 发送测试: the receiver gets a signed ping; the toast and the log say it arrived.
  await rows.first().getByRole("button", { name: "发送测试" }).click();
  await page.getByText("测试事件已送达（HTTP 200）").waitFor();
  expect(receiver.delivered.map((d) => [d.type, d.verified])).toEqual([["ping", true]]);
  const log = section(page).locator("table").nth(1).locator("tbody tr");
  await poll(() => log.first().getByRole("cell").nth(1).textContent(), "测试（ping）");
  expect((await log.first().getByRole("cell").allInnerTexts()).slice(1)).toEqual([
    "测试（ping）",
    receiver.url,
    "已送达",
    "1",
    "HTTP 200",
  ]);
  await poll(
    async () => ((await rows.first().getByRole("cell").nth(2).textContent()) ?? "").includes("HTTP 200"),
    true,
  );
  await checkAtBothWidths(page, "section.webhook-section", "admin-webhooks");

  // Deleting asks first.
  await rows.first().getByRole("button", { name: "删除" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "删除" }).click();
  await page.getByText("Webhook 已删除").waitFor();
  await poll(async () => (await server.context.settings.get("webhooks")).length, 0);
  expect(errors).toEqual([]);
  await context.close();
});
