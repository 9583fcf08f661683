/**
 * 问题反馈 in Chromium against a real server (issue 13 "Must show"): a customer opens a ticket with a
 * real PNG, an admin in a second browser answers it, the customer's bell shows the notice and the
 * answer appears in the open ticket within one 30 s poll (the page's clock fast-forwarded, not
 * waited), the admin closes it after confirming, and leaving the page stops the poll.
 * Needs the SPA built first (`bun scripts/build-web.ts`). Screenshots in test-results/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { TICKET_POLL_MS, TicketMsg } from "../../src/modules/feedback/schema.ts";
import { quadrantPng } from "../../src/modules/file/test-images.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, reloadPage, screenshots } from "./chromium.ts";

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

/** A real PNG, as a file picked from disk. */
const PNG = { name: "screenshot.png", mimeType: "image/png", buffer: quadrantPng() };

const TITLE = "香港节点全部超时";
const DESC = "从昨晚开始，Clash 里所有香港节点都显示超时。";
const ANSWER = "已重启香港节点，请更新订阅后再试。";

/** Calls of one path the page made, counted as they go out. */
function countCalls(page: Page, path: string): () => number {
  let count = 0;
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === path) count += 1;
  });
  return () => count;
}

const thread = (page: Page) => page.getByRole("list", { name: "对话记录" });
const badgeOf = (page: Page) => page.locator(".ticket-detail-title .badge").textContent();

test("visitors get the login prompt", async () => {
  const { context, page, errors } = await newPage(browser, 390);
  await page.goto(`${server.url}/#/feedback`);
  await page.getByRole("heading", { name: "登录后提交和查看工单" }).waitFor();
  await expect(page.getByRole("link", { name: "常见问题" }).first().getAttribute("href")).resolves.toBe(
    "#/windows_errors",
  );
  expect(errors).toEqual([]);
  await context.close();
});

test("a ticket with an image, answered by an admin: bell notice and the answer within one poll; closed after confirming", async () => {
  const customer = await loggedInClient(server);
  const admin = await loggedInClient(server, { role: "admin" });

  const boss = await newPage(browser, 1280);
  await loginInBrowser(boss.page, server.url, admin.email, admin.password);

  // ---- the customer opens a ticket with a screenshot ----
  const me = await newPage(browser, 1280);
  await me.page.clock.install();
  const listCalls = countCalls(me.page, "/api/feedback/my_list");
  const refreshCalls = countCalls(me.page, "/api/feedback/refresh");
  await loginInBrowser(me.page, server.url, customer.email, customer.password);
  await me.page.getByRole("link", { name: "问题反馈" }).click();
  await me.page.getByText(TicketMsg.empty).waitFor();
  await expect(me.page.getByRole("link", { name: "常见问题" }).last().getAttribute("href")).resolves.toBe(
    "#/windows_errors",
  );

  await me.page.getByRole("button", { name: "提交工单" }).click();
  const dialog = me.page.getByRole("dialog", { name: "提交工单" });
  await dialog.getByRole("button", { name: "提交" }).click();
  await poll(
    () => dialog.locator(".field-error").allTextContents(),
    [TicketMsg.titleEmpty, TicketMsg.descEmpty],
  );
  await expect(dialog.getByLabel("标题", { exact: true }).getAttribute("aria-invalid")).resolves.toBe("true");

  await dialog.getByLabel("标题", { exact: true }).fill(TITLE);
  await dialog.getByLabel("描述", { exact: true }).fill(DESC);
  const uploaded = me.page.waitForResponse((r) => r.url().endsWith("/api/file/upload"));
  await dialog.locator('input[type="file"]').setInputFiles(PNG);
  expect((await uploaded).status()).toBe(200);
  await dialog.locator("img").first().waitFor();
  await screenshots(me.page, "feedback-create");
  await dialog.getByRole("button", { name: "提交" }).click();
  await dialog.waitFor({ state: "detached" });

  // The new ticket is open: 处理中, the description and the screenshot, which opens full size.
  await poll(() => badgeOf(me.page), "处理中");
  await me.page.waitForURL((url) => /#\/feedback\?id=[0-9a-f]{24}$/.test(url.hash));
  const ticketId = new URL(me.page.url()).hash.split("=")[1] as string;
  await expect(thread(me.page).textContent()).resolves.toContain(DESC);
  const thumb = thread(me.page).getByRole("button", { name: "查看大图" }).locator("img");
  await poll(() => thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), 32);
  await thread(me.page).getByRole("button", { name: "查看大图" }).click();
  const viewer = me.page.getByRole("dialog", { name: "查看图片" });
  await poll(() => viewer.locator("img").evaluate((img: HTMLImageElement) => img.naturalWidth), 32);
  await viewer.getByRole("button", { name: "关闭" }).last().click();
  await viewer.waitFor({ state: "detached" });

  // Back to the ticket from another page: the poll starts afresh, so one 30 s step is one poll.
  await me.page.getByRole("link", { name: "流量记录" }).click();
  await me.page.getByRole("heading", { name: "流量记录" }).waitFor();
  await me.page.goto(`${server.url}/#/feedback?id=${ticketId}`);
  await poll(async () => (await thread(me.page).textContent())?.includes(DESC), true);

  // ---- an admin, in another browser, sees it with the customer's e-mail and answers ----
  await boss.page.goto(`${server.url}/#/feedback`);
  const item = boss.page.getByRole("button", { name: new RegExp(TITLE) });
  await expect(item.textContent()).resolves.toContain(customer.email);
  // For an admin a new ticket is waiting: 已回复 from the customer's side of the conversation.
  await expect(item.locator(".badge").textContent()).resolves.toBe("已回复");
  await item.click();
  await boss.page.getByLabel("回复", { exact: true }).fill(ANSWER);
  await boss.page.getByRole("button", { name: "发送回复" }).click();
  await poll(() => badgeOf(boss.page), "处理中");
  await expect(thread(boss.page).textContent()).resolves.toContain(ANSWER);
  // The admin sees which admin answered; the customer sees only 客服.
  await expect(thread(boss.page).textContent()).resolves.toContain(`客服 · ${admin.email}`);
  await screenshots(boss.page, "feedback-admin");

  // ---- the customer's open ticket shows the answer after one poll, without reloading ----
  const listsBefore = listCalls();
  const refreshesBefore = refreshCalls();
  expect(await thread(me.page).textContent()).not.toContain(ANSWER);
  await me.page.clock.fastForward(TICKET_POLL_MS);
  await poll(async () => (await thread(me.page).textContent())?.includes(ANSWER), true);
  await poll(() => badgeOf(me.page), "已回复");
  expect(await thread(me.page).textContent()).not.toContain(admin.email);
  expect(listCalls()).toBe(listsBefore + 1);
  expect(refreshCalls()).toBe(refreshesBefore + 1);
  await screenshots(me.page, "feedback-answered");

  // ---- the bell shows the notice by the same poll; from any page it leads back to the ticket ----
  const bell = me.page.getByRole("button", { name: "通知（1 条未读）" });
  await poll(() => bell.isVisible(), true);
  await me.page.getByRole("link", { name: "流量记录" }).click();
  await me.page.getByRole("heading", { name: "流量记录" }).waitFor();
  await bell.click();
  await me.page.getByRole("button", { name: `您的工单「${TITLE}」有新回复` }).click();
  await me.page.waitForURL((url) => url.hash === `#/feedback?id=${ticketId}`);
  // The ticket's id stays inside the hash, not behind in the address for later pages.
  expect(new URL(me.page.url()).search).toBe("");
  await poll(async () => (await thread(me.page).textContent())?.includes(ANSWER), true);
  await expect(bell.isVisible()).resolves.toBe(false);

  // The customer writes back: for the admin that is 已回复 again.
  await me.page.getByLabel("回复", { exact: true }).fill("好了，谢谢！");
  await me.page.getByRole("button", { name: "发送回复" }).click();
  await poll(() => badgeOf(me.page), "处理中");

  // ---- the admin closes it, after confirming ----
  await reloadPage(boss.page);
  await poll(() => badgeOf(boss.page), "已回复");
  await boss.page.getByRole("button", { name: "关闭工单" }).click();
  const confirm = boss.page.getByRole("dialog", { name: "关闭工单" });
  await expect(confirm.textContent()).resolves.toContain(TicketMsg.closeConfirm);
  await confirm.getByRole("button", { name: "取消" }).click();
  await poll(() => badgeOf(boss.page), "已回复");
  await boss.page.getByRole("button", { name: "关闭工单" }).click();
  await confirm.getByRole("button", { name: "关闭工单" }).click();
  await poll(() => badgeOf(boss.page), "已关闭");
  await expect(boss.page.getByRole("status").filter({ hasText: TicketMsg.closed }).isVisible()).resolves.toBe(
    true,
  );
  await expect(boss.page.getByRole("button", { name: "发送回复" }).count()).resolves.toBe(0);

  // The customer's page shows it closed after the next poll: no reply box.
  await me.page.clock.fastForward(TICKET_POLL_MS);
  await poll(() => badgeOf(me.page), "已关闭");
  await expect(me.page.getByRole("button", { name: "发送回复" }).count()).resolves.toBe(0);
  await screenshots(me.page, "feedback-closed");

  // Narrow screens show the list, then the ticket with a way back.
  await me.page.setViewportSize({ width: 390, height: 800 });
  await me.page.getByRole("button", { name: "‹ 返回列表" }).click();
  await me.page.getByRole("button", { name: new RegExp(TITLE) }).waitFor();
  await me.page.setViewportSize({ width: 1280, height: 800 });
  await screenshots(me.page, "feedback-list");

  // ---- leaving the page stops the poll ----
  await me.page.getByRole("link", { name: "流量记录" }).click();
  await me.page.getByRole("heading", { name: "流量记录" }).waitFor();
  const listsAfterLeaving = listCalls();
  const refreshesAfterLeaving = refreshCalls();
  await me.page.clock.fastForward(3 * TICKET_POLL_MS);
  await me.page.waitForTimeout(300);
  expect([listCalls(), refreshCalls()]).toEqual([listsAfterLeaving, refreshesAfterLeaving]);

  expect(me.errors).toEqual([]);
  expect(boss.errors).toEqual([]);
  await me.context.close();
  await boss.context.close();
});
