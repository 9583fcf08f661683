/**
 * 邀请返利 (/channel) in Debian's Chromium against a real server: a channel user sees the rule as
 * plain text, the invite link from the site origin with 复制, the invited customer and the rebate
 * of their sandbox purchase; a normal user is told they are not a channel; a closed programme
 * says so. Needs the SPA built first. Screenshots in test-results/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { updateChannel } from "../../src/modules/channel/service.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { createOrder, makeCombo, payWithSandbox, startShopServer } from "../commerce.ts";
import { ApiClient, loggedInClient, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
  await server.context.settings.update({ inviteRule: "<b>邀请好友</b>\n第二行：返利存入钱包" });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const tableRows = (page: Page, caption: string) =>
  page
    .locator("table", { has: page.locator("caption", { hasText: caption }) })
    .locator("tbody tr")
    .evaluateAll((rows) =>
      rows.map((row) => Array.from(row.querySelectorAll("td"), (cell) => cell.textContent?.trim() ?? "")),
    );

test("a channel user sees the rule as text, copies the invite link, and sees the invited customer's rebate", async () => {
  const owner = await loggedInClient(server);
  await updateChannel(server.context, {
    email: owner.email,
    code: "PAGE01",
    rewardRate: 0.1,
    comsumerDuration: 30,
  });
  const email = uniqueEmail("buyer");
  await createUser(server.context, {
    email,
    passwordDigest: transformPassword("correct-horse-1"),
    channelCode: "PAGE01",
  });
  const buyer = new ApiClient(server.url);
  await buyer.login(email, "correct-horse-1");
  const combo = await makeCombo(server, { name: "季付套餐", price: 30 });
  await payWithSandbox(server, buyer, (await createOrder(buyer, combo._id))._id);

  const { page, context, errors } = await newPage(browser, 1280);
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await loginInBrowser(page, server.url, owner.email, owner.password);
  await page.goto(`${server.url}/#/channel`);

  const rule = page.locator(".channel-rule");
  await expect(rule.textContent()).resolves.toBe("<b>邀请好友</b>\n第二行：返利存入钱包");
  expect(await rule.locator("b").count()).toBe(0);

  const link = page.getByLabel("邀请链接", { exact: true });
  await expect(link.inputValue()).resolves.toBe(`${server.url}/?c=PAGE01#/register`);
  await page.getByRole("button", { name: "复制邀请链接" }).click();
  await page.getByText("已复制到剪贴板").waitFor();
  await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(
    `${server.url}/?c=PAGE01#/register`,
  );

  await expect(page.getByRole("heading", { name: /已邀请/ }).textContent()).resolves.toBe("已邀请 1 人");
  expect((await tableRows(page, "邀请用户")).map((cells) => cells[0])).toEqual([
    `${email.slice(0, 2)}***@example.com`,
  ]);
  const rewards = await tableRows(page, "返利记录");
  expect(rewards.map((cells) => cells.slice(1))).toEqual([
    [`${email.slice(0, 2)}***@example.com`, "季付套餐", "¥30.00", "¥3.00", "¥3.00"],
  ]);
  await screenshots(page, "channel");
  expect(errors).toEqual([]);
  await context.close();
});

test("a normal user is told they are not a channel; a closed programme says so", async () => {
  const plain = await loggedInClient(server);
  const { page, context, errors } = await newPage(browser, 390);
  await server.context.settings.update({ openChannel: false });
  try {
    await loginInBrowser(page, server.url, plain.email, plain.password);
    await page.goto(`${server.url}/#/channel`);
    await page.getByRole("heading", { name: "您还不是渠道用户" }).waitFor();
    await page.getByRole("status").filter({ hasText: "邀请返利活动已关闭" }).waitFor();
    expect(await page.getByLabel("邀请链接", { exact: true }).count()).toBe(0);
    await screenshots(page, "channel-not-channel");
  } finally {
    await server.context.settings.update({ openChannel: true });
  }
  expect(errors).toEqual([]);
  await context.close();
});
