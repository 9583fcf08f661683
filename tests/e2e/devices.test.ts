/**
 * Devices (issue 29) in Debian's Chromium against a real server: a customer under a limit of one
 * device sees the phone that took the place on 我的账户 (model, OS, client, last seen, the address
 * masked), removes it after confirming, and the next fetch from a new device gets the full
 * subscription, at 1280 and at 390 px. An admin opens 用户管理 → 设备, sets a customer's limit and
 * removes all devices. Screenshots in test-results/. Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { DeviceList } from "../../src/modules/device/schema.ts";
import { DeviceMsg } from "../../src/modules/device/schema.ts";
import { setDeviceLimit } from "../../src/modules/device/service.ts";
import { lineInput } from "../../src/modules/line/schema.ts";
import { saveLine } from "../../src/modules/line/service.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { subscriptionUrl } from "../../src/subscription/clients.ts";
import { loggedInClient, setUserColumns, startTestServer, type TestServer } from "../harness.ts";
import { saveNode } from "../nodes.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;
const LINE_NAME = "浏览器设备线路";

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  const agent = await saveNode(server, { name: "香港", ip: "203.0.113.9", host: "hk.example.com" });
  await saveLine(
    server.context,
    lineInput.parse({ name: LINE_NAME, agentID: agent._id, protocol: "vmesh_tcp", bridge: "none" }),
  );
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text }).last();

/** A Clash fetch from a device: whether it got the lines, and whether it was refused. */
async function fetchFrom(user: UserRow, hwid: string, model: string) {
  const response = await fetch(
    subscriptionUrl(server.url, "clash", { _id: user.id, userkey: user.userkey }),
    {
      headers: {
        "user-agent": "FlClashX/0.3.1",
        "x-hwid": hwid,
        "x-device-os": "Android",
        "x-ver-os": "14",
        "x-device-model": model,
      },
    },
  );
  const body = await response.text();
  return {
    full: body.includes(LINE_NAME),
    refused: response.headers.get("x-hwid-max-devices-reached") === "true",
  };
}

for (const width of [1280, 390]) {
  test(`at ${width} px: the customer removes the old phone on 我的账户 and the new one gets in`, async () => {
    const customer = await loggedInClient(server);
    await setUserColumns(server.context.db, customer.user.id, { traffic: 10 * GB });
    await setDeviceLimit(server.context, customer.user.id, 1);
    expect(await fetchFrom(customer.user, `old-${width}`, "Pixel 6")).toEqual({ full: true, refused: false });
    expect(await fetchFrom(customer.user, `new-${width}`, "Pixel 9")).toEqual({ full: false, refused: true });

    const { context, page, errors } = await newPage(browser, width);
    await loginInBrowser(page, server.url, customer.email, customer.password);
    await page.goto(`${server.url}/#/user_info`);
    await page.getByRole("heading", { name: "我的设备" }).waitFor();
    const devices = page.getByRole("list", { name: "设备列表" });
    const item = devices.getByRole("listitem").filter({ hasText: "Pixel 6" });
    await item.waitFor();
    expect(await item.textContent()).toContain("Android 14 · FlClashX/0.3.1");
    expect(await item.textContent()).toContain("127.0.*.*");
    await page.getByText("已用 1 / 上限 1 台").waitFor();
    await item.scrollIntoViewIfNeeded();
    if (width === 1280) await screenshots(page, "profile-devices");

    // 移除 asks first; cancelling keeps the device.
    await item.getByRole("button", { name: "移除 Pixel 6" }).click();
    const confirm = page.getByRole("dialog", { name: "移除设备" });
    await confirm.waitFor();
    await confirm.getByRole("button", { name: "取消" }).click();
    await confirm.waitFor({ state: "hidden" });
    expect(await item.count()).toBe(1);

    await item.getByRole("button", { name: "移除 Pixel 6" }).click();
    await confirm.getByRole("button", { name: "移除", exact: true }).click();
    await toast(page, DeviceMsg.removed).waitFor();
    await page.getByText("暂无设备").waitFor();

    expect(await fetchFrom(customer.user, `new-${width}`, "Pixel 9")).toEqual({ full: true, refused: false });
    await page.reload();
    await devices.getByRole("listitem").filter({ hasText: "Pixel 9" }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
}

test("用户管理 → 设备: an admin sets a customer's limit and removes all devices", async () => {
  const admin = await loggedInClient(server, { role: "admin" });
  const customer = await loggedInClient(server);
  await setUserColumns(server.context.db, customer.user.id, { traffic: 10 * GB });
  await fetchFrom(customer.user, "tablet", "Galaxy Tab S9");
  await fetchFrom(customer.user, "phone", "Galaxy S24");

  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/admin_userlist`);
  await page.getByLabel("筛选").fill(customer.email);
  await page.getByRole("button", { name: "搜索" }).click();
  await poll(() => page.locator(".admin-list tbody tr").count(), 1);
  await page.getByRole("button", { name: "设备" }).click();
  const dialog = page.getByRole("dialog", { name: `设备 · ${customer.email}` });
  await dialog.getByRole("cell", { name: "Galaxy S24" }).waitFor();
  await dialog.getByRole("cell", { name: "127.0.0.1" }).first().waitFor();

  await dialog.getByLabel("设备数上限").fill("65");
  await dialog.getByRole("button", { name: "保存上限" }).click();
  await dialog.getByText(DeviceMsg.limitRange).waitFor();
  await dialog.getByLabel("设备数上限").fill("2");
  await dialog.getByRole("button", { name: "保存上限" }).click();
  await toast(page, DeviceMsg.limitSaved).waitFor();
  await dialog.getByText("已用 2 / 上限 2 台").waitFor();
  await screenshots(page, "admin-user-devices");

  await dialog.getByRole("button", { name: "全部移除" }).click();
  await page.getByRole("dialog", { name: "全部移除" }).getByRole("button", { name: "全部移除" }).click();
  await toast(page, DeviceMsg.removedAll).waitFor();
  await dialog.getByText("暂无设备").waitFor();
  const list = await admin.client.ok<DeviceList>("/api/admin/users/devices", { uid: customer.user.id });
  expect(list).toMatchObject({ limit: 2, override: 2, devices: [] });
  expect(errors).toEqual([]);
  await context.close();
}, 60_000);
