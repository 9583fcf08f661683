/**
 * 流量转赠 in Chromium against a real server (issue 14 §5 "Must show"): customer A, holding
 * permanent and trial traffic, sees only the permanent part as transferable, is refused below the
 * minimum with the seed's message, creates a transfer and copies its code; customer B, in a second
 * browser, is refused a wrong code and then receives it; both balances and lists show it, A gets the
 * bell notice, and a second transfer is taken back (撤回). Screenshots at 390 and 1280 px.
 * Needs the SPA built first (`bun scripts/build-web.ts`).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { tx } from "../../src/db/db.ts";
import { GB } from "../../src/lib/traffic.ts";
import { changeTraffic } from "../../src/modules/ledger/service.ts";
import { PushMsg } from "../../src/modules/push/schema.ts";
import { addTrialGrant } from "../../src/modules/trial/service.ts";
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

async function give(userId: string, bytes: number, trial = false) {
  const db = server.context.db;
  const now = Date.now();
  await tx(db, async () => {
    await changeTraffic(db, {
      userId,
      type: trial ? "coupon" : "buy",
      desc: trial ? "体验券" : "购买",
      traffic: bytes,
      now,
      timeZone: "Asia/Shanghai",
    });
    if (trial)
      await addTrialGrant(db, {
        userId,
        couponUseId: "e2e",
        amount: bytes,
        expireTime: now + 86_400_000,
        now,
      });
  });
}

const available = (page: Page) => page.getByTestId("push-available").textContent();
const rows = (page: Page) =>
  page
    .locator(".table tbody tr")
    .evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent?.trim() ?? "")),
    );
const toastText = (page: Page, text: string) => page.locator(".toast").filter({ hasText: text }).first();

test("visitors get the login prompt", async () => {
  const { context, page, errors } = await newPage(browser, 390);
  await page.goto(`${server.url}/#/push`);
  await page.getByRole("heading", { name: "登录后转赠流量" }).waitFor();
  expect(errors).toEqual([]);
  await context.close();
});

test("A transfers permanent traffic, B receives it with the code; 撤回 gives a waiting one back", async () => {
  const a = await loggedInClient(server);
  const b = await loggedInClient(server);
  await give(a.user.id, 50 * GB);
  await give(a.user.id, 10 * GB, true);

  // ---- A: only the 50 G of permanent traffic may go; below the minimum is refused ----
  const sender = await newPage(browser, 1280);
  await sender.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await loginInBrowser(sender.page, server.url, a.email, a.password);
  await sender.page.getByRole("link", { name: "流量转赠" }).first().click();
  await poll(() => available(sender.page), "50.00");
  await sender.page.getByText("最低转赠 20 G，手续费率 20%").waitFor();
  await sender.page.getByText(PushMsg.empty).waitFor();

  await sender.page.getByRole("button", { name: "转赠流量" }).click();
  const createDialog = sender.page.getByRole("dialog", { name: "转赠流量" });
  await createDialog.getByLabel("转赠量 (G)").fill("15");
  await createDialog.getByRole("button", { name: "生成转赠码" }).click();
  await toastText(sender.page, "最低转赠20G").waitFor();
  await poll(() => createDialog.locator(".field-error").allTextContents(), ["最低转赠20G"]);

  await createDialog.getByLabel("转赠量 (G)").fill("55");
  await createDialog.getByRole("button", { name: "生成转赠码" }).click();
  await toastText(sender.page, PushMsg.notEnough("50")).waitFor();

  await createDialog.getByLabel("转赠量 (G)").fill("30");
  await createDialog.getByText("对方实际到账 24.00 G").waitFor();
  await createDialog.getByRole("button", { name: "生成转赠码" }).click();
  const done = sender.page.getByRole("dialog", { name: "转赠成功" });
  const code = (await done.getByTestId("push-new-code").textContent()) ?? "";
  expect(code).toMatch(/^[A-HJ-NP-Z2-9]{12}$/);
  await done.getByRole("button", { name: "复制转赠码" }).click();
  await toastText(sender.page, "已复制到剪贴板").waitFor();
  expect(await sender.page.evaluate(() => navigator.clipboard.readText())).toBe(code);
  await screenshots(sender.page, "push-created");
  await done.getByRole("button", { name: "完成" }).click();

  await poll(() => available(sender.page), "20.00");
  expect(
    (await rows(sender.page)).map((row) => [
      row[0],
      row[1],
      row[2],
      row[3]?.startsWith("待领取"),
      row[4],
      row[5],
    ]),
  ).toEqual([["转出", "30.00", "24.00", true, `${code}复制`, "撤回"]]);

  // ---- B, in another browser: a wrong code is refused, the right one credits 24 G ----
  const receiver = await newPage(browser, 390);
  await loginInBrowser(receiver.page, server.url, b.email, b.password);
  await receiver.page.goto(`${server.url}/#/push`);
  await poll(() => available(receiver.page), "0.00");
  await receiver.page.getByRole("button", { name: "接收转赠" }).click();
  const receiveDialog = receiver.page.getByRole("dialog", { name: "接收转赠" });
  await receiveDialog.getByLabel("转赠码").fill("ZZZZZZZZZZZZ");
  await receiveDialog.getByRole("button", { name: "领取" }).click();
  await toastText(receiver.page, PushMsg.codeInvalid).waitFor();
  await receiveDialog.getByLabel("转赠码").fill(code.toLowerCase());
  await receiveDialog.getByRole("button", { name: "领取" }).click();
  await toastText(receiver.page, "领取成功，24.00G 已到账").waitFor();
  await poll(() => available(receiver.page), "24.00");
  await poll(
    async () => (await rows(receiver.page)).map((row) => row.slice(0, 6)),
    [["转入", "30.00", "24.00", "已领取", "—", ""]],
  );
  await screenshots(receiver.page, "push-received");

  // ---- A: the list says 已领取 and the bell has the notice ----
  // Away and back, as a customer would: the page opens afresh and reads the list again.
  await sender.page.goto(`${server.url}/#/traffic_records`);
  await sender.page.getByRole("heading", { name: "流量记录" }).waitFor();
  await sender.page.goto(`${server.url}/#/push`);
  await poll(async () => (await rows(sender.page)).map((row) => row[3]), ["已领取"]);
  const notice = await a.client.call<{ desc: string }[]>("/api/user_notive/list");
  expect(notice.data.map((item) => item.desc)).toEqual(["您转赠的 30G 流量已被领取，对方实际到账 24G"]);

  // ---- A: a second transfer, taken back before anyone receives it ----
  await sender.page.getByRole("button", { name: "转赠流量" }).click();
  await createDialog.getByLabel("转赠量 (G)").fill("20");
  await createDialog.getByRole("button", { name: "生成转赠码" }).click();
  await done.getByRole("button", { name: "完成" }).click();
  await poll(() => available(sender.page), "0.00");
  await sender.page.getByRole("button", { name: "撤回" }).click();
  await sender.page.getByRole("dialog", { name: "撤回转赠" }).getByRole("button", { name: "撤回" }).click();
  await toastText(sender.page, PushMsg.cancelled).waitFor();
  await poll(() => available(sender.page), "20.00");
  await poll(async () => (await rows(sender.page)).map((row) => row[3]), ["已退回", "已领取"]);
  await screenshots(sender.page, "push-list");

  expect([...sender.errors, ...receiver.errors]).toEqual([]);
  await sender.context.close();
  await receiver.context.close();
});
