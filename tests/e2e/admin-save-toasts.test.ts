/**
 * The back office's add/edit dialogs in Debian's Chromium (issue 26 D14): saving a new record
 * toasts 添加成功 and saving a stored one 更新成功, the same words on every screen — permissions,
 * entries, nodes, lines, combos, coupons, prizes and users. Needs the SPA built first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Locator, Page } from "playwright-core";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage } from "./chromium.ts";

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

const dialog = (page: Page, title: string) => page.getByRole("dialog", { name: title });
const rowOf = (page: Page, text: string) => page.getByRole("row").filter({ hasText: text });
/**
 * Saves the open form: it closes and one new toast says exactly `expected`. Toasts already shown
 * are marked first, so one left from the save before cannot pass for this one.
 */
async function saveExpecting(page: Page, form: Locator, expected: "添加成功" | "更新成功") {
  await page.locator(".toast-msg").evaluateAll((shown) => {
    for (const toast of shown) toast.setAttribute("data-seen", "");
  });
  await form.getByRole("button", { name: "保存" }).click();
  await form.waitFor({ state: "hidden" });
  const fresh = page.locator(".toast-msg:not([data-seen])");
  await fresh.first().waitFor();
  expect(await fresh.allTextContents()).toEqual([expected]);
}

/** Opens 编辑 on the row showing `name` and saves it unchanged. */
async function editAndSave(page: Page, name: string, title: string) {
  await rowOf(page, name).getByRole("button", { name: "编辑" }).click();
  await saveExpecting(page, dialog(page, title), "更新成功");
}

async function openScreen(page: Page, route: string, heading: string) {
  await page.goto(`${server.url}/#/${route}`);
  await page.getByRole("heading", { name: heading }).waitFor();
}

describe("add and edit toasts", () => {
  test("添加成功 for a new record, 更新成功 for a stored one, on every admin screen", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const customer = await loggedInClient(server);
    const { page, context, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, admin.email, admin.password);
    const field = (form: Locator, label: string) => form.getByLabel(label, { exact: true });

    await openScreen(page, "admin_permissions", "权限管理");
    await page.getByRole("button", { name: "添加" }).click();
    let form = dialog(page, "添加权限");
    await field(form, "名称").fill("toast 权限");
    await saveExpecting(page, form, "添加成功");
    await editAndSave(page, "toast 权限", "编辑权限");

    await openScreen(page, "admin_entrys", "入口管理");
    await page.getByRole("button", { name: "添加" }).click();
    form = dialog(page, "添加入口");
    await field(form, "名称").fill("toast 入口");
    await field(form, "默认IP").fill("198.51.100.60");
    await saveExpecting(page, form, "添加成功");
    await editAndSave(page, "toast 入口", "编辑入口");

    await openScreen(page, "admin_agents", "节点管理");
    await page.getByRole("button", { name: "添加" }).click();
    form = dialog(page, "添加节点");
    await field(form, "名称").fill("toast 节点");
    await field(form, "IP").fill("203.0.113.60");
    await saveExpecting(page, form, "添加成功");
    await editAndSave(page, "toast 节点", "编辑节点");
    // A copy is a new node.
    await rowOf(page, "toast 节点").getByRole("button", { name: "复制", exact: true }).click();
    form = dialog(page, "添加节点");
    await field(form, "名称").fill("toast 节点 副本");
    await saveExpecting(page, form, "添加成功");

    await openScreen(page, "admin_agentLines", "线路管理");
    await page.getByRole("button", { name: "添加" }).click();
    form = dialog(page, "添加线路");
    await field(form, "线路名称").fill("toast 线路");
    await field(form, "节点").selectOption({ label: "toast 节点（v2ray）" });
    await field(form, "桥接方式").selectOption({ label: "直连" });
    await saveExpecting(page, form, "添加成功");
    await editAndSave(page, "toast 线路", "编辑线路");

    await openScreen(page, "admin_combos", "商品管理");
    await page.getByRole("button", { name: "添加" }).click();
    form = dialog(page, "添加商品");
    await field(form, "名称").fill("toast 商品");
    await saveExpecting(page, form, "添加成功");
    await editAndSave(page, "toast 商品", "编辑商品");

    await openScreen(page, "admin_coupon", "优惠券管理");
    await page.getByRole("button", { name: "添加" }).click();
    form = dialog(page, "添加优惠券");
    await field(form, "名称").fill("toast 优惠券");
    await field(form, "券码").fill("TOAST1");
    await saveExpecting(page, form, "添加成功");
    await editAndSave(page, "TOAST1", "编辑优惠券");

    await openScreen(page, "admin_prize", "抽奖管理");
    await page.getByRole("button", { name: "添加奖品" }).click();
    form = dialog(page, "添加奖品");
    await field(form, "名称").fill("toast 奖品");
    await saveExpecting(page, form, "添加成功");
    await editAndSave(page, "toast 奖品", "编辑奖品");

    await openScreen(page, "admin_userlist", "用户管理");
    await editAndSave(page, customer.email, `编辑用户 · ${customer.email}`);

    expect(errors).toEqual([]);
    await context.close();
  });
});
