/**
 * The SPA under its own Content-Security-Policy (issue 11, Build 6) in Debian's Chromium: a
 * customer registers, buys with the sandbox 支付宝 (QR dialog, the cashier page), opens the USDT
 * dialog and the orders page; an admin works in 配置管理 and 节点管理. Every page must run with no
 * CSP violation and no console error. A page on another origin cannot frame the panel.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { Combo } from "../../src/modules/combo/schema.ts";
import { randomTronAddress } from "../fakes/trongrid.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, recordCspViolations } from "./chromium.ts";
import { payOnSandboxCashier } from "./sandbox-cashier.ts";

const PASSWORD = "password123";
const PACK = "流量套餐 100G";

let server: TestServer;
let browser: Browser;
let admin: { client: ApiClient; email: string; password: string };

beforeAll(async () => {
  browser = await launchChromium();
  process.env.FERRY_SANDBOX_PAY = "1";
  server = await startTestServer();
  admin = await loggedInClient(server, { role: "admin" });
  const config = await admin.client.call("/api/admin/config/set_config", {
    alipay: "sandbox",
    usdtpay: randomTronAddress(),
  });
  expect(config.code).toBe(0);
  const combo = await admin.client.call<Combo>("/api/admin/combo/update_combo", {
    name: PACK,
    price: 15,
    traffic: 100 * GB,
    vipDuration: 0,
  });
  expect(combo.code).toBe(0);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  delete process.env.FERRY_SANDBOX_PAY;
});

/** Records CSP violations (from the page's own event) and console errors of a page. */
async function watch(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`http ${response.status()}: ${response.url()}`);
  });
  await recordCspViolations(page, problems);
  return problems;
}

describe("the SPA under its Content-Security-Policy", () => {
  test("the entry page and API answers carry the policy and frame protection", async () => {
    const page = await fetch(`${server.url}/`);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("'unsafe-inline' 'unsafe-eval'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("referrer-policy")).toBeTruthy();
  });

  test("register, shop, the 支付宝 QR and cashier page, USDT, orders: no violation, no console error", async () => {
    const { context, page } = await newPage(browser, 1280);
    const problems = await watch(page);
    const email = uniqueEmail("csp");

    await page.goto(`${server.url}/#/register`);
    await page.getByLabel("邮箱").fill(email);
    await page.getByLabel("密码", { exact: true }).fill(PASSWORD);
    await page.getByLabel("确认密码").fill(PASSWORD);
    await page.getByRole("button", { name: "注册", exact: true }).click();
    await page.waitForURL((url) => url.hash === "#/", { timeout: 8000 });
    await page.getByRole("heading", { name: "不限时流量" }).waitFor();

    // 支付宝 through the sandbox: QR dialog with its canvas, then the cashier page in a new tab.
    await page.goto(`${server.url}/#/shop`);
    await page.getByRole("article", { name: PACK }).getByRole("button", { name: "立即购买" }).click();
    const confirm = page.getByRole("dialog", { name: "确认订单" });
    await confirm.getByRole("button", { name: "确认支付" }).click();
    const qr = page.getByRole("dialog", { name: "支付宝扫码支付" });
    await qr.locator("canvas").waitFor();
    await poll(() => qr.getByText("二维码生成中…").count(), 0);
    const payUrl = (await qr.getByRole("link", { name: "打开支付页面" }).getAttribute("href")) as string;
    const cashier = await context.newPage();
    const cashierProblems = await watch(cashier);
    await cashier.goto(new URL(payUrl, server.url).toString());
    await payOnSandboxCashier(cashier);
    await cashier.close();
    await page.getByRole("status").filter({ hasText: "购买成功" }).waitFor({ timeout: 8000 });
    await page.waitForURL((url) => url.hash === "#/", { timeout: 8000 });
    await poll(
      () => page.getByRole("region", { name: "不限时流量" }).locator(".stat-value").textContent(),
      "100.00",
    );

    // USDT: the dialog with its QR code.
    await page.goto(`${server.url}/#/shop`);
    await page.getByRole("article", { name: PACK }).getByRole("button", { name: "立即购买" }).click();
    await confirm.getByRole("radio", { name: "USDT-TRC20" }).check();
    await confirm.getByRole("button", { name: "确认支付" }).click();
    const usdt = page.getByRole("dialog", { name: "USDT-TRC20 支付" });
    await usdt.waitFor();
    await poll(() => usdt.getByText("二维码生成中…").count(), 0);
    await usdt.getByRole("button", { name: "关闭" }).first().click();

    await page.goto(`${server.url}/#/order`);
    await page.locator("tbody tr").filter({ hasText: PACK }).first().waitFor();

    expect(problems).toEqual([]);
    expect(cashierProblems).toEqual([]);
    await context.close();
  }, 90_000);

  test("back office: 配置管理 and 节点管理 with its form work under the policy", async () => {
    const { context, page } = await newPage(browser, 1280);
    const problems = await watch(page);
    await loginInBrowser(page, server.url, admin.email, admin.password);

    await page.goto(`${server.url}/#/admin_config`);
    await page.getByRole("heading", { name: "配置管理" }).waitFor();
    await page.getByLabel("站点地址").waitFor();
    await page.getByLabel("联系方式").fill("客服 @ferry");
    await page.getByRole("button", { name: "保存" }).click();
    await page.getByRole("status").filter({ hasText: "更新成功" }).waitFor();

    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("heading", { name: "节点管理" }).waitFor();
    await page.getByRole("button", { name: "添加" }).click();
    const form = page.getByRole("dialog", { name: "添加节点" });
    await form.waitFor();
    await form.getByRole("button", { name: "取消" }).click();
    await poll(() => page.getByRole("dialog").count(), 0);

    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("a page on another origin cannot frame the panel", async () => {
    const framer = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response(`<!doctype html><iframe id="panel" src="${server.url}/#/login"></iframe>`, {
          headers: { "content-type": "text/html" },
        }),
    });
    const { context, page } = await newPage(browser, 1280);
    try {
      await page.goto(`http://localhost:${framer.port}/`);
      await page.waitForTimeout(1000);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const framedLogin = frame ? await frame.locator("#root *").count() : 0;
      expect(framedLogin).toBe(0);
    } finally {
      await context.close();
      framer.stop(true);
    }
  });
});
