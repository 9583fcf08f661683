/**
 * The customer side of subscriptions in Debian's Chromium against a real server: the dashboard's
 * platform tabs (platform cookie), a client's subscribe dropdown (copy into the real clipboard,
 * one-click link, QR dialog), the reset with its confirmation (the copied link changes and the old
 * one 404s), the refusals (visitor, desktop one-click, 1033), the advanced card, and /agents with
 * the latency colours. Needs the SPA built first (`bun run build:web`). Screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { AgentLine } from "../../src/modules/line/schema.ts";
import type { Agent } from "../../src/modules/node-record/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser, findUserById } from "../../src/modules/user/service.ts";
import { base64url } from "../../web/components/subscribe/deepLinks.ts";
import {
  type ApiClient,
  loggedInClient,
  setUserColumns,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

const PASSWORD = "password123";
const IPHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

let server: TestServer;
let browser: Browser;
let admin: ApiClient;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  admin = (await loggedInClient(server, { role: "admin" })).client;
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A customer with 50 GB of permanent traffic (plus any other column given). */
async function newUser(prefix: string, columns: Record<string, number> = {}): Promise<UserRow> {
  const email = uniqueEmail(prefix);
  const user = await createUser(server.context, { email, passwordDigest: transformPassword(PASSWORD) });
  await setUserColumns(server.context.db, user.id, { traffic: 50 * GB, ...columns });
  return (await findUserById(server.context, user.id)) as UserRow;
}

const reload = async (user: UserRow) => (await findUserById(server.context, user.id)) as UserRow;
const linkOf = (client: string, user: UserRow) =>
  `${server.url}/api/subscript/${client}/${user.id}/${user.userkey}`;
const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());
const picker = (page: Page) => page.getByRole("region", { name: "选择平台与客户端" });
const advanced = (page: Page) => page.getByRole("region", { name: "订阅导入（进阶）" });
const toastWith = (page: Page, role: "status" | "alert", text: string) =>
  page.getByRole(role).filter({ hasText: text }).first();

async function platformCookie(page: Page): Promise<string | undefined> {
  const cookies = await page.context().cookies(server.url);
  return cookies.find((cookie) => cookie.name === "platform")?.value;
}

describe("dashboard subscriptions", () => {
  test("iOS tab → Shadowrocket: copy the link, the one-click link, the QR code; reset changes the link", async () => {
    const user = await newUser("sub");
    const { context, page, errors } = await newPage(browser, 1280);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await loginInBrowser(page, server.url, user.email, PASSWORD);

    // The cards stay; the picker starts on the detected platform (desktop Linux → Windows).
    await poll(
      () => page.getByRole("region", { name: "不限时流量" }).locator(".stat-value").textContent(),
      "50.00",
    );
    await expect(page.getByRole("region", { name: "时间套餐" }).count()).resolves.toBe(0);
    const tabs = picker(page).getByRole("tab");
    await expect(tabs.allTextContents()).resolves.toEqual(["Windows", "Android", "iOS", "macOS"]);
    await expect(
      picker(page).getByRole("tab", { name: "Windows" }).getAttribute("aria-selected"),
    ).resolves.toBe("true");
    expect(await platformCookie(page)).toBeUndefined();
    const clients = picker(page).getByRole("tabpanel").locator(".client-name");
    await expect(clients.allTextContents()).resolves.toEqual(["FLClash", "Clash", "v2ray"]);
    await expect(
      picker(page)
        .getByRole("link", { name: "安装教程" })
        .evaluateAll((links) => links.map((a) => a.getAttribute("href"))),
    ).resolves.toEqual(["/#/flclash_for_pc", "/#/clash_for_windows", "/#/v2rayng_for_windows"]);
    await expect(picker(page).getByRole("link", { name: "购买流量" }).getAttribute("href")).resolves.toBe(
      "/#/shop",
    );

    // Choosing iOS: the cookie remembers it and the iOS clients show.
    await picker(page).getByRole("tab", { name: "iOS" }).click();
    await poll(() => platformCookie(page), "iOS");
    await poll(
      () => clients.allTextContents(),
      ["Shadowrocket", "SingBox", "QuantumultX", "Streisands", "V2Box"],
    );
    await expect(
      picker(page).getByRole("link", { name: "共享 Apple ID" }).getAttribute("href"),
    ).resolves.toBe("/#/apple_id_share");

    // The Shadowrocket dropdown: opened by its button, closed by a click anywhere else.
    const shadowrocket = picker(page).getByRole("button", { name: "订阅 Shadowrocket" });
    await shadowrocket.click();
    const copy = page.getByRole("menuitem", { name: "复制订阅" });
    await copy.waitFor();
    await expect(shadowrocket.getAttribute("aria-expanded")).resolves.toBe("true");
    await page.getByRole("heading", { name: "使用教程" }).click();
    await poll(() => copy.count(), 0);

    // 复制订阅 puts the user's Shadowrocket link in the clipboard.
    await shadowrocket.click();
    await copy.click();
    await toastWith(page, "status", "已复制到剪贴板").waitFor();
    await poll(() => clipboard(page), linkOf("ss", user));
    await poll(() => copy.count(), 0);

    // 一键导入 is the shadowrocket:// link, refused on a desktop.
    await shadowrocket.click();
    const oneClick = page.getByRole("menuitem", { name: "一键导入" });
    await expect(oneClick.getAttribute("href")).resolves.toBe(
      `shadowrocket://add/sub://${base64url(linkOf("ss", user))}?remark=%E9%A3%9E%E6%B8%A1`,
    );
    await screenshots(page, "subscribe-dropdown");
    await oneClick.click();
    await toastWith(page, "alert", "请在手机端打开本网站，再进行一件订阅的操作").waitFor();
    expect(page.url()).toEndWith("/#/");

    // 扫描二维码: the QR dialog with its 200×200 canvas, drawn after a second.
    await shadowrocket.click();
    await page.getByRole("menuitem", { name: "扫描二维码" }).click();
    const qr = page.getByRole("dialog", { name: "Shadowrocket 扫码订阅" });
    await qr.waitFor();
    await expect(qr.textContent()).resolves.toContain("请打开手机上的 Shadowrocket");
    await poll(() => qr.getByText("二维码生成中…").count(), 0);
    await expect(qr.locator("canvas").evaluate((c) => [c.clientWidth, c.clientHeight])).resolves.toEqual([
      200, 200,
    ]);
    await screenshots(page, "subscribe-qr");
    await qr.getByRole("button", { name: "关闭" }).last().click();
    await poll(() => qr.count(), 0);

    // Reset: 取消 keeps the key; 确定 replaces it, the copied link changes and the old one 404s.
    const oldLink = linkOf("ss", user);
    expect((await fetch(oldLink)).status).not.toBe(404);
    await shadowrocket.click();
    await page.getByRole("menuitem", { name: "重置订阅链接" }).click();
    const confirm = page.getByRole("dialog", { name: "重置订阅链接" });
    await confirm.waitFor();
    const warning = (await confirm.textContent()) ?? "";
    for (const part of ["所有已订阅的设备", "断开连接", "重新订阅", "一小时内"])
      expect(warning).toContain(part);
    await screenshots(page, "subscribe-reset-confirm");
    await confirm.getByRole("button", { name: "取消" }).click();
    await poll(() => confirm.count(), 0);
    expect((await reload(user)).userkey).toBe(user.userkey);

    await shadowrocket.click();
    await page.getByRole("menuitem", { name: "重置订阅链接" }).click();
    await confirm.getByRole("button", { name: "确定" }).click();
    await toastWith(page, "status", "订阅链接重置成功，请重新订阅。").waitFor();
    await toastWith(page, "status", "切勿泄露").waitFor();
    const after = await reload(user);
    expect(after.userkey).not.toBe(user.userkey);
    expect((await fetch(oldLink)).status).toBe(404);

    await shadowrocket.click();
    await page.getByRole("menuitem", { name: "复制订阅" }).click();
    await poll(() => clipboard(page), linkOf("ss", after));
    expect(linkOf("ss", after)).not.toBe(oldLink);

    // The tab survives a reload through the cookie.
    await page.reload();
    await expect(picker(page).getByRole("tab", { name: "iOS" }).getAttribute("aria-selected")).resolves.toBe(
      "true",
    );
    await screenshots(page, "subscribe-home");
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  test("the Xray apps' menus also copy the Xray JSON link, which answers a JSON array of configs", async () => {
    const user = await newUser("xray");
    const { context, page, errors } = await newPage(browser, 390);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await loginInBrowser(page, server.url, user.email, PASSWORD);
    await picker(page).getByRole("tab", { name: "iOS" }).click();
    const v2box = picker(page).getByRole("button", { name: "订阅 V2Box" });
    await v2box.click();
    const menu = page.getByRole("menu", { name: "订阅 V2Box" });
    await menu.waitFor();
    await expect(menu.getByRole("menuitem").allTextContents()).resolves.toEqual([
      "一键导入",
      "复制订阅",
      "复制 Xray JSON 订阅",
      "扫描二维码",
      "重置订阅链接",
    ]);
    await screenshots(page, "subscribe-xray-json");
    await menu.getByRole("menuitem", { name: "复制 Xray JSON 订阅" }).click();
    await poll(() => clipboard(page), linkOf("json", user));
    const answer = await fetch(linkOf("json", user));
    expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(Array.isArray(await answer.json())).toBe(true);
    // Shadowrocket takes no Xray JSON: its menu has no such item.
    await picker(page).getByRole("button", { name: "订阅 Shadowrocket" }).click();
    await expect(
      page.getByRole("menu", { name: "订阅 Shadowrocket" }).getByRole("menuitem").allTextContents(),
    ).resolves.not.toContain("复制 Xray JSON 订阅");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("the advanced card: its links, marks and buttons, the sing-box QR; a refused reset (1033)", async () => {
    const user = await newUser("refused", { can_change_describe_key: 0 });
    const { context, page, errors } = await newPage(browser, 390);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await loginInBrowser(page, server.url, user.email, PASSWORD);
    const card = advanced(page);
    await card.waitFor();
    await expect(card.getByRole("link", { name: "使用异常？" }).getAttribute("href")).resolves.toBe(
      "/#/windows_errors",
    );
    // No line yet, so none SSR can use: the listing is named without a link (tests/e2e/ssr-listing.test.ts).
    await card.getByText("全部节点链接（SSR）：暂无支持 SSR 的线路。").waitFor();
    await expect(card.getByRole("link", { name: /全部节点链接/ }).count()).resolves.toBe(0);
    const buttons = card.locator(".advanced-clients > .dropdown > button");
    await expect(buttons.allTextContents()).resolves.toEqual([
      "Shadowrocket推荐",
      "FLClash推荐",
      "SSR推荐",
      "Loon推荐",
      "Clash",
      "Surge",
      "QuantumultX",
      "Surfboard不支持直连",
    ]);

    // sing-box: the QR code and the link, the same link the dropdown copies.
    await expect(card.getByRole("link", { name: linkOf("singbox", user) }).count()).resolves.toBe(1);
    await poll(() => card.getByText("二维码生成中…").count(), 0);
    await card.getByRole("button", { name: "订阅 sing-box" }).click();
    await page.getByRole("menuitem", { name: "复制订阅" }).click();
    await poll(() => clipboard(page), linkOf("singbox", user));

    // SSR copies the SSR link; Surge one-click is for iOS only; Loon's link is loon://import?sub=.
    await card.getByRole("button", { name: "订阅 SSR" }).click();
    await page.getByRole("menuitem", { name: "复制订阅" }).click();
    await poll(() => clipboard(page), linkOf("ssr", user));
    await card.getByRole("button", { name: "订阅 Surge" }).click();
    await page.getByRole("menuitem", { name: "一键导入" }).click();
    await toastWith(page, "alert", "仅 IOS surge支持一键订阅").waitFor();
    await card.getByRole("button", { name: "订阅 Loon" }).click();
    await expect(page.getByRole("menuitem", { name: "一键导入" }).getAttribute("href")).resolves.toBe(
      `loon://import?sub=${encodeURIComponent(linkOf("loon", user))}`,
    );
    await expect(page.getByRole("menuitem", { name: "扫描二维码" }).count()).resolves.toBe(1);
    await screenshots(page, "subscribe-advanced");

    // The back office forbade key changes for this account.
    await page.getByRole("menuitem", { name: "重置订阅链接" }).click();
    await page.getByRole("dialog", { name: "重置订阅链接" }).getByRole("button", { name: "确定" }).click();
    await toastWith(page, "alert", "该账号不允许这样操作。").waitFor();
    expect((await reload(user)).userkey).toBe(user.userkey);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("visitors see the clients and are asked to log in; a phone starts on its own platform", async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 800 },
      userAgent: IPHONE_UA,
      locale: "zh-CN",
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/#/`);
    await expect(picker(page).getByRole("tab", { name: "iOS" }).getAttribute("aria-selected")).resolves.toBe(
      "true",
    );
    // Only iOS clients offer the QR code on the dashboard.
    await picker(page).getByRole("button", { name: "订阅 SingBox" }).click();
    await expect(page.getByRole("menuitem", { name: "扫描二维码" }).count()).resolves.toBe(1);
    await page.getByRole("menuitem", { name: "复制订阅" }).click();
    await toastWith(page, "alert", "请您登录后再进行订阅").waitFor();
    await picker(page).getByRole("tab", { name: "Android" }).click();
    await picker(page).getByRole("button", { name: "订阅 SingBox" }).click();
    await expect(page.getByRole("menuitem", { name: "扫描二维码" }).count()).resolves.toBe(0);
    await page.getByRole("menuitem", { name: "一键导入" }).click();
    await toastWith(page, "alert", "请您登录后再进行订阅").waitFor();
    expect(page.url()).toEndWith("/#/");

    await expect(advanced(page).getByText("请登录", { exact: true }).count()).resolves.toBe(1);
    await expect(advanced(page).locator("canvas").count()).resolves.toBe(0);
    await screenshots(page, "subscribe-visitor");
    await context.close();
  }, 60_000);

  test("agency users get no shop links", async () => {
    const user = await newUser("agency", { is_agency: 1 });
    const { context, page } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, user.email, PASSWORD);
    await picker(page).waitFor();
    await expect(page.getByRole("link", { name: "购买流量" }).count()).resolves.toBe(0);
    await expect(page.getByRole("link", { name: "充值流量" }).count()).resolves.toBe(0);
    await context.close();
  }, 60_000);
});

describe("/agents", () => {
  async function publicNode(name: string, country: string, desc: string, speed: number) {
    const saved = await admin.call<Agent>("/api/admin/agents/update", {
      name,
      country: { code: country },
      type: "v2ray",
      ip: "203.0.113.20",
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
      desc,
    });
    expect(saved.code).toBe(0);
    const line = await admin.call<AgentLine>("/api/admin/agent_line/update", {
      name: `${name}线路`,
      agentID: saved.data._id,
      protocol: "vmesh_tcp",
      bridge: "none",
    });
    expect(line.code).toBe(0);
    await server.context.db.run("UPDATE agents SET speed = ? WHERE id = ?", speed, saved.data._id);
  }

  test("the explanation, then a card per node with flag, description and coloured latency", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await page.goto(`${server.url}/#/agents`);
    await page.getByText("暂无记录").waitFor();
    await expect(page.getByRole("region", { name: "节点说明" }).textContent()).resolves.toContain("延迟");

    await publicNode("香港 01", "HK", "香港家宽，晚高峰稳定", 87);
    await publicNode("日本 01", "JP", "", 170);
    await publicNode("美国 01", "US", "", 230);
    await publicNode("新加坡 01", "SG", "", 0);
    await page.reload();
    const hk = page.getByRole("article", { name: "香港 01" });
    await hk.waitFor();
    await expect(hk.getByRole("img", { name: "香港" }).textContent()).resolves.toBe("🇭🇰");
    await expect(hk.textContent()).resolves.toContain("香港家宽，晚高峰稳定");
    const latency = async (name: string) => {
      const badge = page.getByRole("article", { name }).locator(".agent-latency");
      return [await badge.textContent(), await badge.getAttribute("class")];
    };
    expect(await latency("香港 01")).toEqual(["87 ms", "agent-latency latency-good"]);
    expect(await latency("日本 01")).toEqual(["170 ms", "agent-latency latency-fair"]);
    expect(await latency("美国 01")).toEqual(["230 ms", "agent-latency latency-bad"]);
    expect(await latency("新加坡 01")).toEqual(["未测速", "agent-latency latency-none"]);
    // Green, yellow, red and grey are four different colours.
    const colours = await page
      .locator(".agent-latency")
      .evaluateAll((badges) => badges.map((badge) => getComputedStyle(badge).color));
    expect(new Set(colours).size).toBe(4);
    await screenshots(page, "agents");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
