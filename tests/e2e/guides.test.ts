/**
 * The 17 client guides (seed 000 §2, issue 17) in Debian's Chromium against a real server: every
 * guide route at 1280 px and 390 px, for a customer and for a visitor — page title, the five step
 * headings, the dashboard's subscribe menu (copy puts the client's own link in the clipboard; a
 * visitor gets the login prompt); installers and images show only when present in <data>/guide/;
 * the guide page is a chunk fetched on the first visit to a guide, not on the first page load.
 * Needs the SPA built first (`bun scripts/build-web.ts`). Screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { GUIDES } from "../../src/modules/guide/catalog.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser, findUserById } from "../../src/modules/user/service.ts";
import { ROUTES, SITE_NAME } from "../../web/routes.ts";
import { startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import {
  launchChromium,
  loginInBrowser,
  newPage,
  poll,
  recordCspViolations,
  screenshots,
} from "./chromium.ts";

const PASSWORD = "password123";
const HEADINGS = ["1 安装客户端", "2 一键导入订阅", "3 手动导入订阅", "4 启动代理", "5 其他说明"];

/** The subscription client key each guide's copy button must give (docs/subscription-formats.md). */
const KEYS: Record<string, string> = {
  "/clash_for_windows": "clash",
  "/clash_for_android": "clash",
  "/clash_meta_for_android": "mjclash",
  "/flclash_for_android": "flclash",
  "/v2rayng_for_android": "v2ray",
  "/v2rayng_for_windows": "v2ray",
  "/flclash_for_pc": "flclash",
  "/ss_for_ios": "ss",
  "/singbox_for_ios": "singbox",
  "/singbox_for_mac": "singbox",
  "/singbox_for_android": "singbox",
  "/singbox_for_win": "singbox",
  "/v2box_for_ios": "v2box",
  "/streisand_for_ios": "streisands",
  "/quantumult_for_ios": "q",
  "/quantumultx_for_ios": "qx",
  "/clash_for_macos": "clash",
};
const ROUTE_LIST = Object.keys(KEYS);

// Present for Clash for Windows only: its installer and the step-1 picture.
const CFW_INSTALLER = "clash_for_windows/clash-for-windows-setup-0.20.39.exe";
const CFW_STEP1 = "clash_for_windows/step1.png";

let server: TestServer;
let browser: Browser;
let user: UserRow;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  const created = await createUser(server.context, {
    email: uniqueEmail("guide"),
    passwordDigest: transformPassword(PASSWORD),
  });
  await server.context.db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", 50 * GB, created.id);
  user = (await findUserById(server.context, created.id)) as UserRow;

  // A real picture for the step image: a screenshot of a small page.
  const { context, page } = await newPage(browser, 400);
  await page.setContent('<p style="font:24px sans-serif;padding:40px">Clash for Windows 安装截图</p>');
  const png = await page.screenshot({ clip: { x: 0, y: 0, width: 360, height: 160 } });
  await context.close();
  for (const [path, bytes] of [
    [CFW_INSTALLER, new TextEncoder().encode("MZ installer")],
    [CFW_STEP1, png],
  ] as const) {
    const file = join(server.context.guideDir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
  }
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const linkOf = (key: string) => `${server.url}/api/subscript/${key}/${user.id}/${user.userkey}`;
const step = (page: Page, index: number) => page.getByRole("region", { name: HEADINGS[index] });
const toastWith = (page: Page, text: string) => page.getByRole("alert").filter({ hasText: text }).first();

async function openGuide(page: Page, route: string) {
  await page.evaluate((hash) => {
    location.hash = hash;
  }, `#${route}`);
  await page.getByRole("heading", { level: 1, name: ROUTES[route]?.title }).waitFor();
}

/** Title and the five headings, the same on every guide. */
async function expectGuideShell(page: Page, route: string) {
  await poll(() => page.title(), `${ROUTES[route]?.title} - ${SITE_NAME}`);
  await expect(page.locator(".guide-step-title").allTextContents()).resolves.toEqual(HEADINGS);
}

describe("client guides", () => {
  test("the guide page is fetched on the first visit to a guide, not on the first page load, under the CSP", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await recordCspViolations(page, errors); // the chunk loads under script-src 'self'
    const scripts: string[] = [];
    page.on("request", (request) => {
      if (request.resourceType() === "script") scripts.push(new URL(request.url()).pathname);
    });
    await page.goto(`${server.url}/`);
    await page.getByRole("heading", { name: "选择平台与客户端" }).waitFor();
    const guideChunk = (names: string[]) =>
      names.filter((name) => /^\/chunks\/GuidePage-[\w-]+\.js$/.test(name));
    expect(scripts).toContain("/app.js");
    expect(guideChunk(scripts)).toEqual([]);

    await openGuide(page, "/clash_for_windows");
    expect(guideChunk(scripts)).toHaveLength(1);
    // Another guide reuses the loaded chunk.
    await openGuide(page, "/ss_for_ios");
    expect(guideChunk(scripts)).toHaveLength(1);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  /** Every guide on one page: a customer's copy puts the client's own link in the clipboard. */
  async function customerRound(width: number) {
    const { context, page, errors } = await newPage(browser, width);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await loginInBrowser(page, server.url, user.email, PASSWORD);
    for (const route of ROUTE_LIST) {
      await openGuide(page, route);
      await expectGuideShell(page, route);
      // Step 3 copies with the dashboard's menu (step 2 has the same menu, with 一键导入 first).
      await step(page, 2)
        .getByRole("button", { name: /^复制订阅链接/ })
        .click();
      await page.getByRole("menuitem", { name: "复制订阅", exact: true }).click();
      await poll(() => page.evaluate(() => navigator.clipboard.readText()), linkOf(KEYS[route] as string));
      await page.evaluate(() => navigator.clipboard.writeText(""));
    }
    expect(errors).toEqual([]);
    await context.close();
  }

  /** Every guide on one page: a visitor's copy gets the login prompt. */
  async function visitorRound(width: number) {
    const { context, page, errors } = await newPage(browser, width);
    await page.goto(`${server.url}/#/login`);
    await page.getByLabel("邮箱").waitFor();
    for (const route of ROUTE_LIST) {
      await openGuide(page, route);
      await expectGuideShell(page, route);
      await step(page, 1)
        .getByRole("button", { name: /^订阅 / })
        .click();
      await page.getByRole("menuitem", { name: "复制订阅", exact: true }).click();
      await toastWith(page, "请您登录后再进行订阅").waitFor();
      await poll(() => page.getByRole("menuitem", { name: "复制订阅", exact: true }).count(), 0);
    }
    expect(errors).toEqual([]);
    await context.close();
  }

  // Independent pages run side by side, except the customers: the browser has one clipboard.
  test("every guide at 1280 px and 390 px: title, five steps, a customer's copy, a visitor's login prompt", async () => {
    const customers = async () => {
      await customerRound(1280);
      await customerRound(390);
    };
    await Promise.all([customers(), visitorRound(1280), visitorRound(390)]);
  }, 120_000);

  test("downloads and images when present, the official page otherwise; the seed's details", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, user.email, PASSWORD);

    // Clash for Windows: its installer and step-1 picture are present.
    await openGuide(page, "/clash_for_windows");
    const install = step(page, 0);
    const download = install.getByRole("link", { name: /^下载 / });
    await download.waitFor();
    await expect(download.getAttribute("href")).resolves.toBe(`/guide/${CFW_INSTALLER}`);
    await expect(install.getByRole("link", { name: "前往官网下载" }).count()).resolves.toBe(0);
    const picture = install.getByRole("img");
    await poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), true);
    await expect(picture.getAttribute("src")).resolves.toBe(`/guide/${CFW_STEP1}`);
    await expect(page.locator(".guide-image").count()).resolves.toBe(1); // absent pictures: nothing
    await expect(install.textContent()).resolves.toContain("64 位");
    await expect(install.textContent()).resolves.toContain("Clash 0.20.39");
    await expect(step(page, 2).textContent()).resolves.toContain("1440 分钟");
    await screenshots(page, "guide-clash-for-windows");

    // FLClash for Android: nothing present, so the official page; Android 7.0, versions, 204 URL.
    await openGuide(page, "/flclash_for_android");
    const official = step(page, 0).getByRole("link", { name: "前往官网下载" });
    await expect(official.getAttribute("href")).resolves.toBe(
      GUIDES.find((guide) => guide.route === "/flclash_for_android")?.officialUrl ?? "",
    );
    await expect(official.getAttribute("rel")).resolves.toBe("noopener noreferrer");
    await expect(official.getAttribute("target")).resolves.toBe("_blank");
    await expect(page.getByRole("img").count()).resolves.toBe(0);
    const flclash = (await page.locator(".guide-page").textContent()) ?? "";
    for (const part of [
      "Android 7.0",
      "0.8.59",
      "APK 0.8.66",
      "http://www.gstatic.com/generate_204",
      "1440 分钟",
    ])
      expect(flclash).toContain(part);
    await screenshots(page, "guide-flclash-for-android");

    await openGuide(page, "/v2rayng_for_windows");
    await expect(step(page, 0).textContent()).resolves.toContain("7.0.0 或更新");

    // Shadowrocket: App Store, the Apple ID links and the rule file.
    await openGuide(page, "/ss_for_ios");
    await expect(step(page, 0).getByRole("link", { name: "前往 App Store" }).count()).resolves.toBe(1);
    await expect(
      step(page, 0).getByRole("link", { name: "共享 Apple ID" }).getAttribute("href"),
    ).resolves.toBe("/#/apple_id_share");
    await expect(step(page, 4).textContent()).resolves.toContain(`${server.url}/describe/ss_rule.conf`);
    await screenshots(page, "guide-shadowrocket");

    // Streisand's route import works only on a phone.
    await openGuide(page, "/streisand_for_ios");
    await step(page, 4).getByRole("link", { name: "导入分流规则" }).click();
    await toastWith(page, "请在手机上打开本页面，再导入分流规则").waitFor();
    expect(new URL(page.url()).hash).toBe("#/streisand_for_ios");
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  test("Streisand's route import asks a visitor to log in", async () => {
    const { context, page, errors } = await newPage(browser, 390);
    await page.goto(`${server.url}/#/streisand_for_ios`);
    await step(page, 4).getByRole("link", { name: "导入分流规则" }).click();
    await toastWith(page, "请您登录后再进行体验").waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
