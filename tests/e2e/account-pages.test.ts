/**
 * The account pages of issue 11 in Chromium: the password-change confirm page asks for the new
 * password again before anything changes, login links in the hash query log in only when the
 * server minted them, and the reset page says when the site cannot send mail links.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { transformPassword } from "../../src/modules/user/password.ts";
import { ConfirmMsg } from "../../src/modules/user/schema.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { createSession, mintLoginLink } from "../../src/modules/user/session.ts";
import { ApiClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { confirmLinkOf, type MailSink, sinkSettings, startMailSink } from "../mail-sink.ts";
import { launchChromium, newPage, poll, SHOTS } from "./chromium.ts";

let server: TestServer;
let browser: Browser;
let sink: MailSink;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  sink = await startMailSink();
  await server.context.settings.update(sinkSettings(sink));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await sink?.close();
});

async function account(password: string) {
  const email = uniqueEmail("pages");
  const user = await createUser(server.context, { email, passwordDigest: transformPassword(password) });
  return { email, user, subscription: `${server.url}/api/subscript/clash/${user.id}/${user.userkey}` };
}

describe("password-change confirm page", () => {
  test("opening the mailed link shows a form; a different password is refused, the asked-for one applies and logs in", async () => {
    const { email, subscription } = await account("old-password-1");
    const asked = await new ApiClient(server.url).call("/api/user/reset_password", {
      email,
      password: transformPassword("new-password-2"),
      describUrl: subscription,
    });
    expect(asked.code).toBe(0);
    const link = confirmLinkOf(await sink.waitFor(email));

    const { context, page, errors } = await newPage(browser, 390);
    await page.goto(link.url);
    await page.getByRole("heading", { name: "确认修改密码" }).waitFor();
    // Opening the page changed nothing.
    expect((await new ApiClient(server.url).login(email, "old-password-1")).code).toBe(0);

    await page.getByRole("button", { name: "确认修改" }).click();
    await poll(() => page.locator(".field-error").textContent(), "请输入密码");
    await page.getByLabel("新密码", { exact: true }).fill("my-own-password");
    await page.getByLabel("确认新密码").fill("my-own-password");
    await page.getByRole("button", { name: "确认修改" }).click();
    await poll(() => page.locator(".field-error").textContent(), ConfirmMsg.passwordMismatch(4));
    await page.screenshot({ path: join(SHOTS, "confirm-password-390.png") });

    await page.getByLabel("新密码", { exact: true }).fill("new-password-2");
    await page.getByLabel("确认新密码").fill("new-password-2");
    await page.getByRole("button", { name: "确认修改" }).click();
    await page.getByText("密码修改成功，3秒后跳转").waitFor();
    await page.waitForURL((url) => url.hash === "#/", { timeout: 6000 });
    await page.getByRole("button", { name: "用户菜单" }).waitFor();
    expect((await new ApiClient(server.url).login(email, "old-password-1")).code).toBe(1000);

    // The link is spent: opening it again says so and offers a new request.
    await page.goto("about:blank");
    await page.goto(link.url);
    await page.getByLabel("新密码", { exact: true }).fill("new-password-2");
    await page.getByLabel("确认新密码").fill("new-password-2");
    await page.getByRole("button", { name: "确认修改" }).click();
    await page.getByText("密码修改失败").waitFor();
    await page.getByText(ConfirmMsg.used).waitFor();
    await expect(page.getByRole("link", { name: "重新申请" }).getAttribute("href")).resolves.toBe("#/reset");
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});

describe("login links in the hash query", () => {
  test("a minted token logs in through the server; someone's session token is dropped without logging in", async () => {
    const { user } = await account("link-login-1");
    const { context, page, errors } = await newPage(browser, 1280);
    await page.goto(`${server.url}/#/tutorial?token=${await mintLoginLink(server.context, user.id)}`);
    await page.getByRole("button", { name: "用户菜单" }).waitFor();
    expect(new URL(page.url()).search).toBe("");
    expect(new URL(page.url()).hash).toBe("#/tutorial");
    const cookie = (await context.cookies()).find((c) => c.name === "token");
    expect(cookie?.httpOnly).toBe(true);
    await context.close();

    const other = await account("someone-else-1");
    const planted = await createSession(server.context, other.user.id);
    const visitor = await newPage(browser, 1280);
    await visitor.page.goto(`${server.url}/#/tutorial?token=${planted}`);
    await poll(async () => new URL(visitor.page.url()).hash, "#/tutorial");
    expect((await visitor.context.cookies()).some((c) => c.name === "token")).toBe(false);
    await visitor.page.getByRole("link", { name: "登录" }).first().waitFor();
    expect([...errors, ...visitor.errors]).toEqual([]);
    await visitor.context.close();
  }, 60_000);
});

describe("reset page", () => {
  test("without a site origin no link can be mailed: the page says to contact support before any form", async () => {
    const { email, subscription } = await account("no-origin-1");
    await server.context.settings.update({ site_url: "" });
    try {
      const { context, page } = await newPage(browser, 390);
      await page.goto(`${server.url}/#/reset`);
      await poll(
        () => page.getByRole("note").textContent(),
        `${ConfirmMsg.resetNeedsSupport}可先用订阅链接找回账号邮箱，告诉客服。`,
      );
      await expect(page.getByRole("button", { name: "确认修改" }).count()).resolves.toBe(0);
      await page.getByLabel("订阅链接").fill(subscription);
      await page.getByRole("button", { name: "找回账号" }).click();
      await poll(() => page.getByLabel("邮箱").inputValue(), email);
      // The server refuses a reset all the same, whoever calls it.
      const refused = await new ApiClient(server.url).call("/api/user/reset_password", {
        email,
        password: transformPassword("newpassword1"),
        describUrl: subscription,
      });
      expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1000, msg: ConfirmMsg.noOrigin });
      await context.close();
    } finally {
      await server.context.settings.update({ site_url: server.url });
    }
  }, 60_000);
});
