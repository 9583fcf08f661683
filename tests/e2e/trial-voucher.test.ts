/**
 * The 体验券 button and modal in Debian's Chromium against a real server (issue 14 §2; seed 000 §2,
 * §4, §5, §8): a visitor is asked to log in; a paid customer redeems a trial voucher (code typed
 * with spaces, lower case), sees the success toast and the trial traffic with its expiry on the
 * traffic card; the same code again is refused on this device without asking the server; an
 * unknown code shows 体验券不存在; a code this account redeemed elsewhere (1017) is remembered
 * locally. Needs the SPA built first. Screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { tx } from "../../src/db/db.ts";
import { GB } from "../../src/lib/traffic.ts";
import { RedeemMsg, redeemSuccessText } from "../../src/modules/coupon/schema.ts";
import { changeTraffic } from "../../src/modules/ledger/service.ts";
import { makeCoupon } from "../commerce.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

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

const toasts = (page: Page) => page.locator(".toast-msg").allTextContents();
const dialog = (page: Page) => page.getByRole("dialog", { name: "兑换体验券" });
const trafficCard = (page: Page) => page.getByRole("region", { name: "不限时流量" });

/** Opens the modal, types a code and confirms; returns the redeem calls the page made meanwhile. */
async function submitCode(page: Page, code: string): Promise<string[]> {
  const calls: string[] = [];
  const listen = (request: { url(): string }) => {
    const path = new URL(request.url()).pathname;
    if (path === "/api/coupon/redeem_coupon") calls.push(path);
  };
  page.on("request", listen);
  if (!(await dialog(page).isVisible())) await page.getByRole("button", { name: "体验券" }).click();
  await dialog(page).getByLabel("激活码").fill(code);
  await dialog(page).getByRole("button", { name: "确定" }).click();
  await page.waitForTimeout(300);
  page.off("request", listen);
  return calls;
}

const fieldError = (page: Page) => dialog(page).locator(".field-error").textContent();

describe("trial voucher modal", () => {
  test("visitor, a paid customer redeeming, and the refusals", async () => {
    const { page, errors } = await newPage(browser, 1280);

    // A visitor is asked to log in; no modal opens.
    await page.goto(`${server.url}/#/`);
    await page.getByRole("button", { name: "体验券" }).click();
    await poll(async () => (await toasts(page)).includes("暂未登录，请登录"), true);
    expect(await dialog(page).count()).toBe(0);
    await page.waitForURL((url) => url.hash === "#/login");

    // A paid customer with 10 GB redeems 5 GB of trial traffic lasting 48 hours.
    const customer = await loggedInClient(server);
    const db = server.context.db;
    await db.run("UPDATE users SET paid_user = 1 WHERE id = ?", customer.user.id);
    await tx(
      db,
      async () =>
        await changeTraffic(db, {
          userId: customer.user.id,
          type: "buy",
          desc: "测试套餐",
          traffic: 10 * GB,
          now: Date.now(),
          timeZone: "Asia/Shanghai",
        }),
    );
    const voucher = await makeCoupon(server, {
      name: "新人体验",
      type: "freeUse",
      code: "TRYFIVE",
      trafficG: 5,
      traffixHaveLimitTime: true,
      traffixLimitTime: 48,
      NumberOfAuthorizations: 100,
    });
    await loginInBrowser(page, server.url, customer.email, customer.password);
    await poll(() => trafficCard(page).locator(".stat-value").textContent(), "10.00");
    await page.getByRole("button", { name: "体验券" }).click();
    await dialog(page).getByLabel("激活码").fill(" tryfive ");
    await screenshots(page, "trial-voucher-modal");
    await dialog(page).getByRole("button", { name: "确定" }).click();
    const success = redeemSuccessText({ name: "新人体验", traffic: 5 * GB, day: 0, type: "freeUse" });
    expect(success).toBe("兑换成功：新人体验，获得 5 GB 流量，快去导入订阅开始使用吧");
    await poll(async () => (await toasts(page)).includes(success), true);
    await dialog(page).waitFor({ state: "detached" });
    await poll(() => trafficCard(page).locator(".stat-value").textContent(), "15.00");
    const note = await page.getByTestId("trial-traffic-note").textContent();
    expect(note).toMatch(/^含限时流量 5\.00 GB，\d{1,2}月\d{1,2}日 \d{2}:\d{2} 到期$/);
    expect(await page.evaluate(() => localStorage.getItem("couponRecords"))).toContain('"code":"tryfive"');
    await screenshots(page, "trial-voucher-redeemed");

    // The same code again: refused on this device, the server is not asked.
    expect(await submitCode(page, "TRYFIVE")).toEqual([]);
    expect(await fieldError(page)).toBe(RedeemMsg.usedOnThisDevice);

    // An unknown code: the server's message.
    expect(await submitCode(page, "NOPE42")).toHaveLength(1);
    await poll(() => fieldError(page), "体验券不存在");

    // A code this account already redeemed elsewhere: 1017, then remembered on this device.
    const elsewhere = await makeCoupon(server, {
      type: "freeUse",
      code: "ELSEWHERE",
      trafficG: 1,
      NumberOfAuthorizations: 9,
    });
    expect((await customer.client.call("/api/coupon/redeem_coupon", { code: elsewhere.code })).code).toBe(0);
    expect(await submitCode(page, "ELSEWHERE")).toHaveLength(1);
    await poll(() => fieldError(page), "该体验券已经兑换过");
    expect(await submitCode(page, "ELSEWHERE")).toEqual([]);
    expect(await fieldError(page)).toBe(RedeemMsg.usedOnThisDevice);

    // 取消 closes the modal.
    await dialog(page).getByRole("button", { name: "取消" }).click();
    await dialog(page).waitFor({ state: "detached" });

    const uses = await db.all(
      "SELECT code FROM coupon_uses WHERE user_id = ? ORDER BY time",
      customer.user.id,
    );
    expect(uses).toEqual([{ code: voucher.code }, { code: "ELSEWHERE" }]);
    expect(errors).toEqual([]);
  });
});
