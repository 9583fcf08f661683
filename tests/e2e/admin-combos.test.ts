/**
 * The commerce back office in Debian's Chromium: an admin adds a combo through the form (traffic
 * typed in G, sent in bytes) and a customer then finds it in the shop; a value the server's schema
 * refuses is shown in Chinese on its field, which gets the focus, and nothing is sent (issue 12);
 * delete asks first. Screenshots of the four screens at 1280 and 390 px land
 * in test-results/. Needs the SPA built first (`bun run build:web`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { Combo } from "../../src/modules/combo/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser, findUserByEmail } from "../../src/modules/user/service.ts";
import { ApiClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf, poll, SHOTS } from "./chromium.ts";

const PASSWORD = "password123";

let server: TestServer;
let browser: Browser;
let adminEmail: string;
let customerEmail: string;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  // Customers' orders need a way to pay: 微信 through the sandbox (支付宝 is left to the settings test).
  await server.context.settings.update({ sandbox_pay: true, wxpay: "sandbox" });
  adminEmail = uniqueEmail("admin");
  customerEmail = uniqueEmail("customer");
  const passwordDigest = transformPassword(PASSWORD);
  await createUser(server.context, { email: adminEmail, passwordDigest, type: "admin" });
  await createUser(server.context, { email: customerEmail, passwordDigest, type: "normal" });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const login = (page: Page, email: string) => loginInBrowser(page, server.url, email, PASSWORD);

const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text });
/** The error line an input is marked invalid with (aria-invalid, aria-describedby). */
async function errorOf(page: Page, input: Locator): Promise<string | null> {
  await poll(() => input.getAttribute("aria-invalid"), "true");
  const id = await input.getAttribute("aria-describedby");
  return page.locator(`[id="${id}"]`).textContent();
}
const isFocused = (input: Locator) => input.evaluate((node) => node === document.activeElement);
const dialog = (page: Page, title: string) => page.getByRole("dialog", { name: title });

describe("admin combos", () => {
  test("an admin adds a combo in G and a customer finds it in the shop", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await login(page, adminEmail);
    await page.goto(`${server.url}/#/admin_combos`);
    await page.getByRole("heading", { name: "商品管理" }).waitFor();
    await page.getByRole("cell", { name: "暂无记录" }).waitFor();

    // The form opens with the seed's new-combo defaults (seed 001 §9).
    await page.getByRole("button", { name: "添加" }).click();
    const form = dialog(page, "添加商品");
    await form.waitFor();
    expect(await form.getByLabel("价格(元)").inputValue()).toBe("0.01");
    expect(await form.getByLabel("流量(G)").inputValue()).toBe("1");
    expect(await form.getByLabel("VIP天数").inputValue()).toBe("1");
    expect(await form.getByLabel("每日额度(G)").inputValue()).toBe("50");
    expect(await form.getByLabel("速度").inputValue()).toBe("150Mbps");
    expect(await form.getByLabel("权限时长(天)").inputValue()).toBe("360");

    // What the server's schema refuses is shown on its field, focused, before anything is sent.
    let saves = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/admin/combo/update_combo")) saves += 1;
    });
    await form.getByLabel("名称").fill("e2e 流量包");
    await form.getByLabel("价格(元)").fill("12.555");
    await form.getByRole("button", { name: "保存" }).click();
    expect(await errorOf(page, form.getByLabel("价格(元)"))).toBe("金额最多两位小数");
    await poll(() => isFocused(form.getByLabel("价格(元)")), true);
    expect(saves).toBe(0);

    // A traffic pack: VIP days 0 hides the daily quota; traffic travels in bytes.
    await form.getByLabel("价格(元)").fill("12.5");
    await form.getByLabel("流量(G)").fill("30");
    await form.getByLabel("VIP天数").fill("0");
    expect(await form.getByLabel("每日额度(G)").count()).toBe(0);
    const saved = page.waitForRequest((request) => request.url().endsWith("/api/admin/combo/update_combo"));
    await form.getByRole("button", { name: "保存" }).click();
    const sent = payloadOf((await saved).postData());
    expect(sent).toMatchObject({ name: "e2e 流量包", price: 12.5, traffic: 30 * GB, vipDuration: 0 });
    expect(sent).not.toHaveProperty("limit");
    expect(sent).not.toHaveProperty("_id");
    await toast(page, "添加成功").waitFor();
    await form.waitFor({ state: "hidden" });

    const row = page.getByRole("row").filter({ hasText: "e2e 流量包" });
    await row.waitFor();
    const cells = await row.getByRole("cell").allInnerTexts();
    expect(cells.slice(1, 9)).toEqual(["e2e 流量包", "12.50", "30.00", "0", "0", "0", "无", "360"]);

    const stored = (await new ApiClient(server.url).call<Combo[]>("/api/shop/list")).data;
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ name: "e2e 流量包", price: 12.5, traffic: 30 * GB });

    // Editing shows the stored bytes back in G.
    await row.getByRole("button", { name: "编辑" }).click();
    const edit = dialog(page, "编辑商品");
    expect(await edit.getByLabel("流量(G)").inputValue()).toBe("30");
    await edit.getByRole("button", { name: "取消" }).click();
    await edit.waitFor({ state: "hidden" });
    await context.close();
    expect(errors).toEqual([]);

    // A customer sees it in the shop with its traffic in GB.
    const shopper = await newPage(browser, 1280);
    await login(shopper.page, customerEmail);
    await shopper.page.goto(`${server.url}/#/shop`);
    const card = shopper.page.getByRole("article", { name: "e2e 流量包" });
    await card.waitFor();
    expect(await card.textContent()).toContain("30.00 G");
    await shopper.context.close();
    expect(shopper.errors).toEqual([]);
  });

  test("delete asks first; cancelling keeps the combo, confirming removes it", async () => {
    const admin = new ApiClient(server.url);
    expect((await admin.login(adminEmail, PASSWORD)).code).toBe(0);
    const combo = await admin.call<Combo>("/api/admin/combo/update_combo", {
      name: "待删除商品",
      price: 1,
      traffic: GB,
      vipDuration: 0,
    });
    expect(combo.code).toBe(0);

    const { context, page, errors } = await newPage(browser, 1280);
    await login(page, adminEmail);
    await page.goto(`${server.url}/#/admin_combos`);
    const row = page.getByRole("row").filter({ hasText: "待删除商品" });
    await row.getByRole("button", { name: "删除" }).click();
    const confirm = dialog(page, "删除确认");
    await confirm.getByRole("button", { name: "取消" }).click();
    await confirm.waitFor({ state: "hidden" });
    expect(await row.count()).toBe(1);

    await row.getByRole("button", { name: "删除" }).click();
    await confirm.getByRole("button", { name: "删除" }).click();
    await toast(page, "删除成功").waitFor();
    await row.waitFor({ state: "detached" });
    const left = (await admin.call<Combo[]>("/api/shop/list")).data.map((c) => c._id);
    expect(left).not.toContain(combo.data._id);
    await context.close();
    expect(errors).toEqual([]);
  });

  /** Clicks 保存 on the settings form; returns what was sent once the server has answered. */
  async function save(page: Page): Promise<Record<string, unknown>> {
    const response = page.waitForResponse((r) => r.url().endsWith("/api/admin/config/set_config"));
    await page.getByRole("button", { name: "保存" }).click();
    const answered = await response;
    await answered.finished();
    return payloadOf(answered.request().postData());
  }

  test("settings: only changed fields are sent, a secret's mask keeps it, 恢复 reloads", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await login(page, adminEmail);
    await page.goto(`${server.url}/#/admin_config`);
    const alipay = page.getByLabel("支付宝收款账户");
    await alipay.waitFor();
    expect(await alipay.inputValue()).toBe("");

    await alipay.selectOption({ label: "沙箱" });
    await page.getByLabel("EPay 密钥").fill("epay-secret-1");
    expect(await save(page)).toEqual({ alipay: "sandbox", epay_key: "epay-secret-1" });
    await toast(page, "更新成功").waitFor();
    expect(await server.context.settings.get("alipay")).toBe("sandbox");
    expect(await server.context.settings.get("epay_key")).toBe("epay-secret-1");
    await poll(() => page.getByLabel("EPay 密钥").inputValue(), "********");

    // The mask left in place is not sent; the stored key stays.
    await page.getByLabel("汇率").fill("7.3");
    expect(await save(page)).toEqual({ exchange_rate: 7.3 });
    expect(await server.context.settings.get("exchange_rate")).toBe(7.3);
    expect(await server.context.settings.get("epay_key")).toBe("epay-secret-1");

    // A bad value is shown in Chinese on its own field, which gets the focus; nothing is sent.
    let sends = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/admin/config/set_config")) sends += 1;
    });
    const rate = page.getByLabel("汇率");
    await rate.fill("0");
    await page.getByLabel("USDT 检查总时长(分钟)").fill("5");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await page.getByRole("button", { name: "保存" }).click();
      expect(await errorOf(page, rate)).toBe("不能小于 0.01");
      expect(await errorOf(page, page.getByLabel("USDT 检查总时长(分钟)"))).toBe("不能小于 10");
      // The first bad field in the form's order is the one focused.
      await poll(() => isFocused(rate), true);
      await page.waitForTimeout(300); // let the scroll settle
      await page.screenshot({ path: join(SHOTS, `admin-config-error-${width}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(sends).toBe(0);
    expect(await page.locator(".toast-error").count()).toBe(0);
    expect(await server.context.settings.get("exchange_rate")).toBe(7.3);
    expect(await server.context.settings.get("usdtCheckTime")).toBe(20);

    // 恢复 throws the edits away.
    await page.getByRole("button", { name: "恢复" }).click();
    await poll(() => page.getByLabel("USDT 检查总时长(分钟)").inputValue(), "20");
    await context.close();
    expect(errors).toEqual([]);
    await server.context.settings.update({ alipay: "", epay_key: "", exchange_rate: 7.2 });
  });

  test("settings: the install-script addresses are labelled by server type, saved under the seed's names", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await login(page, adminEmail);
    await page.goto(`${server.url}/#/admin_config`);
    const section = page.getByRole("group", { name: "安装脚本地址" });
    await section.waitFor();
    expect(await section.locator(".field-label").allTextContents()).toEqual([
      "面板地址（节点连接用）",
      "Alpine",
      "Ubuntu x86",
      "Ubuntu ARM",
      "Ubuntu 国内",
      "Ubuntu Reality",
      "Alpine Reality",
    ]);
    await section.getByLabel("Alpine", { exact: true }).fill("https://scripts.example.com/alpine.sh");
    await section.getByLabel("Ubuntu 国内", { exact: true }).fill("https://scripts.example.com/cn.sh");
    await section.scrollIntoViewIfNeeded();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await section.screenshot({ path: join(SHOTS, `admin-config-install-${width}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await save(page)).toEqual({
      install_apine: "https://scripts.example.com/alpine.sh",
      install_ubuntu_guonei: "https://scripts.example.com/cn.sh",
    });
    await toast(page, "更新成功").waitFor();
    expect(await server.context.settings.get("install_apine")).toBe("https://scripts.example.com/alpine.sh");
    await context.close();
    expect(errors).toEqual([]);
    await server.context.settings.update({ install_apine: "", install_ubuntu_guonei: "" });
  });

  test("settings: 订阅信息头 switches a header off; the next subscription fetch leaves it out", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await login(page, adminEmail);
    await page.goto(`${server.url}/#/admin_config`);
    const section = page.getByRole("group", { name: "订阅信息头" });
    await section.waitFor();
    // Shown only now, so the page loaded without the 最新公告 modal over it.
    await server.context.settings.update({ notice_show: true, notice_content: "春节期间客服延迟回复" });
    const customer = (await findUserByEmail(server.context, customerEmail)) as UserRow;
    const fetchLink = () => fetch(`${server.url}/api/subscript/clash/${customer.id}/${customer.userkey}`);
    expect((await fetchLink()).headers.get("announce")).toStartWith("base64:");
    expect(await section.locator(".field-label").allTextContents()).toEqual([
      "订阅名称",
      "自动更新间隔",
      "流量信息",
      "套餐到期时间",
      "客服链接",
      "网站链接",
      "公告",
    ]);
    const announce = section.getByRole("switch", { name: "公告" });
    expect(await announce.isChecked()).toBe(true);
    await announce.uncheck();
    await section.scrollIntoViewIfNeeded();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await section.screenshot({ path: join(SHOTS, `admin-config-sub-headers-${width}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await save(page)).toEqual({ sub_header_announce: false });
    await toast(page, "更新成功").waitFor();
    const after = await fetchLink();
    expect(after.status).toBe(200);
    expect(after.headers.get("announce")).toBeNull();
    expect(after.headers.get("profile-title")).toStartWith("base64:");
    await context.close();
    expect(errors).toEqual([]);
    await server.context.settings.update({
      notice_show: false,
      notice_content: "",
      sub_header_announce: true,
    });
  }, 30_000);

  test("trades: filter by text and the order detail dialog", async () => {
    const customer = new ApiClient(server.url);
    expect((await customer.login(customerEmail, PASSWORD)).code).toBe(0);
    const admin = new ApiClient(server.url);
    expect((await admin.login(adminEmail, PASSWORD)).code).toBe(0);
    const combo = await admin.call<Combo>("/api/admin/combo/update_combo", {
      name: "订单详情测试包",
      price: 8.8,
      traffic: 5 * GB,
      vipDuration: 0,
    });
    const order = await customer.call<{ _id: string }>("/api/shop/create_order", {
      combo_id: combo.data._id,
    });
    expect(order.code).toBe(0);
    // Feedback is for paid orders; an unpaid one gets it straight in the database here.
    await server.context.db.run(
      "UPDATE orders SET user_feedback = ? WHERE id = ?",
      "付款后没到账",
      order.data._id,
    );

    const { context, page, errors } = await newPage(browser, 1280);
    await login(page, adminEmail);
    const first = page.waitForRequest((r) => r.url().endsWith("/api/admin/trades/tradelist"));
    await page.goto(`${server.url}/#/admin_tradeList`);
    expect(payloadOf((await first).postData())).toEqual({ requestNumber: 100, filterStr: "" });
    await page.getByLabel("筛选").fill("订单详情测试包");
    const filtered = page.waitForRequest((r) => r.url().endsWith("/api/admin/trades/tradelist"));
    await page.getByRole("button", { name: "查询" }).click();
    expect(payloadOf((await filtered).postData())).toEqual({
      requestNumber: 100,
      filterStr: "订单详情测试包",
    });
    const rows = page.getByRole("row").filter({ hasText: customerEmail });
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect((await rows.getByRole("cell").allTextContents()).slice(0, 2)).toEqual([
      customerEmail,
      "订单详情测试包",
    ]);

    // The table is wider than the page: it scrolls sideways and 详情 stays in view at the right edge.
    const wrap = page.locator(".table-wrap");
    expect(await wrap.evaluate((node) => node.scrollWidth > node.clientWidth)).toBe(true);
    const details = await rows.getByRole("button", { name: "详情" }).boundingBox();
    expect(details && details.x + details.width <= 1280).toBe(true);

    await rows.getByRole("button", { name: "详情" }).click();
    const detail = dialog(page, "订单详情");
    await detail.getByText("付款后没到账").waitFor();
    const text = await detail.textContent();
    for (const part of ["订单详情测试包", "8.80 元", "未支付", "用户反馈"]) expect(text).toContain(part);
    await page.keyboard.press("Escape");
    await detail.waitFor({ state: "hidden" });
    await context.close();
    expect(errors).toEqual([]);
  });

  test("screenshots of the back-office screens at 1280 and 390 px", async () => {
    const admin = new ApiClient(server.url);
    expect((await admin.login(adminEmail, PASSWORD)).code).toBe(0);
    const permission = await admin.call<{ _id: string }>("/api/admin/permissions/update", {
      name: "netflix",
      desc: "奈飞解锁线路",
    });
    await admin.call("/api/admin/combo/update_combo", {
      name: "月付 时间套餐",
      price: 30,
      traffic: 0,
      vipDuration: 30,
      limit: 50 * GB,
      permissionsGain: [permission.data._id],
      permissionDuration: 30,
    });
    const customer = new ApiClient(server.url);
    expect((await customer.login(customerEmail, PASSWORD)).code).toBe(0);
    const combos = (await customer.call<Combo[]>("/api/shop/list")).data;
    await customer.call("/api/shop/create_order", { combo_id: combos[0]?._id });

    const screens: [path: string, heading: string, ready: (page: Page) => Promise<void>][] = [
      ["/admin_combos", "商品管理", (p) => p.getByRole("cell", { name: "月付 时间套餐" }).waitFor()],
      ["/admin_permissions", "权限管理", (p) => p.getByRole("cell", { name: "奈飞解锁线路" }).waitFor()],
      ["/admin_tradeList", "交易流水管理", (p) => p.getByRole("cell", { name: "未支付" }).first().waitFor()],
      ["/admin_config", "配置管理", (p) => p.getByLabel("支付宝收款账户").waitFor()],
    ];
    for (const width of [1280, 390]) {
      const { context, page, errors } = await newPage(browser, width);
      await login(page, adminEmail);
      for (const [path, heading, ready] of screens) {
        await page.goto(`${server.url}/#${path}`);
        await page.getByRole("heading", { name: heading }).waitFor();
        await ready(page);
        await page.screenshot({ path: join(SHOTS, `${path.slice(1)}-${width}.png`), fullPage: true });
      }
      await context.close();
      expect(errors).toEqual([]);
    }
  });
});
