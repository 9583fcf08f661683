/**
 * The help pages in Chromium (issue 17 items 4 and 5): 常见问题 with its eight problems and the
 * buttons to the profile toggles and to feedback; the shared Apple ID for a visitor, an unpaid and
 * a paying customer, the server asked at each click; the five-step signup guide; screenshots.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { AppleIdMsg } from "../../src/modules/appleid/schema.ts";
import { createOrder, makeCombo, payWithSandbox, startShopServer } from "../commerce.ts";
import { loggedInClient, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;
let shareUrl: string;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
  // A page of the panel itself stands for the operator's sharing page: the popup can load it.
  shareUrl = `${server.url}/about.html`;
  await server.context.settings.update({ apple_id_share_url: shareUrl });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const PROBLEMS = [
  "所有节点都显示超时",
  "修改测速地址",
  "所在网络限制 DNS",
  "Windows 上的 V2rayN 无法使用",
  "人在国外，无法访问国内网站或速度慢",
  "Surge 所有节点超时",
  "SSTAP 经常断线",
  "iOS 小火箭（Shadowrocket）打不开网站",
];
const SHARE_BUTTON = "获取共享 Apple ID";

const toast = (page: Page, role: "alert" | "status", text: string) =>
  page.getByRole(role).filter({ hasText: text });

/** Calls of one path the page made, counted as they go out. */
function countCalls(page: Page, path: string): () => number {
  let count = 0;
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === path) count += 1;
  });
  return () => count;
}

/** A new customer logged in through the login page; `paid` pays an order through the sandbox first. */
async function customerPage(paid: boolean) {
  const customer = await loggedInClient(server);
  if (paid) {
    const combo = await makeCombo(server, { name: "1G", price: 1, traffic: 1024 ** 3 });
    await payWithSandbox(server, customer.client, (await createOrder(customer.client, combo._id))._id);
  }
  const view = await newPage(browser);
  await loginInBrowser(view.page, server.url, customer.email, customer.password);
  return view;
}

describe("常见问题 /windows_errors", () => {
  test("a visitor sees the eight problems, the feedback promise and a login link instead of the reset", async () => {
    const { context, page, errors } = await newPage(browser, 390);
    await page.goto(`${server.url}/#/windows_errors`);
    await page.getByRole("heading", { level: 1, name: "常见问题" }).waitFor();
    const headings = page.getByRole("list").getByRole("heading", { level: 2 });
    expect(await headings.allTextContents()).toEqual(PROBLEMS.map((title, i) => `${i + 1}${title}`));
    await expect(page.getByText("一个工作日内回复").textContent()).resolves.toContain(
      "至少奖励 20G 永久流量",
    );
    expect(await page.getByText("http://www.gstatic.com/generate_204").count()).toBe(1);
    expect(await page.getByText("http://www.apple.com/library/test/success.html").count()).toBe(1);
    await expect(
      page.getByRole("link", { name: "/describe/ss_rule.conf" }).getAttribute("href"),
    ).resolves.toBe("/describe/ss_rule.conf");
    const loginLinks = page.getByRole("link", { name: "登录后重置订阅链接" });
    expect(await loginLinks.count()).toBe(2);
    await expect(loginLinks.first().getAttribute("href")).resolves.toBe("#/login");
    // Nothing is wider than the phone's screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("for a customer the buttons lead to the profile toggles, the reset and feedback", async () => {
    const { context, page, errors } = await customerPage(false);
    await page.goto(`${server.url}/#/windows_errors`);
    await page.getByRole("heading", { name: PROBLEMS[0] }).waitFor();
    await screenshots(page, "help-windows-errors");

    await page.getByRole("link", { name: "去开启「释放DNS控制」" }).click();
    await page.waitForURL((url) => url.hash === "#/user_info");
    await page.getByText("释放DNS控制").first().waitFor();

    await page.goBack();
    await page.getByRole("link", { name: "去开启「国外订阅」" }).click();
    await page.waitForURL((url) => url.hash === "#/user_info");
    await page.getByText("国外订阅").first().waitFor();

    await page.goBack();
    await page.getByRole("button", { name: "重置订阅链接" }).first().click();
    await page.getByRole("dialog").getByText("确定要重置吗").waitFor();
    await page.getByRole("dialog").getByRole("button", { name: "取消" }).click();

    await page.getByRole("link", { name: "去问题反馈" }).first().click();
    await page.waitForURL((url) => url.hash === "#/feedback");
    await page.getByRole("heading", { level: 1, name: "问题反馈" }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("共享 Apple ID /apple_id_share", () => {
  test("a visitor is told to log in (2 s) and sent to the login page; the server is not asked", async () => {
    const { context, page, errors } = await newPage(browser);
    const asked = countCalls(page, "/api/apple_id/share_link");
    await page.goto(`${server.url}/#/apple_id_share`);
    await page.getByRole("button", { name: SHARE_BUTTON }).click();
    await toast(page, "alert", AppleIdMsg.loginRequired).waitFor();
    await page.waitForURL((url) => url.hash === "#/login");
    expect(asked()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("an unpaid customer asks the server and gets the non-paid message; nothing opens", async () => {
    const { context, page, errors } = await customerPage(false);
    const asked = countCalls(page, "/api/apple_id/share_link");
    let popups = 0;
    context.on("page", () => {
      popups += 1;
    });
    await page.goto(`${server.url}/#/apple_id_share`);
    await page.getByRole("button", { name: SHARE_BUTTON }).click();
    await toast(page, "alert", AppleIdMsg.notPaid).waitFor();
    expect(asked()).toBe(1);
    expect(popups).toBe(0);
    expect(page.url()).toContain("#/apple_id_share");
    expect(errors).toEqual([]);
    await context.close();
  });

  test("a paying customer's click asks the server again and opens the sharing link", async () => {
    const { context, page, errors } = await customerPage(true);
    const asked = countCalls(page, "/api/apple_id/share_link");
    await page.goto(`${server.url}/#/apple_id_share`);
    await page.getByRole("heading", { name: "共享账号仅对付费用户开放" }).waitFor();
    await screenshots(page, "help-apple-id-share");
    expect(asked()).toBe(0);

    const popup = context.waitForEvent("page");
    await page.getByRole("button", { name: SHARE_BUTTON }).click();
    const opened = await popup;
    await opened.waitForLoadState();
    expect(opened.url()).toBe(shareUrl);
    expect(await opened.evaluate(() => window.opener)).toBeNull();
    expect(asked()).toBe(1);

    // The next click asks again: an operator who closes sharing is obeyed at once.
    await server.context.settings.update({ apple_id_share_url: "" });
    await page.getByRole("button", { name: SHARE_BUTTON }).click();
    await toast(page, "status", AppleIdMsg.notOpen).waitFor();
    expect(asked()).toBe(2);
    await server.context.settings.update({ apple_id_share_url: shareUrl });

    await page.getByRole("link", { name: "查看注册教程" }).click();
    await page.waitForURL((url) => url.hash === "#/apple_id_signup_guide");
    const steps = page.getByRole("list").getByRole("heading", { level: 2 });
    await steps.first().waitFor();
    expect(await steps.allTextContents()).toEqual([
      "第 1 步：准备邮箱和手机号",
      "第 2 步：打开 Apple ID 注册页面",
      "第 3 步：选择地区并填写资料",
      "第 4 步：验证邮箱和手机号",
      "第 5 步：在 App Store 登录并完善资料",
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("with no link set the button says the service is not open", async () => {
    await server.context.settings.update({ apple_id_share_url: "" });
    try {
      const { context, page, errors } = await newPage(browser, 390);
      await page.goto(`${server.url}/#/apple_id_share`);
      const button = page.getByRole("button", { name: "共享账号暂未开放" });
      await button.waitFor();
      expect(await button.isDisabled()).toBe(true);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await server.context.settings.update({ apple_id_share_url: shareUrl });
    }
  });
});
