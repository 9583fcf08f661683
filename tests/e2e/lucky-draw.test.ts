/**
 * The lucky draw in Debian's Chromium (issue 14 §4): a yunying user adds prizes on /admin_prize
 * (with an image upload, the seed's defaults, the statistics, a refused value on its field, delete
 * after confirmation); a paid customer with permanent traffic goes from the dashboard to
 * /lucky_draw, draws, and the highlight lands on the seat the server chose before the result
 * opens; with reduced motion it lands at once; short of traffic the server's message shows.
 * Screenshots at 1280 and 390 px. Needs the SPA built first (`bun scripts/build-web.ts`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page, Response } from "playwright-core";
import { tx } from "../../src/db/db.ts";
import { GB } from "../../src/lib/traffic.ts";
import { png } from "../../src/modules/file/test-images.ts";
import { changeTraffic } from "../../src/modules/ledger/service.ts";
import type { DrawResult } from "../../src/modules/prize/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { type Answer, fromBase64Json } from "../../src/rpc/envelope.ts";
import { startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, reloadPage, SHOTS, screenshots } from "./chromium.ts";

const PASSWORD = "password123";

let server: TestServer;
let browser: Browser;
let yunyingEmail: string;
let customerEmail: string;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  yunyingEmail = uniqueEmail("yunying");
  customerEmail = uniqueEmail("customer");
  const passwordDigest = transformPassword(PASSWORD);
  await createUser(server.context, { email: yunyingEmail, passwordDigest, type: "yunying" });
  const customer = await createUser(server.context, { email: customerEmail, passwordDigest, type: "normal" });
  const db = server.context.db;
  await db.run("UPDATE users SET paid_user = 1 WHERE id = ?", customer.id);
  await tx(
    db,
    async () =>
      await changeTraffic(db, {
        userId: customer.id,
        type: "buy",
        desc: "e2e",
        traffic: 5 * GB,
        now: Date.now(),
        timeZone: "UTC",
      }),
  );
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text });
const stat = (page: Page, label: string) =>
  page.locator(".prize-stats div", { hasText: label }).locator("dd").textContent();

async function drawAnswer(response: Response): Promise<Answer<DrawResult>> {
  const body = (await response.json()) as { data: string };
  const decoded = fromBase64Json(body.data);
  if (!decoded.ok) throw new Error(decoded.reason);
  return decoded.value as Answer<DrawResult>;
}

describe("lucky draw", () => {
  test("yunying sets up prizes with an image; a customer draws and the board lands on the server's seat", async () => {
    // The back office.
    const staff = await newPage(browser, 1280);
    const page = staff.page;
    await loginInBrowser(page, server.url, yunyingEmail, PASSWORD);
    await page.goto(`${server.url}/#/admin_prize`);
    await page.getByRole("heading", { name: "抽奖管理" }).waitFor();
    await page.getByRole("cell", { name: "暂无记录" }).waitFor();
    expect(await stat(page, "总权重")).toBe("0");
    expect(await stat(page, "每次期望流量")).toBe("0.00 G");
    expect(await stat(page, "中奖率")).toBe("0.00%");

    await page.getByRole("button", { name: "添加奖品" }).click();
    let form = page.getByRole("dialog", { name: "添加奖品" });
    await form.waitFor();
    // Seed 001 §9 defaults.
    expect(await form.getByLabel("名称").inputValue()).toBe("一等奖");
    expect(await form.getByLabel("奖励流量(G)").inputValue()).toBe("10");
    expect(await form.getByLabel("奖励时长(天)").inputValue()).toBe("0");
    expect(await form.getByLabel("权重").inputValue()).toBe("1");
    expect(await form.getByRole("switch", { name: "赠送折扣券" }).isChecked()).toBe(false);
    const uploaded = page.waitForResponse((r) => r.url().endsWith("/api/file/upload"));
    await form
      .getByLabel("上传奖品图片")
      .setInputFiles({ name: "prize.png", mimeType: "image/png", buffer: png() });
    await uploaded;
    await form.getByRole("img", { name: /已选图片/ }).waitFor();
    await form.getByRole("button", { name: "保存" }).click();
    await toast(page, "添加成功").waitFor();
    await page.getByRole("cell", { name: "一等奖", exact: true }).waitFor();
    await page.getByRole("img", { name: "一等奖的图片" }).waitFor();

    // A second prize with a discount coupon; a discount off the 0.1 step is refused on its field first.
    await page.getByRole("button", { name: "添加奖品" }).click();
    form = page.getByRole("dialog", { name: "添加奖品" });
    await form.getByLabel("名称").fill("二等奖");
    await form.getByLabel("奖励流量(G)").fill("1");
    await form.getByLabel("权重").fill("3");
    await form.getByRole("switch", { name: "赠送折扣券" }).check();
    const discount = form.getByLabel("折扣(0-1，0.9 即九折，0 为免单)");
    await discount.fill("0.85");
    await form.getByRole("button", { name: "保存" }).click();
    await poll(() => discount.getAttribute("aria-invalid"), "true");
    await form.getByText("折扣须在 0 到 1 之间，以 0.1 为单位（0 为免单）").waitFor();
    await discount.fill("0.8");
    await form.getByRole("button", { name: "保存" }).click();
    await toast(page, "添加成功").last().waitFor();
    await page.getByRole("cell", { name: "二等奖", exact: true }).waitFor();
    // 10 × 1 + 1 × 3 = 13 G over weight 4: a draw gives 3.25 G on average (the seed's "325.00 %"),
    // and every draw wins something.
    await poll(() => stat(page, "总权重"), "4");
    expect(await stat(page, "流量×权重(G)")).toBe("13");
    expect(await stat(page, "每次期望流量")).toBe("3.25 G");
    expect(await stat(page, "中奖率")).toBe("100.00%");
    await page.getByRole("cell", { name: "8 折 · 7 天" }).waitFor();

    // A blank of weight 2 (nothing to win): a third of the draws give nothing, 13 / 6 G on average.
    await page.getByRole("button", { name: "添加奖品" }).click();
    form = page.getByRole("dialog", { name: "添加奖品" });
    await form.getByLabel("名称").fill("删除我");
    await form.getByLabel("奖励流量(G)").fill("0");
    await form.getByLabel("权重").fill("2");
    await form.getByRole("button", { name: "保存" }).click();
    await page.getByRole("cell", { name: "删除我", exact: true }).waitFor();
    await poll(() => stat(page, "总权重"), "6");
    expect(await stat(page, "每次期望流量")).toBe("2.17 G");
    expect(await stat(page, "中奖率")).toBe("66.67%");
    await page.locator(".prize-stats").screenshot({ path: join(SHOTS, "admin-prize-stats-1280.png") });

    // Delete asks first.
    await page
      .getByRole("row", { name: /删除我/ })
      .getByRole("button", { name: "删除" })
      .click();
    const confirm = page.getByRole("dialog", { name: "删除确认" });
    await confirm.getByText("确认删除?").waitFor();
    await confirm.getByRole("button", { name: "删除" }).click();
    await toast(page, "删除成功").waitFor();
    await page.getByRole("cell", { name: "删除我", exact: true }).waitFor({ state: "detached" });
    await screenshots(page, "admin-prize");
    await staff.context.close();

    // The customer, from the dashboard.
    const { context, page: me, errors } = await newPage(browser, 1280);
    await loginInBrowser(me, server.url, customerEmail, PASSWORD);
    await me.getByRole("link", { name: /幸运抽奖/ }).click();
    await me.getByRole("heading", { name: "幸运抽奖" }).waitFor();
    const seats = me.locator(".draw-seat");
    await poll(() => seats.count(), 8);
    expect(await seats.locator(".draw-seat-name").allTextContents()).toEqual([
      "一等奖",
      "二等奖",
      "一等奖",
      "二等奖",
      "一等奖",
      "二等奖",
      "一等奖",
      "二等奖",
    ]);
    expect(await me.locator(".draw-seat img").count()).toBe(4);
    expect(await me.locator(".draw-balance").textContent()).toBe("5.00");
    await me.getByRole("cell", { name: "暂无抽奖记录" }).waitFor();

    const drawn = me.waitForResponse((r) => r.url().endsWith("/api/prize/draw"));
    await me.getByRole("button", { name: "抽奖", exact: true }).click();
    const answer = await drawAnswer(await drawn);
    expect(answer.code).toBe(0);
    const won = answer.data;
    // While the highlight runs the button is busy; the result opens once it has landed.
    await me.getByRole("button", { name: "抽奖中…" }).waitFor();
    const result = me.getByRole("dialog", { name: "恭喜中奖" });
    await result.waitFor({ timeout: 15_000 });
    expect(await me.locator('.draw-seat[aria-current="true"]').count()).toBe(1);
    expect(await me.locator('.draw-seat[aria-current="true"]').getAttribute("data-seat")).toBe(
      String(won.seat),
    );
    expect(await me.locator(`.draw-seat[data-seat="${won.seat}"] .draw-seat-name`).textContent()).toBe(
      won.prize.name,
    );
    await result.getByText(`抽中「${won.prize.name}」`).waitFor();
    if (won.couponCode) await result.getByText(won.couponCode).waitFor();
    const balance = 5 - 1 + won.prize.gainTraffic;
    expect(await me.locator(".draw-balance").textContent()).toBe(balance.toFixed(2));
    await screenshots(me, "lucky-draw-result");
    await result.getByRole("button", { name: "知道了" }).click();
    await me.getByRole("cell", { name: won.prize.name }).first().waitFor();

    // With reduced motion it lands at once on the seat the server chose.
    await me.emulateMedia({ reducedMotion: "reduce" });
    const again = me.waitForResponse((r) => r.url().endsWith("/api/prize/draw"));
    await me.getByRole("button", { name: "抽奖", exact: true }).click();
    const second = (await drawAnswer(await again)).data;
    await me.getByRole("dialog", { name: "恭喜中奖" }).waitFor({ timeout: 3000 });
    expect(await me.locator('.draw-seat[aria-current="true"]').getAttribute("data-seat")).toBe(
      String(second.seat),
    );
    await me.getByRole("dialog", { name: "恭喜中奖" }).getByRole("button", { name: "知道了" }).click();
    await poll(() => me.locator(".lucky-draw tbody tr").count(), 2);
    await screenshots(me, "lucky-draw");

    // Short of permanent traffic: the server's message, nothing drawn.
    await server.context.settings.update({ prizeBaseCost: 1000 });
    await reloadPage(me);
    await me.getByRole("button", { name: "抽奖", exact: true }).click();
    await me.getByRole("alert").filter({ hasText: "永久流量不足，无法抽奖" }).waitFor();
    await me.getByRole("link", { name: "去购买流量" }).waitFor();
    expect(await me.getByRole("dialog").count()).toBe(0);
    await screenshots(me, "lucky-draw-refused");
    expect(errors).toEqual([]);
    await context.close();
  });
});
