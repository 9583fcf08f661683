/**
 * Issue 30 §4 in Debian's Chromium: 配置管理 → 定时备份 holds the off-box settings (S3 target,
 * Telegram delivery, the encryption passphrase, the S3 keep count). An admin fills them and saves
 * (更新成功); the secrets come back masked. axe-core finds no serious or critical violation in the
 * settings' sections at 1280 and 390 px, and the page does not overflow at 390 px. Screenshots land in test-results/. Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { AxeResults } from "axe-core";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { SECRET_MASK } from "../../src/modules/settings/schema.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, reloadPage, SHOTS } from "./chromium.ts";

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

const backupSection = (page: Page) =>
  page.locator("fieldset", { has: page.locator("legend", { hasText: "定时备份" }) });

/** The serious and critical axe-core violations inside the backup section, as "rule: target". */
async function axeFindings(page: Page): Promise<string[]> {
  // Evaluated over the protocol rather than added as a <script>: the page's CSP refuses inline scripts.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axe.source);
  const results = await page.evaluate(
    () =>
      (window as unknown as { axe: typeof axe }).axe.run(
        { include: [["fieldset.admin-section"]] },
        { resultTypes: ["violations"] },
      ) as Promise<AxeResults>,
  );
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(" ")}`));
}

test("an admin sets the S3 target, Telegram delivery and the passphrase; secrets come back masked", async () => {
  const admin = await loggedInClient(server, { role: "admin" });
  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/admin_config`);
  const section = backupSection(page);
  await section.getByLabel("S3 地址", { exact: true }).waitFor();

  await section.getByLabel("S3 地址", { exact: true }).fill("http://127.0.0.1:9000");
  await section.getByLabel("S3 存储桶", { exact: true }).fill("ferry-backups");
  await section.getByLabel("S3 区域", { exact: true }).fill("auto");
  await section.getByLabel("S3 Access Key ID", { exact: true }).fill("AKIAFERRYTEST");
  await section.getByLabel("S3 Secret Access Key", { exact: true }).fill("a-secret-access-key");
  await section.getByLabel("S3 路径前缀", { exact: true }).fill("nightly/");
  await section.getByLabel("S3 保留份数", { exact: true }).fill("14");
  await section.getByRole("switch", { name: "发送到 Telegram" }).check();
  await section.getByLabel("加密口令", { exact: true }).fill("a long passphrase");
  await page.getByRole("button", { name: "保存" }).click();
  await page.locator(".toast-msg", { hasText: "更新成功" }).first().waitFor();

  expect(await server.context.settings.all()).toMatchObject({
    backup_s3_endpoint: "http://127.0.0.1:9000",
    backup_s3_bucket: "ferry-backups",
    backup_s3_region: "auto",
    backup_s3_access_key_id: "AKIAFERRYTEST",
    backup_s3_secret_access_key: "a-secret-access-key",
    backup_s3_prefix: "nightly/",
    backup_offbox_keep: 14,
    backup_telegram: true,
    backup_passphrase: "a long passphrase",
  });

  await reloadPage(page);
  await section.getByLabel("加密口令", { exact: true }).waitFor();
  expect(await section.getByLabel("加密口令", { exact: true }).inputValue()).toBe(SECRET_MASK);
  expect(await section.getByLabel("S3 Secret Access Key", { exact: true }).inputValue()).toBe(SECRET_MASK);
  expect(await page.content()).not.toContain("a long passphrase");

  await section.scrollIntoViewIfNeeded();
  expect(await axeFindings(page)).toEqual([]);
  await section.screenshot({ path: join(SHOTS, "admin-config-offbox-1280.png") });

  await page.setViewportSize({ width: 390, height: 800 });
  await page.waitForTimeout(300);
  expect(await axeFindings(page)).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await section.screenshot({ path: join(SHOTS, "admin-config-offbox-390.png") });
  expect(errors).toEqual([]);
  await context.close();
}, 90_000);
