/**
 * Focus and keyboard in Debian's Chromium (issue 26 §D15): every dialog gives the focus back to
 * the control that opened it, closed with its 关闭 button or with Esc (the QR dialog opened from
 * the 订阅 ▾ menu, the subscription reset's confirmation, the shop's order confirmation and pay
 * QR dialog, a back-office form dialog and a delete confirmation); the 订阅 ▾ dropdown is a menu button (role="menu" / "menuitem"), its items
 * reached with ArrowDown / ArrowUp / Home / End, Esc closing it onto its button, Enter choosing.
 * Needs the SPA built first (`bun scripts/build-web.ts`). One browser, one server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Locator, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser, findUserById } from "../../src/modules/user/service.ts";
import { makeCombo, startShopServer } from "../commerce.ts";
import { type ApiClient, loggedInClient, setUserColumns, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

const PASSWORD = "password123";
const PACK = "流量套餐 100G";

let server: TestServer;
let browser: Browser;
let admin: { client: ApiClient; email: string; password: string };

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
  admin = await loggedInClient(server, { role: "admin" });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function newCustomer(): Promise<UserRow> {
  const email = uniqueEmail("focus");
  const user = await createUser(server.context, { email, passwordDigest: transformPassword(PASSWORD) });
  await setUserColumns(server.context.db, user.id, { traffic: 50 * GB });
  return (await findUserById(server.context, user.id)) as UserRow;
}

/** What has the focus: its accessible label or text, for a readable failure. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement;
    if (!element || element === document.body) return "<body>";
    return element.getAttribute("aria-label") ?? element.textContent?.trim() ?? element.tagName;
  });

/** Waits until `control` has the focus. */
async function expectFocusOn(control: Locator) {
  await poll(() => control.evaluate((element) => element === document.activeElement), true);
}

/** Customer on the dashboard with the iOS tab chosen: Shadowrocket's 订阅 ▾ menu button. */
async function shadowrocketMenu(page: Page) {
  const user = await newCustomer();
  await loginInBrowser(page, server.url, user.email, PASSWORD);
  const picker = page.getByRole("region", { name: "选择平台与客户端" });
  await picker.getByRole("tab", { name: "iOS" }).click();
  return { user, button: picker.getByRole("button", { name: "订阅 Shadowrocket" }) };
}

describe("focus goes back to the opener", () => {
  test("the QR dialog and the reset confirmation, opened from the 订阅 ▾ menu", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    const { button } = await shadowrocketMenu(page);
    const qr = page.getByRole("dialog", { name: "Shadowrocket 扫码订阅" });

    // 关闭 (the footer's button).
    await button.click();
    await page.getByRole("menuitem", { name: "扫描二维码" }).click();
    await qr.waitFor();
    await qr.getByRole("button", { name: "关闭" }).last().click();
    await poll(() => qr.count(), 0);
    await expectFocusOn(button);

    // Esc.
    await button.click();
    await page.getByRole("menuitem", { name: "扫描二维码" }).click();
    await qr.waitFor();
    await page.keyboard.press("Escape");
    await poll(() => qr.count(), 0);
    await expectFocusOn(button);

    // The reset's confirmation: 取消, then Esc.
    const confirm = page.getByRole("dialog", { name: "重置订阅链接" });
    for (const close of ["button", "Escape"] as const) {
      await button.click();
      await page.getByRole("menuitem", { name: "重置订阅链接" }).click();
      await confirm.waitFor();
      if (close === "button") await confirm.getByRole("button", { name: "取消" }).click();
      else await page.keyboard.press("Escape");
      await poll(() => confirm.count(), 0);
      await expectFocusOn(button);
    }
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("the order confirmation and the pay QR dialog, opened by 立即购买 (disabled while the order is made)", async () => {
    await makeCombo(server, { name: PACK, price: 15, traffic: 100 * GB });
    const user = await newCustomer();
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, user.email, PASSWORD);
    await page.goto(`${server.url}/#/shop`);
    const buy = page.getByRole("article", { name: PACK }).getByRole("button", { name: "立即购买" });
    const confirm = page.getByRole("dialog", { name: "确认订单" });

    await buy.click();
    await confirm.waitFor();
    await page.keyboard.press("Escape");
    await poll(() => confirm.count(), 0);
    await expectFocusOn(buy);

    // 确认支付 replaces the confirmation with the QR dialog; its 关闭 comes back to 立即购买 too.
    await buy.click();
    await confirm.getByRole("button", { name: "确认支付" }).click();
    const qr = page.getByRole("dialog", { name: "支付宝扫码支付" });
    await qr.waitFor();
    await qr.getByRole("button", { name: "关闭" }).last().click();
    await poll(() => qr.count(), 0);
    await expectFocusOn(buy);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("a back-office form dialog and a delete confirmation", async () => {
    const saved = await admin.client.call("/api/admin/permissions/update", { name: "焦点测试", desc: "" });
    expect(saved.code).toBe(0);
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, admin.email, admin.password);
    await page.goto(`${server.url}/#/admin_permissions`);

    // 添加 → 添加权限: the × (关闭), then Esc.
    const add = page.getByRole("button", { name: "添加", exact: true });
    const form = page.getByRole("dialog", { name: "添加权限" });
    for (const close of ["button", "Escape"] as const) {
      await add.click();
      await form.waitFor();
      if (close === "button") await form.getByRole("button", { name: "关闭" }).click();
      else await page.keyboard.press("Escape");
      await poll(() => form.count(), 0);
      await expectFocusOn(add);
    }

    // 删除 → 删除确认: the × (关闭), then Esc; the permission stays.
    const row = page.getByRole("row").filter({ hasText: "焦点测试" });
    const remove = row.getByRole("button", { name: "删除" });
    const confirm = page.getByRole("dialog", { name: "删除确认" });
    for (const close of ["button", "Escape"] as const) {
      await remove.click();
      await confirm.waitFor();
      if (close === "button") await confirm.getByRole("button", { name: "关闭" }).click();
      else await page.keyboard.press("Escape");
      await poll(() => confirm.count(), 0);
      await expectFocusOn(remove);
    }
    await expect(row.count()).resolves.toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});

describe("the 订阅 ▾ menu", () => {
  test("menu roles, arrow keys, Home / End, Esc back to the button, Enter chooses", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const { user, button } = await shadowrocketMenu(page);
    expect(await button.getAttribute("aria-haspopup")).toBe("menu");
    expect(await button.getAttribute("aria-expanded")).toBe("false");

    // Enter on the button opens the menu on its first item.
    await button.focus();
    await page.keyboard.press("Enter");
    const menu = page.getByRole("menu", { name: "订阅 Shadowrocket" });
    await menu.waitFor();
    expect(await button.getAttribute("aria-expanded")).toBe("true");
    expect(await menu.getByRole("menuitem").allTextContents()).toEqual([
      "一键导入",
      "复制订阅",
      "扫描二维码",
      "重置订阅链接",
    ]);
    await poll(() => focused(page), "一键导入");

    // The arrows walk the items and wrap; Home and End jump to the ends.
    const steps: [string, string][] = [
      ["ArrowDown", "复制订阅"],
      ["ArrowDown", "扫描二维码"],
      ["ArrowDown", "重置订阅链接"],
      ["ArrowDown", "一键导入"],
      ["ArrowUp", "重置订阅链接"],
      ["ArrowUp", "扫描二维码"],
      ["Home", "一键导入"],
      ["End", "重置订阅链接"],
    ];
    for (const [key, item] of steps) {
      await page.keyboard.press(key);
      expect(await focused(page)).toBe(item);
    }
    await screenshots(page, "subscribe-menu-keyboard");
    // Tab does not walk into the items: they are reached with the arrows only.
    expect(
      await menu.getByRole("menuitem").evaluateAll((items) => items.map((item) => item.tabIndex)),
    ).toEqual([-1, -1, -1, -1]);

    // Esc closes the menu onto its button.
    await page.keyboard.press("Escape");
    await poll(() => menu.count(), 0);
    await expectFocusOn(button);
    expect(await button.getAttribute("aria-expanded")).toBe("false");

    // ArrowUp on the button opens it on the last item, ArrowDown on the first.
    await page.keyboard.press("ArrowUp");
    await poll(() => focused(page), "重置订阅链接");
    await page.keyboard.press("Escape");
    await page.keyboard.press("ArrowDown");
    await poll(() => focused(page), "一键导入");

    // Enter on 复制订阅 chooses it: the link is copied, the menu closes onto its button.
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "已复制到剪贴板" }).waitFor();
    await poll(
      () => page.evaluate(() => navigator.clipboard.readText()),
      `${server.url}/api/subscript/ss/${user.id}/${user.userkey}`,
    );
    await poll(() => menu.count(), 0);
    await expectFocusOn(button);

    // Enter on 扫描二维码 opens the QR dialog; Esc there comes back to the button as well.
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    expect(await focused(page)).toBe("扫描二维码");
    await page.keyboard.press("Enter");
    const qr = page.getByRole("dialog", { name: "Shadowrocket 扫码订阅" });
    await qr.waitFor();
    await page.keyboard.press("Escape");
    await poll(() => qr.count(), 0);
    await expectFocusOn(button);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
