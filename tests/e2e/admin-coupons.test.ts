/**
 * The coupon manager and the coupon records in Debian's Chromium, as a yunying user: 10 Taobao
 * coupons made in one batch and their codes downloaded as a.txt; a coupon of another type added
 * (a refused amount shown on its field), copied without its id and code, deleted after 确认删除?;
 * every listed coupon deleted after the danger confirmation; the records page with 已使用 and
 * 已恢复. Screenshots at 1280 and 390 px land in test-results/. Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { tx } from "../../src/db/db.ts";
import { GB } from "../../src/lib/traffic.ts";
import type { Coupon } from "../../src/modules/coupon/schema.ts";
import {
  type CouponRow,
  findCouponByCode,
  recordCouponUse,
  restoreCouponUse,
} from "../../src/modules/coupon/service.ts";
import { makeCoupon } from "../commerce.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf, poll, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;
let staff: Awaited<ReturnType<typeof loggedInClient>>;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  staff = await loggedInClient(server, { role: "yunying" });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text }).last();
/** Waits until an earlier toast of that text is gone, so the next one seen is the next action's. */
const noToast = (page: Page, text: string) =>
  page.locator(".toast", { hasText: text }).first().waitFor({ state: "detached" });
const dialog = (page: Page, title: string) => page.getByRole("dialog", { name: title });
const listed = async () => (await staff.client.call<Coupon[]>("/api/yunying/coupon/coupon_list", {})).data;
const bodyRows = (page: Page) => page.locator(".admin-list tbody tr");

test("a yunying user batch-creates 10 Taobao coupons, downloads a.txt, edits, copies and deletes", async () => {
  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, staff.email, staff.password);
  await page.goto(`${server.url}/#/admin_coupon`);
  await page.getByRole("heading", { name: "优惠券管理" }).waitFor();
  await page.getByRole("cell", { name: "暂无记录" }).waitFor();
  expect(await page.getByRole("button", { name: "下载所有券码" }).count()).toBe(0);

  // 淘宝 on: the download button appears, and 添加 makes a batch with the seed's defaults.
  await page.getByRole("checkbox", { name: "淘宝" }).check();
  await page.getByRole("button", { name: "下载所有券码" }).waitFor();
  await page.getByRole("button", { name: "添加" }).click();
  const form = dialog(page, "批量生成淘宝优惠券");
  await form.waitFor();
  expect(await form.getByLabel("类型").inputValue()).toBe("freeUse");
  expect(await form.getByLabel("流量(G)").inputValue()).toBe("8");
  expect(await form.getByLabel("每人限用次数").inputValue()).toBe("1");
  expect(await form.getByLabel("券码").count()).toBe(0);
  await form.getByLabel("名称").fill("淘宝 8G");
  await form.getByLabel("数量").fill("10");
  await screenshots(page, "admin-coupon-batch-form");
  const sent = page.waitForRequest((r) => r.url().endsWith("/api/yunying/coupon/batch_create"));
  await form.getByRole("button", { name: "保存" }).click();
  expect(payloadOf((await sent).postData())).toMatchObject({
    name: "淘宝 8G",
    type: "freeUse",
    taobao: true,
    trafficG: 8,
    useNumPerUser: 1,
    count: 10,
  });
  await toast(page, "添加成功").waitFor();
  await form.waitFor({ state: "hidden" });
  await poll(() => bodyRows(page).count(), 10);

  const made = (await listed()).filter((c) => c.taobao);
  expect(made).toHaveLength(10);
  for (const coupon of made) expect(coupon).toMatchObject({ type: "freeUse", traffic: 8 * GB });
  const first = bodyRows(page).first();
  expect((await first.getByRole("cell").allInnerTexts()).slice(0, 9)).toEqual([
    "1",
    "淘宝 8G",
    "流量券",
    (made[0] as Coupon).code,
    "8.00 G",
    "1",
    "1",
    "0",
    "永不过期",
  ]);

  // a.txt holds the listed codes, one per line.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "下载所有券码" }).click(),
  ]);
  expect(download.suggestedFilename()).toBe("a.txt");
  const codes = readFileSync(await download.path(), "utf8")
    .trim()
    .split("\n");
  expect(codes.sort()).toEqual(made.map((c) => c.code).sort());
  for (const code of codes) expect(code).toMatch(/^[A-Z]{6}$/);
  await screenshots(page, "admin-coupons");

  // Without 淘宝, a cash coupon: a refused amount is shown on its field and nothing is sent.
  await page.getByRole("checkbox", { name: "淘宝" }).uncheck();
  await page.getByLabel("类型").selectOption("cash");
  await page.getByRole("cell", { name: "暂无记录" }).waitFor();
  await page.getByRole("button", { name: "添加" }).click();
  const add = dialog(page, "添加优惠券");
  expect(await add.getByLabel("类型").inputValue()).toBe("cash");
  let saves = 0;
  page.on("request", (r) => {
    if (r.url().endsWith("/api/yunying/coupon/update_coupon")) saves += 1;
  });
  await add.getByLabel("券码").fill("CASH5");
  await add.getByLabel("金额(元)").fill("0");
  await add.getByRole("button", { name: "保存" }).click();
  await add.getByText("现金券金额必须大于 0").waitFor();
  expect(saves).toBe(0);
  await add.getByLabel("金额(元)").fill("5");
  await add.getByLabel("过期时间").fill("2031-12-31");
  await noToast(page, "添加成功");
  await add.getByRole("button", { name: "保存" }).click();
  await toast(page, "添加成功").waitFor();
  const cashRow = page.getByRole("row").filter({ hasText: "CASH5" });
  await cashRow.waitFor();
  expect((await cashRow.getByRole("cell").allInnerTexts()).slice(2, 9)).toEqual([
    "现金券",
    "CASH5",
    "5.00 元",
    "1",
    "1",
    "0",
    "2031-12-31",
  ]);

  // A code already taken comes back from the server as the failure toast.
  await page.getByRole("button", { name: "添加" }).click();
  await add.getByLabel("券码").fill("cash5");
  await add.getByLabel("金额(元)").fill("1");
  await add.getByRole("button", { name: "保存" }).click();
  await toast(page, "配置优惠券失败:优惠券码已存在: cash5").waitFor();
  await add.getByRole("button", { name: "取消" }).click();

  // Copy keeps the fields but not the id or the code; editing keeps both.
  await cashRow.getByRole("button", { name: "复制" }).click();
  expect(await add.getByLabel("券码").inputValue()).toBe("");
  expect(await add.getByLabel("金额(元)").inputValue()).toBe("5");
  await add.getByRole("button", { name: "取消" }).click();
  await cashRow.getByRole("button", { name: "编辑" }).click();
  const edit = dialog(page, "编辑优惠券");
  expect(await edit.getByLabel("券码").inputValue()).toBe("CASH5");
  expect(await edit.getByLabel("过期时间").inputValue()).toBe("2031-12-31");
  await edit.getByLabel("每人限用次数").fill("0");
  const edited = page.waitForRequest((r) => r.url().endsWith("/api/yunying/coupon/update_coupon"));
  await edit.getByRole("button", { name: "保存" }).click();
  const editPayload = payloadOf((await edited).postData());
  const stored = (await listed()).find((c) => c.code === "CASH5") as Coupon;
  // The unchanged day goes back as the stored instant, so it cannot move with the browser's zone.
  expect(editPayload).toMatchObject({ _id: stored._id, useNumPerUser: 0, expireTime: stored.expireTime });
  await poll(async () => (await cashRow.getByRole("cell").allInnerTexts())[5], "不限");

  await cashRow.getByRole("button", { name: "删除" }).click();
  const confirmOne = dialog(page, "删除确认");
  await confirmOne.getByText("确认删除?").waitFor();
  await confirmOne.getByRole("button", { name: "删除" }).click();
  await toast(page, "删除优惠券成功").waitFor();
  await cashRow.waitFor({ state: "detached" });
  expect(await findCouponByCode(server.context.db, "CASH5")).toBeNull();

  // 删除所选 deletes every coupon listed (the 10 Taobao ones), after the danger confirmation.
  await makeCoupon(server, { type: "freeUse", code: "KEEPME", trafficG: 1 });
  await page.getByLabel("类型").selectOption("freeUse");
  await page.getByRole("checkbox", { name: "淘宝" }).check();
  await poll(() => bodyRows(page).count(), 10);
  await page.getByRole("button", { name: "删除所选" }).click();
  const danger = dialog(page, "危险，请谨慎操作");
  await danger.getByText("确认删除所有当前所选优惠券?").waitFor();
  await danger.getByRole("button", { name: "全部删除" }).click();
  await toast(page, "删除所有优惠券成功").waitFor();
  await page.getByRole("cell", { name: "暂无记录" }).waitFor();
  expect((await listed()).map((c) => c.code)).toEqual(["KEEPME"]);

  await context.close();
  expect(errors).toEqual([]);
});

test("at 390 px the table scrolls sideways and its 操作 column stays in view", async () => {
  for (let i = 0; i < 3; i++)
    await makeCoupon(server, { name: `窄屏 ${i}`, type: "discount", discount: 0.85 });
  const { context, page, errors } = await newPage(browser, 390);
  await loginInBrowser(page, server.url, staff.email, staff.password);
  await page.goto(`${server.url}/#/admin_coupon`);
  await page.getByLabel("类型").selectOption("discount");
  await poll(() => bodyRows(page).count(), 3);
  expect(await bodyRows(page).first().getByRole("cell").nth(4).textContent()).toBe("8.5折");
  const wrap = page.locator(".admin-list .table-wrap");
  expect(await wrap.evaluate((node) => node.scrollWidth > node.clientWidth)).toBe(true);
  const edit = bodyRows(page).first().getByRole("button", { name: "编辑" });
  const box = await edit.boundingBox();
  expect(box && box.x + box.width <= 390).toBe(true);
  await context.close();
  expect(errors).toEqual([]);
});

test("the records page shows the latest uses, 已使用 or 已恢复, as many as asked for", async () => {
  const customer = await loggedInClient(server);
  const coupon = (await findCouponByCode(
    server.context.db,
    (
      await makeCoupon(server, { type: "freeTime", code: "DAYS7", vipDay: 7, NumberOfAuthorizations: 0 })
    ).code,
  )) as CouponRow;
  const traffic = (await findCouponByCode(
    server.context.db,
    (
      await makeCoupon(server, { type: "freeUse", code: "GIFT2G", trafficG: 2, NumberOfAuthorizations: 0 })
    ).code,
  )) as CouponRow;
  const db = server.context.db;
  const now = Date.now();
  await tx(db, async () => {
    await recordCouponUse(db, {
      coupon: traffic,
      userId: customer.user.id,
      addTraffic: 2 * GB,
      now: now - 2000,
    });
    const restored = await recordCouponUse(db, {
      coupon,
      userId: customer.user.id,
      addDay: 7,
      now: now - 1000,
    });
    await restoreCouponUse(db, restored, now);
  });

  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, staff.email, staff.password);
  await page.goto(`${server.url}/#/coupon_records`);
  await page.getByRole("heading", { name: "优惠券记录" }).waitFor();
  expect(await page.getByLabel("数量").inputValue()).toBe("100");
  await poll(() => bodyRows(page).count(), 2);
  const texts = async () =>
    (await bodyRows(page).all()).map(async (row) => {
      const cells = await row.getByRole("cell").allInnerTexts();
      return [cells[0], cells[1], cells[2], cells[4]];
    });
  expect(await Promise.all(await texts())).toEqual([
    [customer.email, "DAYS7", "7 天", "已恢复"],
    [customer.email, "GIFT2G", "2.00 G", "已使用"],
  ]);
  await screenshots(page, "coupon-records");

  await page.getByLabel("数量").fill("1");
  await page.getByRole("button", { name: "查询" }).click();
  await poll(() => bodyRows(page).count(), 1);
  expect(await bodyRows(page).first().getByRole("cell").nth(1).textContent()).toBe("DAYS7");
  await context.close();
  expect(errors).toEqual([]);

  // A customer cannot read them.
  const answer = await customer.client.call("/api/yunying/coupon/coupon_record_list", {});
  expect(answer.code).toBe(1003);
});
