/**
 * 我的账户 /user_info in Debian's Chromium against a real server: a customer uploads an avatar and
 * turns two subscription toggles on, saves, and both persist (page reload, header avatar, the API);
 * an over-4 MB image is refused before anything is sent; the special permissions show 3, then all;
 * the ? tooltips open on click and close on any page click or Esc; 重置订阅链接 asks first; the
 * Telegram bind section shows the bind command while the bot is on, 已绑定 and 解除绑定 once bound,
 * and nothing for an agency account. Needs the SPA built first. Screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page, Request } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { MAX_IMAGE_BYTES } from "../../src/modules/file/schema.ts";
import { quadrantPng } from "../../src/modules/file/test-images.ts";
import type { PermissionItem } from "../../src/modules/permission/schema.ts";
import { bindChat } from "../../src/modules/telegram/bind.ts";
import { knownBotUsername } from "../../src/modules/telegram/bot-state.ts";
import { DEFAULT_ICON, type UserInfo } from "../../src/modules/user/schema.ts";
import { formatDate } from "../../web/components/format.ts";
import { createOrder, makeCombo, payWithSandbox, startShopServer } from "../commerce.ts";
import { type ApiClient, loggedInClient, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, reloadPage, screenshots } from "./chromium.ts";

let server: TestServer;
let browser: Browser;
let bot: ReturnType<typeof Bun.serve> | undefined;

const BOT_TOKEN = "123456:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ";
const BOT_USERNAME = "ferry_profile_bot";

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  bot?.stop(true);
});

// ---- page helpers ----

const toast = (page: Page, text: string) => page.locator(".toast", { hasText: text });
const switchOf = (page: Page, label: string) => page.getByRole("switch", { name: label, exact: true });
const checkedStates = (page: Page) =>
  Promise.all(
    ["释放DNS控制", "国外订阅", "使用英文节点名"].map((label) => switchOf(page, label).isChecked()),
  );
const headerAvatarSrc = (page: Page) =>
  page.getByRole("button", { name: "用户菜单" }).locator("img").getAttribute("src");
const previewSrc = (page: Page) => page.getByRole("img", { name: "当前头像" }).getAttribute("src");

async function openProfile(page: Page, customer: { email: string; password: string }) {
  await loginInBrowser(page, server.url, customer.email, customer.password);
  await page.getByRole("link", { name: "我的账户" }).click();
  await page.getByRole("heading", { name: "我的账户" }).waitFor();
}

/** Requests to `path` the page sends from now on. */
function capture(page: Page, path: string): Request[] {
  const sent: Request[] = [];
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === path) sent.push(request);
  });
  return sent;
}

async function userInfo(client: ApiClient): Promise<UserInfo> {
  const answer = await client.call<UserInfo>("/api/user/userinfo");
  expect(answer.code).toBe(0);
  return answer.data;
}

describe("profile", () => {
  test("visitors are sent to log in", async () => {
    const { context, page } = await newPage(browser, 1280);
    await page.goto(`${server.url}/#/user_info`);
    await page.waitForURL((url) => url.hash === "#/login");
    await context.close();
  });

  test("an uploaded avatar and two toggles are saved, and persist in the page, the header and the API", async () => {
    const customer = await loggedInClient(server);
    const { context, page, errors } = await newPage(browser, 1280);
    const uploads = capture(page, "/api/file/upload");
    const saves = capture(page, "/api/user/change_use_info");
    await openProfile(page, customer);

    const save = page.getByRole("button", { name: "保存", exact: true });
    await expect(save.isDisabled()).resolves.toBe(true); // nothing changed yet
    await expect(checkedStates(page)).resolves.toEqual([false, false, false]);
    await expect(page.getByLabel("邮箱").inputValue()).resolves.toBe(customer.email);
    await expect(page.getByLabel("邮箱").getAttribute("readonly")).resolves.not.toBeNull();
    await expect(page.getByText("如需修改邮箱请联系客服").isVisible()).resolves.toBe(true);

    const png = quadrantPng();
    await page.getByLabel("上传头像").setInputFiles({ name: "me.png", mimeType: "image/png", buffer: png });
    await poll(async () => (await previewSrc(page))?.startsWith("/api/file/downloads/") ?? false, true);
    const icon = (await previewSrc(page)) as string;
    expect(uploads.length).toBe(1);
    // Uploaded is not yet saved: the header still shows the letter avatar.
    await expect(page.getByRole("button", { name: "用户菜单" }).locator("img").count()).resolves.toBe(0);

    await switchOf(page, "释放DNS控制").click();
    await switchOf(page, "使用英文节点名").click();
    await expect(checkedStates(page)).resolves.toEqual([true, false, true]);
    await save.click();
    await toast(page, "修改资料成功").waitFor();
    expect(saves.length).toBe(1);
    await poll(() => headerAvatarSrc(page), icon);
    await poll(() => save.isDisabled(), true); // saved: nothing left to save

    const info = await userInfo(customer.client);
    expect([info.icon, info.inXinjiang, info.in_foreign, info.use_english_node]).toEqual([
      icon,
      true,
      false,
      true,
    ]);
    // The stored file is the PNG that was picked.
    const image = await customer.client.get(icon);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await image.arrayBuffer()).equals(png)).toBe(true);

    await reloadPage(page);
    await page.getByRole("heading", { name: "我的账户" }).waitFor();
    await poll(() => checkedStates(page), [true, false, true]);
    await expect(previewSrc(page)).resolves.toBe(icon);
    await expect(headerAvatarSrc(page)).resolves.toBe(icon);
    await expect(save.isDisabled()).resolves.toBe(true);
    await poll(
      () => page.getByRole("img", { name: "当前头像" }).evaluate((img: HTMLImageElement) => img.naturalWidth),
      32,
    );
    await screenshots(page, "profile-avatar");

    // Turning one back off and going back to the default avatar are saved too.
    await switchOf(page, "释放DNS控制").click();
    await page.getByRole("button", { name: "使用默认头像" }).click();
    await page.getByRole("img", { name: "当前头像（默认）" }).waitFor();
    const saved = page.waitForResponse((response) => response.url().endsWith("/api/user/change_use_info"));
    await save.click();
    await saved;
    await poll(async () => {
      const after = await userInfo(customer.client);
      return [after.icon, after.inXinjiang, after.use_english_node];
    }, [DEFAULT_ICON, false, true]);
    await poll(() => page.getByRole("button", { name: "用户菜单" }).locator("img").count(), 0);
    expect(saves.length).toBe(2);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("an image over 4 MB is refused in the browser and nothing is sent", async () => {
    const customer = await loggedInClient(server);
    const { context, page, errors } = await newPage(browser, 390);
    const uploads = capture(page, "/api/file/upload");
    await openProfile(page, customer);
    const big = Buffer.concat([quadrantPng(), Buffer.alloc(MAX_IMAGE_BYTES + 1 - quadrantPng().length)]);
    expect(big.length).toBe(MAX_IMAGE_BYTES + 1);
    await page.getByLabel("上传头像").setInputFiles({ name: "big.png", mimeType: "image/png", buffer: big });
    await toast(page, "图片限制在4M内").waitFor();
    await page.waitForTimeout(500);
    expect(uploads.length).toBe(0);
    await expect(page.getByRole("button", { name: "保存", exact: true }).isDisabled()).resolves.toBe(true);
    expect((await userInfo(customer.client)).icon).not.toStartWith("/api/file/downloads/");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("special permissions: the first 3, then all after 显示全部, 收起 again; none says so", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const customer = await loggedInClient(server);
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      const made = await admin.client.call<PermissionItem>("/api/admin/permissions/update", {
        name: `专线权限${n}`,
        desc: `可使用第 ${n} 组专线`,
      });
      expect(made.code).toBe(0);
      ids.push(made.data._id);
    }
    // Granted the way customers get them: paid combos that carry them (3 for 30 days, 2 for 90).
    for (const [name, gain, days] of [
      ["专线月卡", ids.slice(0, 3), 30],
      ["专线季卡", ids.slice(3), 90],
    ] as const) {
      const combo = await makeCombo(server, {
        name,
        price: 5,
        traffic: GB,
        permissionsGain: gain,
        permissionDuration: days,
      });
      await payWithSandbox(server, customer.client, (await createOrder(customer.client, combo._id))._id);
    }

    const { context, page, errors } = await newPage(browser, 1280);
    await openProfile(page, customer);
    const card = page.getByRole("region", { name: "特殊权限" });
    const names = () => card.locator(".profile-permission-name").allTextContents();
    // Soonest expiry first: the three 30-day grants.
    await poll(async () => (await names()).sort(), ["专线权限1", "专线权限2", "专线权限3"]);
    await expect(card.textContent()).resolves.toContain("可使用第 1 组专线");
    await expect(card.textContent()).resolves.toMatch(/到期 \d{4}-\d\d-\d\d/);
    await card.getByRole("button", { name: "显示全部（5）" }).click();
    await poll(async () => (await names()).slice(3).sort(), ["专线权限4", "专线权限5"]);
    await screenshots(page, "profile-permissions");
    await card.getByRole("button", { name: "收起" }).click();
    await poll(async () => (await names()).length, 3);
    await context.close();

    const plain = await loggedInClient(server);
    const other = await newPage(browser, 390);
    await openProfile(other.page, plain);
    await other.page.getByRole("region", { name: "特殊权限" }).getByText("暂无特殊权限").waitFor();
    expect(errors).toEqual([]);
    await other.context.close();
  }, 60_000);

  test("a ? opens its explanation on click; any page click or Esc closes it; the keyboard works too", async () => {
    const customer = await loggedInClient(server);
    const { context, page, errors } = await newPage(browser, 1280);
    await openProfile(page, customer);
    const help = page.getByRole("button", { name: "释放DNS控制说明" });
    const text = page.getByText("所在网络限制或污染 DNS 时开启");
    await expect(text.count()).resolves.toBe(0);
    await help.click();
    await text.waitFor();
    await screenshots(page, "profile-tooltip");
    // On a phone the open explanation stays on the screen (no sideways scrolling).
    await page.setViewportSize({ width: 390, height: 800 });
    await expect(text.isVisible()).resolves.toBe(true);
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
    await page.getByRole("heading", { name: "我的账户" }).click();
    await poll(() => text.count(), 0);

    // A click on the explanation itself closes it too; opening another closes the first.
    await help.click();
    await text.click();
    await poll(() => text.count(), 0);
    const english = page.getByRole("button", { name: "使用英文节点名说明" });
    const englishText = page.getByText("订阅中的节点名使用英文");
    await english.click();
    await englishText.waitFor();
    await expect(english.getAttribute("aria-expanded")).resolves.toBe("true");
    await help.click();
    await text.waitFor();
    await poll(() => englishText.count(), 0);
    await page.keyboard.press("Escape");
    await poll(() => text.count(), 0);

    // Keyboard: Tab to a ?, Enter opens it (the button is described by it), Esc closes it.
    await help.focus();
    await page.keyboard.press("Tab"); // the 释放DNS控制 switch
    await page.keyboard.press("Tab"); // 国外订阅's ?
    await page.keyboard.press("Enter");
    const abroadText = page.getByText("人在中国大陆以外使用时开启");
    await abroadText.waitFor();
    const abroad = page.getByRole("button", { name: "国外订阅说明" });
    await expect(abroad.evaluate((node) => node === document.activeElement)).resolves.toBe(true);
    await expect(abroad.getAttribute("aria-describedby")).resolves.toBe(await abroadText.getAttribute("id"));
    await page.keyboard.press("Escape");
    await poll(() => abroadText.count(), 0);
    // The explanations never changed a toggle.
    await expect(checkedStates(page)).resolves.toEqual([false, false, false]);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("重置订阅链接 warns first and gives a new subscription key", async () => {
    const customer = await loggedInClient(server);
    const before = (await userInfo(customer.client)).userkey;
    const { context, page, errors } = await newPage(browser, 1280);
    await openProfile(page, customer);
    await page.getByRole("button", { name: "重置订阅链接" }).click();
    const dialog = page.getByRole("dialog", { name: "重置订阅链接" });
    await expect(dialog.textContent()).resolves.toContain("所有已订阅的设备都会断开连接");
    await dialog.getByRole("button", { name: "取消" }).click();
    expect((await userInfo(customer.client)).userkey).toBe(before);

    await page.getByRole("button", { name: "重置订阅链接" }).click();
    await dialog.getByRole("button", { name: "确定" }).click();
    await toast(page, "订阅链接重置成功，请重新订阅。").waitFor();
    expect((await userInfo(customer.client)).userkey).not.toBe(before);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  describe("Telegram bind section", () => {
    test("is not shown while no bot token is set", async () => {
      await server.context.settings.update({ telegram_bot_token: "" });
      const customer = await loggedInClient(server);
      const { context, page } = await newPage(browser, 1280);
      const answered = page.waitForResponse((response) => response.url().endsWith("/api/user/bind_info"));
      await openProfile(page, customer);
      await answered;
      await page.waitForTimeout(300);
      await expect(page.getByRole("heading", { name: "Telegram 绑定" }).count()).resolves.toBe(0);
      await context.close();
    }, 60_000);

    test("shows the bind command and the bot; bound it shows 已绑定, and 解除绑定 asks first", async () => {
      bot = fakeBotApi();
      await server.context.settings.update({
        telegram_bot_token: BOT_TOKEN,
        telegram_api_base: `http://127.0.0.1:${bot.port}`,
      });
      // The running bot learns its @username from the fake's getMe.
      await poll(async () => await knownBotUsername(server.context), BOT_USERNAME, 10_000);
      const customer = await loggedInClient(server);
      const { context, page, errors } = await newPage(browser, 1280);
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
      await openProfile(page, customer);
      const section = page.getByRole("region", { name: "Telegram 绑定" });
      const command = section.locator(".profile-bind-command code");
      await command.waitFor();
      const text = (await command.textContent()) ?? "";
      expect(text).toMatch(new RegExp(`^/bind ${customer.user.id} \\d{8}$`));
      await section.getByRole("button", { name: "复制" }).click();
      await toast(page, "已复制到剪切板").waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(text);
      await expect(section.textContent()).resolves.toContain("绑定命令有效期至");
      const [, userId, code] = text.split(" ");
      await expect(
        section.getByRole("link", { name: "打开 Telegram 机器人" }).getAttribute("href"),
      ).resolves.toBe(`https://t.me/${BOT_USERNAME}?start=${userId}_${code}`);
      await screenshots(page, "profile");

      // The customer sends the command to the bot from their Telegram account (@ferry_fan); the
      // profile then says 已绑定 with that account and the day it was bound (a fixed instant, so
      // the shown day is known).
      const from = { id: 777001, is_bot: false, first_name: "小明", username: "ferry_fan" };
      const bindTime = Date.UTC(2024, 4, 6, 12, 0, 0);
      const bound = await bindChat(server.context, 777001, from, userId as string, code as string, bindTime);
      expect(bound.ok).toBe(true);
      await section.getByRole("button", { name: "刷新绑定状态" }).click();
      await section.getByText("已绑定").waitFor();
      await expect(section.locator(".profile-bind-bound").textContent()).resolves.toContain(
        `已绑定@ferry_fan（${formatDate(bindTime)} 起）`,
      );

      await section.getByRole("button", { name: "解除绑定" }).click();
      const dialog = page.getByRole("dialog", { name: "确认解除绑定?" });
      await expect(dialog.textContent()).resolves.toContain(
        "解除绑定后，将无法再通过 Telegram 机器人操作此账号。",
      );
      await dialog.getByRole("button", { name: "取消" }).click();
      expect(await boundChats(customer.user.id)).toBe(1);
      await section.getByRole("button", { name: "解除绑定" }).click();
      await dialog.getByRole("button", { name: "解除绑定" }).click();
      await toast(page, "解除成功").waitFor();
      expect(await boundChats(customer.user.id)).toBe(0);
      await section.locator(".profile-bind-command code").waitFor();
      expect(errors).toEqual([]);
      await context.close();
    }, 60_000);

    test("an agency account has no bind section and never asks for one", async () => {
      const agency = await loggedInClient(server);
      await server.context.db.run("UPDATE users SET is_agency = 1 WHERE id = ?", agency.user.id);
      const { context, page, errors } = await newPage(browser, 390);
      const asked = capture(page, "/api/user/bind_info");
      await openProfile(page, agency);
      await page.getByRole("region", { name: "特殊权限" }).waitFor();
      await page.waitForTimeout(500);
      await expect(page.getByRole("heading", { name: "Telegram 绑定" }).count()).resolves.toBe(0);
      expect(asked.length).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    }, 60_000);
  });
});

async function boundChats(userId: string): Promise<number> {
  return (
    (
      await server.context.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM telegram_bindings WHERE user_id = ?",
        userId,
      )
    )?.n ?? 0
  );
}

/** A Bot API on 127.0.0.1 that knows the bot (getMe) and has no updates for it. */
function fakeBotApi() {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const method = new URL(request.url).pathname.split("/").pop();
      if (method === "getMe") {
        return Response.json({
          ok: true,
          result: { id: 123456, is_bot: true, first_name: "Ferry", username: BOT_USERNAME },
        });
      }
      if (method === "getUpdates") {
        await Bun.sleep(1000);
        return Response.json({ ok: true, result: [] });
      }
      return Response.json({ ok: true, result: true });
    },
  });
}
