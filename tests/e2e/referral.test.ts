/**
 * The referral money journey in Debian's Chromium against a real server with the sandbox payment:
 * an admin gives a user a channel → the channel user copies the invite link on /channel → a new
 * customer opens it, signs up and buys with the sandbox 支付宝 → the channel sees the rebate →
 * fills the USDT address (a corrupted one refused) and requests a withdrawal on /wallet → an
 * admin checks the payee and settles it on /admin_charge → the channel sees 已结算.
 * Needs the SPA built first. Screenshots (390 and 1280 px) in test-results/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { WalletMsg } from "../../src/modules/wallet/schema.ts";
import { giveWallet, makeCombo, startShopServer, walletFen } from "../commerce.ts";
import { type ApiClient, loggedInClient, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, reloadPage, screenshots } from "./chromium.ts";
import { payOnSandboxCashier } from "./sandbox-cashier.ts";

const TRC20 = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const COMBO = "年付套餐";
const CODE = "E2EREF";

let server: TestServer;
let browser: Browser;
let admin: Awaited<ReturnType<typeof loggedInClient>>;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
  await server.context.settings.update({ min_charge_money: 50 });
  await makeCombo(server, { name: COMBO, price: 200 });
  admin = await loggedInClient(server, { role: "admin" });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const rowOf = (page: Page, caption: string, text: string) =>
  page
    .locator("table", { has: page.locator("caption", { hasText: caption }) })
    .locator("tbody tr")
    .filter({ hasText: text });

const giveWalletYuan = async (userId: string, yuan: number) => await giveWallet(server, userId, yuan * 100);

async function giveChannel(client: ApiClient, email: string) {
  const answer = await client.call("/api/admin/users/update_channel", {
    email,
    name: "测试渠道",
    code: CODE,
    rewardRate: 0.5,
    comsumerDuration: 30,
  });
  expect(answer.code).toBe(0);
}

/** Shop → 立即购买 → 支付宝 → the sandbox cashier's 确认支付 → 购买成功. */
async function buyWithSandbox(page: Page) {
  await page.goto(`${server.url}/#/shop`);
  await page.getByRole("article", { name: COMBO }).getByRole("button", { name: "立即购买" }).click();
  const dialog = page.getByRole("dialog", { name: "确认订单" });
  await dialog.getByRole("button", { name: "确认支付" }).click();
  const qr = page.getByRole("dialog", { name: "支付宝扫码支付" });
  const payUrl = await qr.getByRole("link", { name: "打开支付页面" }).getAttribute("href");
  const cashier = await page.context().newPage();
  await cashier.goto(payUrl as string);
  await payOnSandboxCashier(cashier);
  await cashier.close();
  await page.getByRole("status").filter({ hasText: "购买成功" }).waitFor({ timeout: 8000 });
}

test("invite link → sign-up → sandbox purchase → rebate → withdrawal → settled by an admin", async () => {
  const channel = await loggedInClient(server);
  await giveChannel(admin.client, channel.email);

  // The channel user copies the invite link on /channel.
  const owner = await newPage(browser, 1280);
  await owner.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await loginInBrowser(owner.page, server.url, channel.email, channel.password);
  await owner.page.goto(`${server.url}/#/channel`);
  await owner.page.getByRole("button", { name: "复制邀请链接" }).click();
  await owner.page.getByText("已复制到剪贴板").waitFor();
  const link = await owner.page.evaluate(() => navigator.clipboard.readText());
  expect(link).toBe(`${server.url}/?c=${CODE}#/register`);

  // A new customer on a phone opens it, signs up and buys with the sandbox.
  const customer = await newPage(browser, 390);
  const email = uniqueEmail("invited");
  await customer.page.goto(link);
  await customer.page.getByLabel("邮箱").fill(email);
  await customer.page.getByLabel("密码", { exact: true }).fill("password123");
  await customer.page.getByLabel("确认密码").fill("password123");
  await customer.page.getByRole("button", { name: "注册", exact: true }).click();
  await customer.page.waitForURL((url) => url.hash === "#/", { timeout: 8000 });
  await buyWithSandbox(customer.page);
  expect(customer.errors).toEqual([]);
  await customer.context.close();

  // The channel sees the rebate: 50% of 200 yuan.
  expect(await walletFen(server, channel.user.id)).toBe(100_00);
  await reloadPage(owner.page);
  const reward = rowOf(owner.page, "返利记录", COMBO);
  await reward.waitFor();
  await expect(reward.textContent()).resolves.toContain("¥100.00");

  // /wallet: no address yet, a corrupted one is refused, then the real one; then 提现.
  const page = owner.page;
  await page.goto(`${server.url}/#/wallet`);
  await poll(() => page.getByTestId("wallet-money").textContent(), "100.00");
  await page.getByRole("button", { name: "提现", exact: true }).click();
  await page.getByRole("alert").filter({ hasText: WalletMsg.noAddress }).waitFor();
  await page.getByLabel("地址类型").selectOption("USDT-TRC20");
  await page.getByLabel("收款地址").fill(`${TRC20.slice(0, -1)}T`);
  await page.getByRole("button", { name: "保存收款地址" }).click();
  await page.locator(".field-error").filter({ hasText: WalletMsg.badTrc20 }).waitFor();
  await page.getByLabel("收款地址").fill(TRC20);
  await page.getByRole("button", { name: "保存收款地址" }).click();
  await page.getByRole("status").filter({ hasText: WalletMsg.addressSaved }).waitFor();

  await page.getByRole("button", { name: "提现", exact: true }).click();
  const confirm = page.getByRole("dialog", { name: "提现确认" });
  await expect(confirm.textContent()).resolves.toContain("100.00 元");
  await expect(confirm.textContent()).resolves.toContain(TRC20);
  await confirm.getByRole("button", { name: "确认提现" }).click();
  await page.getByRole("status").filter({ hasText: WalletMsg.withdrawn }).waitFor();
  await poll(() => page.getByTestId("wallet-money").textContent(), "0.00");
  const pending = rowOf(page, "提现记录", "100.00");
  await expect(pending.textContent()).resolves.toContain("待结算");
  await expect(rowOf(page, "钱包明细", "申请提现").textContent()).resolves.toContain("-100.00");
  await screenshots(page, "wallet-requested");

  // The admin checks the payee and settles it with the transaction hash.
  const office = await newPage(browser, 1280);
  await loginInBrowser(office.page, server.url, admin.email, admin.password);
  await office.page.goto(`${server.url}/#/admin_charge`);
  const request = rowOf(office.page, "提现申请", channel.email);
  await expect(request.textContent()).resolves.toContain("待结算");
  await screenshots(office.page, "admin-charge-request");
  await request.getByRole("button", { name: "详情" }).click();
  const details = office.page.getByRole("dialog", { name: "收款详情" });
  await expect(details.getByTestId("charge-current-address").textContent()).resolves.toBe(
    `USDT-TRC20 ${TRC20}`,
  );
  await details.getByRole("button", { name: "关闭" }).last().click();
  await request.getByRole("button", { name: "结算" }).click();
  const settle = office.page.getByRole("dialog", { name: "结算确认" });
  await expect(settle.textContent()).resolves.toContain("100.00 元");
  await settle.getByLabel("交易哈希（可选）").fill("e2e-txid-1");
  await settle.getByRole("button", { name: "确认结算" }).click();
  await office.page.getByRole("status").filter({ hasText: "结算成功" }).waitFor();
  await poll(() => request.textContent().then((text) => text?.includes("已结算")), true);
  await expect(request.getByRole("button", { name: "结算" }).count()).resolves.toBe(0);
  await request.getByRole("button", { name: "留言" }).click();
  const message = office.page.getByRole("dialog", { name: "留言" });
  await message.getByLabel("留言（用户可见）").fill("已转账，请查收");
  await message.getByRole("button", { name: "保存" }).click();
  await office.page.getByRole("status").filter({ hasText: "留言成功" }).waitFor();
  await screenshots(office.page, "admin-charge");
  expect(office.errors).toEqual([]);
  await office.context.close();

  // The channel sees 已结算 with the message.
  await reloadPage(page);
  const settled = rowOf(page, "提现记录", "100.00");
  await poll(() => settled.textContent().then((text) => text?.includes("已结算")), true);
  await expect(settled.textContent()).resolves.toContain("已转账，请查收");
  await screenshots(page, "wallet-settled");
  expect(owner.errors).toEqual([]);
  await owner.context.close();
}, 120_000);

test("an admin refuses a request with a reason: the money is back in the wallet, the customer sees 已拒绝", async () => {
  const who = await loggedInClient(server, { role: "channel" });
  await giveWalletYuan(who.user.id, 80);
  await who.client.call("/api/wallet/change_reward_adress", { addressType: "USDT-TRC20", address: TRC20 });
  expect((await who.client.call("/api/wallet/make_charge")).code).toBe(0);

  const office = await newPage(browser, 1280);
  await loginInBrowser(office.page, server.url, admin.email, admin.password);
  await office.page.goto(`${server.url}/#/admin_charge`);
  await office.page.getByRole("button", { name: "待结算" }).click();
  const request = rowOf(office.page, "提现申请", who.email);
  await request.getByRole("button", { name: "拒绝" }).click();
  const form = office.page.getByRole("dialog", { name: "拒绝提现" });
  await form.getByRole("button", { name: "拒绝" }).click();
  await form.locator(".field-error").filter({ hasText: WalletMsg.reasonEmpty }).waitFor();
  await form.getByLabel("拒绝原因（用户可见）").fill("地址不支持 TRC20");
  await form.getByRole("button", { name: "拒绝" }).click();
  await office.page
    .getByRole("dialog", { name: "拒绝确认" })
    .getByRole("button", { name: "确认拒绝" })
    .click();
  await office.page.getByRole("status").filter({ hasText: WalletMsg.refused }).waitFor();
  await poll(() => request.count(), 0); // gone from the 待结算 filter
  expect(office.errors).toEqual([]);
  await office.context.close();

  const mine = await newPage(browser, 390);
  await loginInBrowser(mine.page, server.url, who.email, who.password);
  await mine.page.goto(`${server.url}/#/wallet`);
  await poll(() => mine.page.getByTestId("wallet-money").textContent(), "80.00");
  const refused = rowOf(mine.page, "提现记录", "80.00");
  await expect(refused.textContent()).resolves.toContain("已拒绝");
  await expect(refused.textContent()).resolves.toContain("地址不支持 TRC20");
  await screenshots(mine.page, "wallet-refused");
  expect(mine.errors).toEqual([]);
  await mine.context.close();
}, 60_000);
