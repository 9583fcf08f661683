/**
 * Browser journeys through the SPA shell with Debian's Chromium driven by playwright-core, against
 * a real server on a temp SQLite file. Needs the SPA built first (`bun scripts/build-web.ts`, which
 * `bun run test` does). Screenshots land in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { createNotice } from "../../src/modules/notice/service.ts";
import { OrderMsg } from "../../src/modules/order/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { ConfirmMsg } from "../../src/modules/user/schema.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { mintLoginLink } from "../../src/modules/user/session.ts";
import { newId, randomHex, sha256Hex } from "../../src/rpc/ids.ts";
import { makeCombo, orderIds } from "../commerce.ts";
import { startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { sinkSettings, startMailSink } from "../mail-sink.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf, poll, SHOTS, screenshots } from "./chromium.ts";

const NORMAL_TABS = [
  "使用教程",
  "商店",
  "节点列表",
  "订单记录",
  "流量记录",
  "常见问题",
  "问题反馈",
  "流量转赠",
  "我的账户",
];
const VISITOR_TABS = ["使用教程", "商店", "节点列表", "邀请返利", "钱包"];
const AGENCY_NORMAL_TABS = ["使用教程", "节点列表", "流量记录", "我的账户"];
const ADMIN_ONLY_TABS = [
  "统计",
  "优惠券管理",
  "优惠券记录",
  "配置管理",
  "用户管理",
  "全部流量记录",
  "交易流水管理",
  "提现管理",
  "商品管理",
  "权限管理",
  "入口管理",
  "节点管理",
  "线路管理",
  "抽奖管理",
  "运维日志",
  "操作日志",
];

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

const tabLabels = (page: Page) => page.locator('nav[aria-label="主导航"] a').allInnerTexts();

async function expectTabs(page: Page, labels: string[]) {
  await page.locator('nav[aria-label="主导航"] a').first().waitFor();
  await poll(() => tabLabels(page), labels);
}

const login = (page: Page, email: string, password: string) =>
  loginInBrowser(page, server.url, email, password);

describe("SPA shell", () => {
  test("register → home → logout → login journey", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    const email = uniqueEmail("journey");
    const password = "password123";

    // Register: validation messages in the seed's order, under the right fields.
    await page.goto(`${server.url}/#/register`);
    await poll(() => page.title(), "注册 - 飞渡");
    await page.getByLabel("邮箱").fill("not-an-email");
    await page.getByLabel("密码", { exact: true }).fill("short");
    await page.getByLabel("确认密码").fill("different");
    await page.getByRole("button", { name: "注册", exact: true }).click();
    await poll(() => page.locator(".field-error").textContent(), "密码不一样");
    await page.getByLabel("确认密码").fill("short");
    await page.getByRole("button", { name: "注册", exact: true }).click();
    await poll(() => page.locator(".field-error").textContent(), "密码长度至少8位");
    await page.getByLabel("密码", { exact: true }).fill(password);
    await page.getByLabel("确认密码").fill(password);
    await page.getByRole("button", { name: "注册", exact: true }).click();
    await poll(() => page.locator(".field-error").textContent(), "邮件不正确");

    // Sign up: the password travels only as its digest.
    await page.getByLabel("邮箱").fill(email);
    const signup = page.waitForRequest((request) => request.url().endsWith("/api/user/signup"));
    await page.getByRole("button", { name: "注册", exact: true }).click();
    const sent = payloadOf((await signup).postData());
    expect(sent).toEqual({
      email,
      password: transformPassword(password),
      icon_url: "/logo.svg",
      host: new URL(server.url).host,
    });
    await page.getByText(/^[123]秒后自动跳转到首页$/).waitFor();
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === "lastRegister")?.value).toBe(encodeURIComponent(email));

    // Home after the countdown, with the normal user's tabs and the permanent-traffic card.
    await page.waitForURL((url) => url.hash === "#/", { timeout: 6000 });
    await expectTabs(page, NORMAL_TABS);
    await expect(page.getByRole("heading", { name: "不限时流量" }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole("heading", { name: "时间套餐" }).count()).resolves.toBe(0);
    await expect(page.getByRole("link", { name: "充值流量" }).getAttribute("href")).resolves.toBe("/#/shop");
    await poll(() => page.locator('.tab[aria-current="page"]').textContent(), "使用教程");
    await page.waitForTimeout(400);
    await page.locator(".site-header").screenshot({ path: join(SHOTS, "header-1280.png") });
    await page.setViewportSize({ width: 390, height: 800 });
    await page.waitForTimeout(400);
    await page.locator(".site-header").screenshot({ path: join(SHOTS, "header-390.png") });
    await page.screenshot({ path: join(SHOTS, "home-390.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    // A route that is not built yet redirects home for a logged-in user.
    await page.goto(`${server.url}/#/no_such_page`);
    await page.waitForURL((url) => url.hash === "#/");

    // Log out through the user dropdown.
    await page.getByRole("button", { name: "用户菜单" }).click();
    await page.getByRole("button", { name: "退出登录" }).click();
    await page.waitForURL((url) => url.hash === "#/login");
    await expectTabs(page, VISITOR_TABS);
    await expect(page.getByRole("link", { name: "登录", exact: true }).isVisible()).resolves.toBe(true);

    // Login validation, Enter moving from e-mail to password.
    await page.getByRole("button", { name: "登录", exact: true }).click();
    await poll(() => page.locator(".field-error").textContent(), "邮件不能为空");
    await page.getByLabel("邮箱").fill(email);
    await page.getByLabel("邮箱").press("Enter");
    await poll(
      () => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name),
      "password",
    );
    await page.getByRole("button", { name: "登录", exact: true }).click();
    await poll(() => page.locator(".field-error").textContent(), "密码不能为空");
    await screenshots(page, "login");

    // Wrong password: message under the password field and the 登录失败 toast.
    await page.getByLabel("密码").fill("wrong-password");
    await page.getByLabel("密码").press("Enter");
    await page.getByText("用户不存在或密码错误").waitFor();
    await page.getByRole("alert").filter({ hasText: "登录失败" }).waitFor();
    await expect(page.locator(".field-invalid input").getAttribute("name")).resolves.toBe("password");

    // Correct password: home, and the user dropdown shows the e-mail.
    const loginRequest = page.waitForRequest((request) => request.url().endsWith("/api/user/login"));
    await page.getByLabel("密码").fill(password);
    await page.getByLabel("密码").press("Enter");
    expect(payloadOf((await loginRequest).postData()).password).toBe(transformPassword(password));
    await page.waitForURL((url) => url.hash === "#/");
    await page.getByRole("button", { name: "用户菜单" }).click();
    await poll(() => page.locator(".user-email").textContent(), email);
    await expect(page.getByRole("link", { name: "忘记密码" }).getAttribute("href")).resolves.toBe("#/reset");
    const records = await page.evaluate(
      () => JSON.parse(localStorage.getItem("loginRecords") ?? "[]").length,
    );
    expect(records).toBe(1);
    // A click elsewhere closes the dropdown.
    await page.locator("main").click({ position: { x: 5, y: 5 } });
    await poll(() => page.locator(".user-email").count(), 0);

    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  test("visitors: auth routes go to login, invited visitors are sent to register once", async () => {
    const { context, page } = await newPage(browser, 390);
    await page.goto(`${server.url}/#/user_info`);
    await page.waitForURL((url) => url.hash === "#/login");
    await page.goto(`${server.url}/#/admin_config`);
    await page.waitForURL((url) => url.hash === "#/login");

    await context.close();

    // A fresh visitor landing on /#/login?c=… : the server has set the no-code value before the
    // SPA could see the hash query, and the SPA replaces it with the invite code.
    const invited = await newPage(browser, 390);
    await invited.page.goto(`${server.url}/#/login?c=abc123`);
    await invited.page.waitForURL((url) => url.hash === "#/register");
    const cookies = await invited.context.cookies();
    expect(cookies.find((c) => c.name === "channel_code")?.value).toBe("abc123");
    // Only once: the alreadyJumpToRegister flag keeps the visitor on the login page next time.
    await invited.page.goto("about:blank");
    await invited.page.goto(`${server.url}/#/login?c=abc123`);
    await invited.page.getByRole("button", { name: "登录", exact: true }).waitFor();
    await invited.page.waitForTimeout(300);
    expect(new URL(invited.page.url()).hash).toBe("#/login?c=abc123");
    await invited.context.close();
  }, 60_000);

  test("admin tabs, agency menu, time-package card", async () => {
    const password = "password123";
    const adminEmail = uniqueEmail("admin");
    await createUser(server.context, {
      email: adminEmail,
      passwordDigest: transformPassword(password),
      type: "admin",
    });
    const { context, page } = await newPage(browser, 1280);
    await login(page, adminEmail, password);
    await expectTabs(page, [
      "使用教程",
      "商店",
      "节点列表",
      "邀请返利",
      "订单记录",
      "流量记录",
      "钱包",
      "常见问题",
      "问题反馈",
      "流量转赠",
      "我的账户",
      ...ADMIN_ONLY_TABS,
    ]);
    // 27 tabs overflow: the swipe hint shows, the wheel scrolls sideways, the hint goes at the end.
    const strip = page.locator('nav[aria-label="主导航"]');
    await page.getByRole("button", { name: "向右滑动查看更多" }).waitFor();
    await strip.hover();
    await page.mouse.wheel(0, 300);
    await poll(async () => (await strip.evaluate((node) => node.scrollLeft)) > 0, true);
    await page.mouse.wheel(0, 5000);
    await poll(() => page.getByRole("button", { name: "向右滑动查看更多" }).count(), 0);
    // At the end the first tabs are cut off on the left: that side gets its hint, which scrolls back.
    const leftHint = page.getByRole("button", { name: "向左滑动查看更多" });
    await leftHint.waitFor();
    const atEnd = await strip.evaluate((node) => node.scrollLeft);
    await leftHint.click();
    await poll(async () => (await strip.evaluate((node) => node.scrollLeft)) < atEnd, true);
    // Navigating scrolls the current tab back into view.
    await page.goto(`${server.url}/#/tutorial`);
    await poll(() => strip.evaluate((node) => node.scrollLeft), 0);
    await poll(() => leftHint.count(), 0);
    await poll(() => page.locator('.tab[aria-current="page"]').textContent(), "使用教程");
    await context.close();

    const agencyEmail = uniqueEmail("agency");
    const agency = await createUser(server.context, {
      email: agencyEmail,
      passwordDigest: transformPassword(password),
    });
    const vipUntil = Date.now() + 10 * 86_400_000;
    await server.context.db.run(
      "UPDATE users SET is_agency = 1, vip_expire_time = ? WHERE id = ?",
      vipUntil,
      agency.id,
    );
    await server.context.db.run(
      "UPDATE balances SET traffic = ? WHERE user_id = ?",
      5 * 1024 ** 3,
      agency.id,
    );
    const second = await newPage(browser, 1280);
    await login(second.page, agencyEmail, password);
    await expectTabs(second.page, AGENCY_NORMAL_TABS);
    await second.page.getByRole("heading", { name: "时间套餐" }).waitFor();
    await expect(second.page.getByText("剩余 10 天").isVisible()).resolves.toBe(true);
    await expect(second.page.getByText("5.00", { exact: true }).isVisible()).resolves.toBe(true);
    await expect(second.page.getByRole("link", { name: "充值流量" }).count()).resolves.toBe(0);
    await second.context.close();
  }, 60_000);

  test("announcement shows once, then the dismiss cookie holds it back", async () => {
    await server.context.settings.update({
      notice_show: true,
      notice_title: "维护通知",
      notice_content: "今晚 23:00 维护",
      notice_mark_red: true,
    });
    try {
      const { context, page } = await newPage(browser, 390);
      await page.goto(`${server.url}/#/login`);
      const dialog = page.getByRole("dialog", { name: "最新公告" });
      await dialog.waitFor();
      await expect(dialog.getByText("维护通知").isVisible()).resolves.toBe(true);
      await expect(dialog.getByRole("link", { name: "提交工单" }).getAttribute("href")).resolves.toBe(
        "#/feedback",
      );
      await page.keyboard.press("Escape");
      await poll(() => dialog.count(), 0);
      await page.reload();
      await page.getByRole("button", { name: "登录", exact: true }).waitFor();
      await page.waitForTimeout(500);
      await expect(page.getByRole("dialog").count()).resolves.toBe(0);
      await context.close();
    } finally {
      await server.context.settings.update({ notice_show: false, notice_title: "", notice_content: "" });
    }
  }, 60_000);
});

describe("confirm and reset pages", () => {
  test("confirm link: success jumps home, a bad link shows 注册失败", async () => {
    const user = await createUser(server.context, {
      email: uniqueEmail("confirm"),
      passwordDigest: transformPassword("password123"),
    });
    const serialId = newId();
    const key = randomHex(32);
    const now = Date.now();
    await server.context.db.run(
      "INSERT INTO email_tokens (serial_id, user_id, action, key_hash, new_password_hash, create_time, expire_time) VALUES (?, ?, 'signup_confirm', ?, NULL, ?, ?)",
      serialId,
      user.id,
      sha256Hex(key),
      now,
      now + 86_400_000,
    );

    const { context, page } = await newPage(browser, 390);
    await page.goto(`${server.url}/#/confirm?serial_id=${serialId}&key=${key}&action=signup_confirm`);
    await page.getByText("注册成功，3秒后跳转").waitFor();
    await page.waitForURL((url) => url.hash === "#/" || url.hash === "#/login", { timeout: 6000 });

    // The link is one-time: opening it again fails.
    await page.goto("about:blank");
    await page.goto(`${server.url}/#/confirm?serial_id=${serialId}&key=${key}&action=signup_confirm`);
    await page.getByText("注册失败").waitFor();
    await page.getByText("链接已使用").waitFor();
    await expect(page.getByRole("link", { name: "重新注册" }).getAttribute("href")).resolves.toBe(
      "#/register",
    );
    await context.close();
  }, 60_000);

  test("reset: recover the e-mail from the subscription link, link and e-mail errors; without mail it says whom to ask", async () => {
    const sink = await startMailSink();
    await server.context.settings.update(sinkSettings(sink));
    try {
      await resetJourney();
    } finally {
      await server.context.settings.update({
        smtp_host: "",
        smtp_port: 465,
        smtp_secure: true,
        smtp_from: "",
      });
      await sink.close();
    }
  }, 60_000);

  async function resetJourney() {
    const email = uniqueEmail("reset");
    const user = await createUser(server.context, {
      email,
      passwordDigest: transformPassword("password123"),
    });
    const link = `${server.url}/api/subscript/clash/${user.id}/${user.userkey}`;
    const { context, page } = await newPage(browser, 390);
    await page.goto(`${server.url}/#/reset`);

    await page.getByRole("button", { name: "找回账号" }).click();
    await poll(() => page.locator(".field-error").textContent(), "请先输入订阅链接");
    await page.getByLabel("订阅链接").fill(`${server.url}/api/subscript/clash/${user.id}/${"0".repeat(32)}`);
    await page.getByRole("button", { name: "找回账号" }).click();
    await poll(
      () => page.locator(".field-error").textContent(),
      "请检查订阅链接是否正确（若订阅链接被重置过，旧订阅链接无法使用）",
    );
    await page.getByLabel("订阅链接").fill(link);
    await page.getByRole("button", { name: "找回账号" }).click();
    await poll(() => page.getByLabel("邮箱").inputValue(), email);

    await page.getByRole("button", { name: "确认修改" }).click();
    await poll(() => page.locator(".field-error").textContent(), "请输入密码");
    await page.getByLabel("新密码", { exact: true }).fill("newpassword1");
    await page.getByLabel("确认新密码").fill("newpassword1");
    await page.getByLabel("订阅链接").fill("https://example.com/not-a-subscription");
    await page.getByRole("button", { name: "确认修改" }).click();
    await poll(() => page.locator(".field-error").textContent(), "订阅链接错误");
    await page.getByLabel("订阅链接").fill(link);
    await page.getByRole("button", { name: "确认修改" }).click();
    await page.getByRole("heading", { name: "确认邮件已发送" }).waitFor();

    // Without SMTP nobody can confirm a reset: the page says so up front, with no password form.
    await server.context.settings.update({ smtp_host: "", contact_info: "客服 QQ 10001" });
    await page.goto("about:blank");
    await page.goto(`${server.url}/#/reset`);
    const note = page.getByRole("note");
    await poll(
      () => note.textContent(),
      `${ConfirmMsg.resetNeedsSupport}联系方式：客服 QQ 10001可先用订阅链接找回账号邮箱，告诉客服。`,
    );
    await expect(page.getByRole("button", { name: "确认修改" }).count()).resolves.toBe(0);
    await expect(page.getByLabel("新密码", { exact: true }).count()).resolves.toBe(0);
    // Finding the account's e-mail still works, to tell support which account it is.
    await page.getByLabel("订阅链接").fill(link);
    await page.getByRole("button", { name: "找回账号" }).click();
    await poll(() => page.getByLabel("邮箱").inputValue(), email);
    await screenshots(page, "reset-no-mail");
    await server.context.settings.update({ contact_info: "" });
    await context.close();
  }
});

describe("shop without a way to pay", () => {
  test("says 暂无可用的支付方式 before any order: on the page, and on 立即购买, which creates none", async () => {
    await makeCombo(server, { name: "无法支付的套餐", price: 12, traffic: 10 * GB });
    const email = uniqueEmail("no-pay");
    const user = await createUser(server.context, {
      email,
      passwordDigest: transformPassword("password123"),
    });
    const { context, page } = await newPage(browser, 390);
    await login(page, email, "password123");
    await page.goto(`${server.url}/#/shop`);
    await poll(() => page.locator(".page [role=alert]").textContent(), OrderMsg.noPayModes);
    await page
      .getByRole("article", { name: "无法支付的套餐" })
      .getByRole("button", { name: "立即购买" })
      .click();
    await page.locator(".toaster [role=alert]").filter({ hasText: OrderMsg.noPayModes }).waitFor();
    await expect(page.getByRole("dialog", { name: "确认订单" }).count()).resolves.toBe(0);
    expect(await orderIds(server, user.id)).toEqual([]);
    await screenshots(page, "shop-no-pay-mode");
    await context.close();
  }, 60_000);
});

describe("header dropdowns", () => {
  test("bell lists notices, a click reports it and follows the link; dropdowns exclude each other", async () => {
    const email = uniqueEmail("bell");
    const password = "password123";
    const user = await createUser(server.context, { email, passwordDigest: transformPassword(password) });
    const noticeId = await createNotice(server.context, {
      userId: user.id,
      desc: "您的工单有新回复",
      href: "#/feedback",
    });
    const { context, page } = await newPage(browser, 390);
    await login(page, email, password);
    const bell = page.getByRole("button", { name: /^通知/ });
    await bell.click();
    await page.getByRole("button", { name: "您的工单有新回复" }).waitFor();
    // Opening the user menu closes the bell list.
    await page.getByRole("button", { name: "用户菜单" }).click();
    await page.locator(".user-email").waitFor();
    await poll(() => page.locator(".notice-list").count(), 0);
    await bell.click();
    await poll(() => page.locator(".user-email").count(), 0);
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, "bell-390.png") });

    const clicked = page.waitForRequest((request) => request.url().endsWith("/api/user_notive/clicked"));
    await page.getByRole("button", { name: "您的工单有新回复" }).click();
    expect(payloadOf((await clicked).postData())).toEqual({ noticeId });
    await page.waitForURL((url) => url.hash === "#/feedback");
    await page.getByRole("heading", { name: "问题反馈" }).waitFor();
    await poll(() => page.locator(".notice-list").count(), 0);
    await poll(() => bell.count(), 0);
    await context.close();
  }, 60_000);
});

describe("start-up parameters", () => {
  test("a login-link token in the hash query goes through the server, which sets the session cookie", async () => {
    const email = uniqueEmail("token");
    const user = await createUser(server.context, {
      email,
      passwordDigest: transformPassword("password123"),
    });
    const token = await mintLoginLink(server.context, user.id);
    const { context, page } = await newPage(browser, 1280);
    await page.goto(`${server.url}/#/tutorial?token=${token}`);
    await page.getByRole("button", { name: "用户菜单" }).waitFor();
    const url = new URL(page.url());
    expect(url.search).toBe("");
    expect(url.hash).toBe("#/tutorial");
    const cookie = (await context.cookies()).find((c) => c.name === "token");
    expect(cookie?.httpOnly).toBe(true);
    await poll(() => page.locator('.tab[aria-current="page"]').textContent(), "使用教程");
    await poll(() => page.title(), "使用教程 - 飞渡");
    await context.close();
  }, 60_000);
});
