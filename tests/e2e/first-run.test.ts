/**
 * A fresh install as a new operator meets it (issue 12): `ferry serve` with FERRY_SANDBOX_PAY=1
 * and nothing else, the first admin made with the command start-up prints, then in Chromium the
 * admin sees which payment is in force, is told in Chinese on the field what is wrong with a bad
 * setting, adds a combo and a node (saved on the first try with the type's default ports), and a
 * customer signs up and buys the combo through the sandbox.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { runInShell, type ServeProcess, startServe } from "../../cli/test-helpers.ts";
import { uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";
import { payOnSandboxCashier } from "./sandbox-cashier.ts";

const ADMIN_PASSWORD = "first-admin-password";
const CUSTOMER_PASSWORD = "customer-password";
const COMBO = "新手流量包 50G";

let browser: Browser;
let serve: ServeProcess;
let printed: string;
const dataDir = mkdtempSync(join(tmpdir(), "ferry-first-run-"));

beforeAll(async () => {
  browser = await launchChromium();
  serve = await startServe(["--port", "0", "--data", dataDir], {
    env: { FERRY_SANDBOX_PAY: "1" },
    timeoutMs: 170_000,
  });
  printed = await serve.readUntil(/user create[^\n]*\n/);
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The command start-up printed under "no admin account yet", run as printed with the password typed in. */
function createAdminAsPrinted(): string {
  const lines = printed.split("\n");
  const hint = lines.findIndex((line) => line.startsWith("no admin account yet"));
  expect(hint).toBeGreaterThan(0);
  const command = (lines[hint + 1] ?? "").trim();
  const email = /--email (\S+)/.exec(command)?.[1] ?? "";
  expect(email).toContain("@");
  const run = runInShell(command, `${ADMIN_PASSWORD}\n`, tmpdir());
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  return email;
}

/** The URL start-up said to open. */
function openUrl(): string {
  const url = /^open (\S+)$/m.exec(printed)?.[1] ?? "";
  expect(url).toBe(`${serve.url}/`);
  return serve.url;
}

async function adminChecksPayments(page: Page, base: string) {
  await page.goto(`${base}/#/admin_config`);
  const inForce = page.getByRole("region", { name: "当前生效的支付方式" });
  await inForce.waitFor();
  for (const mode of ["alipay", "wxpay"]) {
    await expect(inForce.locator(`[data-mode="${mode}"]`).textContent()).resolves.toContain(
      "沙箱支付（环境变量 FERRY_SANDBOX_PAY=1",
    );
  }
  await expect(inForce.locator('[data-mode="usdt"]').textContent()).resolves.toContain("未开启");
  // The switch says what is in force: on, by the variable, not changeable here.
  const sandboxSwitch = page.getByRole("switch", { name: "沙箱支付" });
  await expect(sandboxSwitch.isChecked()).resolves.toBe(true);
  await expect(sandboxSwitch.isDisabled()).resolves.toBe(true);
}

async function adminMistypesASetting(page: Page) {
  const rate = page.getByLabel("汇率");
  await rate.fill("0");
  await page.getByRole("button", { name: "保存" }).click();
  const field = page.locator(".field").filter({ has: rate });
  const message = (await field.locator(".field-error").textContent()) ?? "";
  expect(message).not.toBe("");
  expect(message).not.toMatch(/[A-Za-z]{3,}/);
  await expect(rate.getAttribute("aria-invalid")).resolves.toBe("true");
  await expect(rate.evaluate((input) => input === document.activeElement)).resolves.toBe(true);
  await screenshots(page, "first-run-config-error");
  await page.getByRole("button", { name: "恢复" }).click();
  await poll(() => rate.inputValue(), "7.2");
}

async function adminAddsACombo(page: Page, base: string) {
  await page.goto(`${base}/#/admin_combos`);
  await page.getByRole("button", { name: "添加" }).click();
  const form = page.getByRole("dialog", { name: "添加商品" });
  await form.getByLabel("名称").fill(COMBO);
  await form.getByLabel("价格(元)").fill("10");
  await form.getByLabel("流量(G)").fill("50");
  await form.getByLabel("VIP天数").fill("0");
  await form.getByRole("button", { name: "保存" }).click();
  await poll(() => form.count(), 0);
  await page.locator("tbody tr").filter({ hasText: COMBO }).waitFor();
}

async function adminAddsANode(page: Page, base: string) {
  await page.goto(`${base}/#/admin_agents`);
  await page.getByRole("button", { name: "添加" }).click();
  const form = page.getByRole("dialog", { name: "添加节点" });
  await form.getByLabel("名称", { exact: true }).fill("香港 01");
  await form.getByLabel("IP", { exact: true }).fill("203.0.113.7");
  await screenshots(page, "first-run-node-form");
  await form.getByRole("button", { name: "保存" }).click();
  await poll(() => form.count(), 0);
  const row = page.locator("tbody tr").filter({ hasText: "香港 01" });
  await row.waitFor();
  // Never connected yet: grey 未连接, not the red 异常 of a node that stopped calling.
  await expect(row.getByText("未连接").isVisible()).resolves.toBe(true);
  await expect(row.getByText("异常", { exact: true }).count()).resolves.toBe(0);
}

async function customerBuys(page: Page, base: string) {
  await page.goto(`${base}/#/register`);
  await page.getByLabel("邮箱").fill(uniqueEmail("first-buyer"));
  await page.getByLabel("密码", { exact: true }).fill(CUSTOMER_PASSWORD);
  await page.getByLabel("确认密码").fill(CUSTOMER_PASSWORD);
  await page.getByRole("button", { name: "注册", exact: true }).click();
  await page.waitForURL((url) => url.hash === "#/", { timeout: 8000 });

  await page.goto(`${base}/#/shop`);
  await page.getByRole("article", { name: COMBO }).getByRole("button", { name: "立即购买" }).click();
  const confirm = page.getByRole("dialog", { name: "确认订单" });
  await confirm.getByRole("radio", { name: "支付宝" }).check();
  await confirm.getByRole("button", { name: "确认支付" }).click();
  const qr = page.getByRole("dialog", { name: "支付宝扫码支付" });
  await qr.locator("canvas").waitFor();
  const payUrl = (await qr.getByRole("link", { name: "打开支付页面" }).getAttribute("href")) as string;
  const cashier = await page.context().newPage();
  await cashier.goto(new URL(payUrl, base).toString());
  await payOnSandboxCashier(cashier);
  await cashier.close();
  await page.getByRole("status").filter({ hasText: "购买成功" }).waitFor({ timeout: 8000 });
  await page.waitForURL((url) => url.hash === "#/", { timeout: 8000 });
  const traffic = page.getByRole("region", { name: "不限时流量" });
  await poll(() => traffic.locator(".stat-value").textContent(), "50.00");
}

test("fresh install with FERRY_SANDBOX_PAY=1: first admin as printed, a combo, a node, a customer buys", async () => {
  const base = openUrl();
  const adminEmail = createAdminAsPrinted();

  const admin = await newPage(browser, 1280);
  await loginInBrowser(admin.page, base, adminEmail, ADMIN_PASSWORD);
  await adminChecksPayments(admin.page, base);
  await adminMistypesASetting(admin.page);
  await adminAddsACombo(admin.page, base);
  await adminAddsANode(admin.page, base);
  expect(admin.errors).toEqual([]);
  await admin.context.close();

  const customer = await newPage(browser, 390);
  await customerBuys(customer.page, base);
  expect(customer.errors).toEqual([]);
  await customer.context.close();
}, 150_000);
