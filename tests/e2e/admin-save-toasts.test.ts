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

const field = (form: Locator, label: string) => form.getByLabel(label, { exact: true });

/** A list screen with an add/edit dialog: how to fill a new record, and the text its row shows. */
interface Screen {
  route: string;
  heading: string;
  /** The header button that opens 添加<thing>. */
  addButton: string;
  thing: string;
  row: string;
  fill: (form: Locator) => Promise<void>;
}

const SCREENS: Screen[] = [
  {
    route: "admin_permissions",
    heading: "权限管理",
    addButton: "添加",
    thing: "权限",
    row: "toast 权限",
    fill: (form) => field(form, "名称").fill("toast 权限"),
  },
  {
    route: "admin_entrys",
    heading: "入口管理",
    addButton: "添加",
    thing: "入口",
    row: "toast 入口",
    fill: async (form) => {
      await field(form, "名称").fill("toast 入口");
      await field(form, "默认IP").fill("198.51.100.60");
    },
  },
  {
    route: "admin_agents",
    heading: "节点管理",
    addButton: "添加",
    thing: "节点",
    row: "toast 节点",
    fill: async (form) => {
      await field(form, "名称").fill("toast 节点");
      await field(form, "IP").fill("203.0.113.60");
    },
  },
  {
    route: "admin_agentLines",
    heading: "线路管理",
    addButton: "添加",
    thing: "线路",
    row: "toast 线路",
    fill: async (form) => {
      await field(form, "线路名称").fill("toast 线路");
      await field(form, "节点").selectOption({ label: "toast 节点（v2ray）" });
      await field(form, "桥接方式").selectOption({ label: "直连" });
    },
  },
  {
    route: "admin_combos",
    heading: "商品管理",
    addButton: "添加",
    thing: "商品",
    row: "toast 商品",
    fill: (form) => field(form, "名称").fill("toast 商品"),
  },
  {
    route: "admin_coupon",
    heading: "优惠券管理",
    addButton: "添加",
    thing: "优惠券",
    row: "TOAST1",
    fill: async (form) => {
      await field(form, "名称").fill("toast 优惠券");
      await field(form, "券码").fill("TOAST1");
    },
  },
  {
    route: "admin_prize",
    heading: "抽奖管理",
    addButton: "添加奖品",
    thing: "奖品",
    row: "toast 奖品",
    fill: (form) => field(form, "名称").fill("toast 奖品"),
  },
];

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

    for (const screen of SCREENS) {
      await openScreen(page, screen.route, screen.heading);
      await page.getByRole("button", { name: screen.addButton, exact: true }).click();
      const form = dialog(page, `添加${screen.thing}`);
      await screen.fill(form);
      await saveExpecting(page, form, "添加成功");
      await editAndSave(page, screen.row, `编辑${screen.thing}`);
    }

    // A copy is a new record.
    await openScreen(page, "admin_agents", "节点管理");
    await rowOf(page, "toast 节点").getByRole("button", { name: "复制", exact: true }).click();
    const copy = dialog(page, "添加节点");
    await field(copy, "名称").fill("toast 节点 副本");
    await saveExpecting(page, copy, "添加成功");

    // Users are only edited.
    await openScreen(page, "admin_userlist", "用户管理");
    await editAndSave(page, customer.email, `编辑用户 · ${customer.email}`);

    expect(errors).toEqual([]);
    await context.close();
  });
});
