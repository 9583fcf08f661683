/**
 * The dashboard's 每日签到 card in Debian's Chromium against a real server (issue 14 §1; seed 000
 * §2, §5, §8): a visitor is asked to log in; a paid customer checks in, reads the reward and the
 * streak in the toast, sees 已签到 and the traffic card grow; a second paid account in the same
 * browser is refused locally by the check-in cookie and an unpaid one by the paid rule — neither
 * gains anything. Needs the SPA built first. Screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { businessDay } from "../../src/lib/time.ts";
import { MB } from "../../src/lib/traffic.ts";
import { SignUseMsg } from "../../src/modules/signuse/schema.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { noonZone } from "../traffic.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  // About noon in the server's zone: the day a check-in remembers cannot turn over mid-test.
  await server.context.settings.update({ timezone: noonZone() });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function customer(paid: boolean) {
  const account = await loggedInClient(server);
  if (paid) await server.context.db.run("UPDATE users SET paid_user = 1 WHERE id = ?", account.user.id);
  return account;
}

const signUseRows = async (userId: string) =>
  (
    await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM sign_uses WHERE user_id = ?",
      userId,
    )
  )?.n;

const card = (page: Page) => page.getByRole("region", { name: "每日签到" });
const toasts = (page: Page) => page.locator(".toast-msg").allTextContents();

async function logout(page: Page) {
  await page.getByRole("button", { name: "用户菜单" }).click();
  await page.getByRole("button", { name: "退出登录" }).click();
  await page.waitForURL((url) => url.hash === "#/login");
}

describe("dashboard check-in", () => {
  test("visitor, paid customer, another account in the same browser, an unpaid account", async () => {
    const { page, errors } = await newPage(browser, 1280);

    // A visitor sees the card and is asked to log in.
    await page.goto(`${server.url}/#/`);
    await card(page).getByRole("button", { name: "签到" }).click();
    await poll(async () => (await toasts(page)).includes(SignUseMsg.loginRequired), true);
    await page.waitForURL((url) => url.hash === "#/login");

    // A paid customer checks in.
    const paid = await customer(true);
    await loginInBrowser(page, server.url, paid.email, paid.password);
    await poll(
      async () => (await card(page).textContent())?.includes("连续签到满 30 天额外奖励 1024 MB"),
      true,
    );
    await expect(card(page).locator(".stat-value").textContent()).resolves.toBe("200");
    await card(page).getByRole("button", { name: "签到" }).click();
    await poll(
      async () => (await toasts(page)).includes("签到成功，获得 200 MB 流量，已连续签到 1 天"),
      true,
    );
    const done = card(page).getByRole("button", { name: "已签到" });
    await done.waitFor();
    await expect(done.isDisabled()).resolves.toBe(true);
    await poll(
      () => page.getByRole("region", { name: "不限时流量" }).locator(".stat-value").textContent(),
      "0.20",
    );
    await poll(async () => (await card(page).textContent())?.includes("已连续签到 1 天"), true);
    const today = businessDay(Date.now(), await server.context.settings.get("timezone"));
    const cookie = (await page.context().cookies()).find((c) => c.name === "lastSignUse");
    expect(cookie?.value).toBe(today);
    expect(await signUseRows(paid.user.id)).toBe(1);
    await screenshots(page, "checkin-done");
    expect((await paid.client.call<{ traffic: number }>("/api/user/userinfo")).data.traffic).toBe(200 * MB);

    // Another paid account in the same browser the same day: refused here, nothing asked of the server.
    await logout(page);
    const other = await customer(true);
    await loginInBrowser(page, server.url, other.email, other.password);
    await poll(async () => (await card(page).textContent())?.includes("连续签到满"), true);
    const calls: string[] = [];
    page.on("request", (request) => calls.push(new URL(request.url()).pathname));
    await card(page).getByRole("button", { name: "签到" }).click();
    await poll(async () => (await toasts(page)).includes(SignUseMsg.otherAccount), true);
    expect(calls).not.toContain("/api/user/sign_use");
    expect(await signUseRows(other.user.id)).toBe(0);
    await expect(card(page).getByRole("button", { name: "签到" }).isEnabled()).resolves.toBe(true);

    // An account that never paid sees the rewards with the paid-only rule, and hears it on trying.
    await logout(page);
    const unpaid = await customer(false);
    await loginInBrowser(page, server.url, unpaid.email, unpaid.password);
    const paidOnly = card(page).locator(".sign-use-paid-only");
    await paidOnly.waitFor();
    expect(await paidOnly.textContent()).toBe(
      "付费用户才能领取每日福利，购买任意套餐后即可每天签到。连续签到满 30 天额外奖励 1024 MB。 去购买",
    );
    expect(await paidOnly.getByRole("link", { name: "去购买" }).getAttribute("href")).toBe("/#/shop");
    await expect(card(page).locator(".stat-value").textContent()).resolves.toBe("200");
    expect(await card(page).getByRole("progressbar").count()).toBe(0);
    await card(page).getByRole("button", { name: "签到" }).click();
    await poll(async () => (await toasts(page)).includes(SignUseMsg.notPaid), true);
    expect(await signUseRows(unpaid.user.id)).toBe(0);
    await screenshots(page, "checkin-unpaid");

    expect(errors).toEqual([]);
  });
});
