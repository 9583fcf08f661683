/**
 * Links the panel must never follow (issue 11, findings 8 and 12) in Debian's Chromium: a
 * `javascript:` pay link from the gateway (the fake EPay on 127.0.0.1) is refused by the server;
 * a pay result or a bell notice tampered with on its way to the page is refused by the SPA too.
 * "Nothing runs" is observed as: no JS dialog (the alert), no CSP violation (a blocked
 * `javascript:` navigation), no element carrying the link, and the page stays where it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page, Route } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { Combo } from "../../src/modules/combo/schema.ts";
import { OrderMsg, type PayResult } from "../../src/modules/order/schema.ts";
import type { HostInfo } from "../../src/modules/settings/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { fromBase64Json, toBase64Json } from "../../src/rpc/envelope.ts";
import { type FakeEpayGateway, type MapiMode, startFakeEpayGateway } from "../fakes/epay-gateway.ts";
import { loggedInClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, poll, recordCspViolations } from "./chromium.ts";

const PASSWORD = "password123";
const PACK = "流量套餐 100G";
const EVIL = "javascript:alert(document.domain)";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";

let server: TestServer;
let browser: Browser;
let gateway: FakeEpayGateway;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  gateway = startFakeEpayGateway();
  const admin = (await loggedInClient(server, { role: "admin" })).client;
  const config = await admin.call("/api/admin/config/set_config", {
    alipay: "epay",
    wxpay: "sandbox",
    sandbox_pay: true,
    epay_url: gateway.url,
    epay_pid: gateway.pid,
    epay_key: gateway.key,
  });
  expect(config.code).toBe(0);
  const combo = await admin.call<Combo>("/api/admin/combo/update_combo", {
    name: PACK,
    price: 15,
    traffic: 100 * GB,
    vipDuration: 0,
  });
  expect(combo.code).toBe(0);
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await server?.close();
});

interface Watched {
  page: Page;
  /** JS dialogs (alert, confirm) the page opened, and CSP violations it caused. */
  ran: string[];
  close(): Promise<void>;
}

/**
 * A logged-in customer's page (a visitor's that has loaded nothing yet, with `visitor`) that records
 * anything a followed `javascript:` link would cause.
 */
async function customerPage(options: { mobile?: boolean; visitor?: boolean } = {}): Promise<Watched> {
  const context = await browser.newContext({
    viewport: options.mobile ? { width: 390, height: 800 } : { width: 1280, height: 800 },
    locale: "zh-CN",
    ...(options.mobile ? { userAgent: IPHONE } : {}),
  });
  const page = await context.newPage();
  const ran: string[] = [];
  page.on("dialog", (dialog) => {
    ran.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await recordCspViolations(page, ran);
  if (!options.visitor) {
    const email = uniqueEmail("links");
    await createUser(server.context, { email, passwordDigest: transformPassword(PASSWORD) });
    await loginInBrowser(page, server.url, email, PASSWORD);
  }
  return { page, ran, close: () => context.close() };
}

/** Shop → 立即购买 → pay with the given method. */
async function pay(page: Page, method: "支付宝" | "微信支付") {
  await page.goto(`${server.url}/#/shop`);
  await page.getByRole("article", { name: PACK }).getByRole("button", { name: "立即购买" }).click();
  const confirm = page.getByRole("dialog", { name: "确认订单" });
  await confirm.getByRole("radio", { name: method }).check();
  const bought = page.waitForResponse((response) => response.url().endsWith("/api/shop/dobuy"));
  await confirm.getByRole("button", { name: "确认支付" }).click();
  await bought;
}

/** Rewrites the data of every answer of `path`, as a compromised gateway or proxy would. */
async function tamperAnswer<T>(page: Page, path: string, change: (data: T) => T) {
  await page.route(`**${path}`, async (route: Route) => {
    const response = await route.fetch();
    const body = (await response.json()) as { data: string };
    const decoded = fromBase64Json(body.data);
    if (!decoded.ok) throw new Error(decoded.reason);
    const answer = decoded.value as { code: number; data: T; msg: string };
    expect(answer.code).toBe(0);
    const tampered = { ...answer, data: change(answer.data) };
    await route.fulfill({ response, body: JSON.stringify({ data: toBase64Json(tampered) }) });
  });
}

/** Rewrites the links of every /api/shop/dobuy answer. */
async function tamperPayResult(page: Page, links: Partial<PayResult>) {
  await tamperAnswer<PayResult>(page, "/api/shop/dobuy", (data) => ({ ...data, ...links }));
}

async function expectNothingRan(watched: Watched, hash: string) {
  await watched.page.waitForTimeout(500);
  expect(watched.ran).toEqual([]);
  expect(new URL(watched.page.url()).hash).toBe(hash);
  expect(await watched.page.locator('a[href^="javascript" i]').count()).toBe(0);
}

describe("pay links", () => {
  test("a javascript: link from the gateway is refused by the server: an error, no pay dialog", async () => {
    gateway.mode = { code: 1, msg: "", trade_no: "2024050112301500001", payurl: EVIL } as MapiMode;
    const watched = await customerPage({ mobile: true });
    try {
      await pay(watched.page, "支付宝");
      await watched.page.getByRole("alert").filter({ hasText: OrderMsg.buyFailed }).waitFor();
      expect(await watched.page.getByRole("dialog", { name: /支付宝/ }).count()).toBe(0);
      await expectNothingRan(watched, "#/shop");
    } finally {
      gateway.mode = "qrcode";
      await watched.close();
    }
  }, 60_000);

  test("the SPA refuses a tampered QR result: no QR, no pay link, the refusal instead", async () => {
    const watched = await customerPage();
    try {
      await tamperPayResult(watched.page, { qrcode: EVIL, payurl: EVIL });
      await pay(watched.page, "微信支付");
      const refusal = watched.page.getByRole("dialog", { name: "无法打开支付" });
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain(OrderMsg.unsafePayLink);
      expect(await watched.page.getByRole("dialog", { name: /扫码支付/ }).count()).toBe(0);
      expect(await watched.page.getByRole("link", { name: "打开支付页面" }).count()).toBe(0);
      expect(await watched.page.locator("canvas").count()).toBe(0);
      await expectNothingRan(watched, "#/shop");
      await refusal.getByRole("button", { name: "关闭" }).last().click();
      await poll(() => refusal.count(), 0);
    } finally {
      await watched.close();
    }
  }, 60_000);

  test("the SPA refuses a tampered app link on a phone: no button that would follow it", async () => {
    const watched = await customerPage({ mobile: true });
    try {
      await tamperPayResult(watched.page, { qrcode: "", payurl: "", urlscheme: EVIL });
      await pay(watched.page, "微信支付");
      await watched.page.getByRole("dialog", { name: "无法打开支付" }).waitFor();
      expect(await watched.page.getByRole("button", { name: /^打开/ }).count()).toBe(0);
      await expectNothingRan(watched, "#/shop");
    } finally {
      await watched.close();
    }
  }, 60_000);
});

describe("notice links", () => {
  test("a bell notice whose link is javascript: is marked read but not followed", async () => {
    const watched = await customerPage();
    const { page } = watched;
    try {
      // The server lists only safe links; the answer is tampered with on its way to the page.
      await page.route("**/api/user_notive/list", async (route: Route) => {
        const notice = { _id: "a".repeat(24), href: EVIL, desc: "点此领取流量" };
        await route.fulfill({
          contentType: "application/json",
          body: JSON.stringify({ data: toBase64Json({ code: 0, data: [notice], msg: "ok" }) }),
        });
      });
      await page.goto(`${server.url}/#/order`);
      await page.reload();
      const bell = page.getByRole("button", { name: /^通知/ });
      await bell.click();
      const clicked = page.waitForRequest((request) => request.url().endsWith("/api/user_notive/clicked"));
      await page.getByRole("button", { name: "点此领取流量" }).click();
      await clicked;
      await poll(() => bell.count(), 0);
      await expectNothingRan(watched, "#/order");
    } finally {
      await watched.close();
    }
  }, 60_000);
});

describe("the announcement's group link (issue 26, C10)", () => {
  /** A visitor's first look at the shop with the announcement on: its dialog, once it shows. */
  async function announcementWith(watched: Watched) {
    await watched.page.goto(`${server.url}/#/shop`);
    const dialog = watched.page.getByRole("dialog", { name: "最新公告" });
    await dialog.getByText("欢迎使用飞渡，祝您使用愉快！").waitFor();
    return dialog;
  }

  /** The announcement shows, without the group link, and nothing ran. */
  async function expectNoGroupLink(watched: Watched) {
    try {
      const dialog = await announcementWith(watched);
      expect(await dialog.getByRole("link", { name: "点击加入" }).count()).toBe(0);
      await expectNothingRan(watched, "#/shop");
    } finally {
      await watched.close();
    }
  }

  test("a javascript: link in the database is shown as no link at all", async () => {
    await server.context.settings.update({ notice_show: true, notice_title: "维护通知" });
    await server.context.db.run(
      "INSERT INTO settings (key, value, update_time) VALUES ('group_link', ?, 0) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      JSON.stringify(EVIL),
    );
    await server.context.settings.update({});
    await expectNoGroupLink(await customerPage({ visitor: true }));
  }, 60_000);

  test("the SPA renders no javascript: href even when the answer carrying it is tampered with", async () => {
    const watched = await customerPage({ visitor: true });
    await tamperAnswer<HostInfo>(watched.page, "/api/host/get", (data) => ({ ...data, group_link: EVIL }));
    await expectNoGroupLink(watched);
  }, 60_000);

  test("a safe link is shown and leads where it says", async () => {
    await server.context.settings.update({ group_link: "https://t.me/ferry_group" });
    const watched = await customerPage({ visitor: true });
    try {
      const dialog = await announcementWith(watched);
      expect(await dialog.getByRole("link", { name: "点击加入" }).getAttribute("href")).toBe(
        "https://t.me/ferry_group",
      );
    } finally {
      await server.context.settings.update({ notice_show: false, group_link: "" });
      await watched.close();
    }
  }, 60_000);
});
