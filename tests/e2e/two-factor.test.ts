/**
 * Two-factor login (issue 30) in Debian's Chromium against a real server and the production build:
 * a customer turns it on on 我的账户 (the QR code decoded back to the otpauth URL with jsQR as a
 * phone would, the code computed from its secret, the ten recovery codes shown once), logs out,
 * logs in with the password and then a code, and turns it off with a recovery code; mandatory
 * mode keeps an admin on the enrolment page until it is on; a passkey added through Chromium's
 * virtual authenticator (DevTools protocol) then stands in for the code. axe-core on every new screen at 1280
 * and 390 px; screenshots in test-results/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import jsQR from "jsqr";
import type { Browser, Page } from "playwright-core";
import { base32Decode, hotp, timeStep } from "../../src/modules/user/totp.ts";
import type { TotpSetup } from "../../src/modules/user/two-factor-schema.ts";
import { loggedInClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import {
  launchChromium,
  loginInBrowser,
  newPage,
  poll,
  screenshots,
  seriousAxeViolations,
} from "./chromium.ts";

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

/** The code an authenticator shows now (`offset` steps later). */
const codeOf = (secret: string, offset = 0) =>
  hotp(base32Decode(secret) as Buffer, timeStep(Date.now()) + offset);

const section = (page: Page) => page.getByRole("region", { name: "两步验证" });

/** No serious or critical axe violation, at 1280 px and at 390 px. */
async function expectAccessible(page: Page) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(200);
    expect({ width, violations: await seriousAxeViolations(page) }).toEqual({ width, violations: [] });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Decodes the drawn QR canvas as a phone would. */
async function decodeQr(page: Page): Promise<string | null> {
  const canvas = section(page).getByLabel("两步验证二维码");
  await canvas.waitFor();
  await poll(() => section(page).getByText("二维码生成中…").count(), 0, 10_000);
  const image = await canvas.evaluate((element: HTMLCanvasElement) => {
    const { width, height, data } = (element.getContext("2d") as CanvasRenderingContext2D).getImageData(
      0,
      0,
      element.width,
      element.height,
    );
    return { width, height, pixels: Array.from(data) };
  });
  return jsQR(Uint8ClampedArray.from(image.pixels), image.width, image.height)?.data ?? null;
}

/**
 * Turns 2FA on in the 两步验证 card (a wrong code first): answers the secret (from the QR code),
 * the recovery codes and the code it was turned on with.
 */
async function enrolInPage(page: Page, email: string, shots?: string) {
  await section(page).getByRole("button", { name: "开启两步验证" }).click();
  const url = new URL((await decodeQr(page)) ?? "no QR code");
  expect([url.protocol, url.host, decodeURIComponent(url.pathname)]).toEqual([
    "otpauth:",
    "totp",
    `/飞渡:${email}`,
  ]);
  const secret = url.searchParams.get("secret") ?? "";
  // The secret to type is the one in the QR code.
  expect(await section(page).locator(".two-factor-secret").textContent()).toBe(secret);
  if (shots) {
    await expectAccessible(page);
    await screenshots(page, `${shots}-setup`);
  }
  await section(page).getByLabel("验证码").fill(codeOf(secret, 5)); // outside the drift window
  await section(page).getByRole("button", { name: "确认开启" }).click();
  await section(page).getByText("验证码错误或已使用").waitFor();
  const enabledWith = codeOf(secret);
  await section(page).getByLabel("验证码").fill(enabledWith);
  await section(page).getByRole("button", { name: "确认开启" }).click();
  const list = section(page).getByRole("list", { name: "恢复码" });
  await list.waitFor();
  const codes = (await list.locator("code").allTextContents()).map((code) => code.trim());
  expect(codes.length).toBe(10);
  if (shots) {
    await expectAccessible(page);
    await screenshots(page, `${shots}-recovery-codes`);
  }
  return { secret, codes, enabledWith };
}

async function logout(page: Page) {
  await page.getByRole("button", { name: "用户菜单" }).click();
  await page.getByRole("button", { name: "退出登录" }).click();
  await page.waitForURL((url) => url.hash === "#/login");
}

async function typePassword(page: Page, email: string, password: string, base = server.url) {
  await page.goto(`${base}/#/login`);
  await page.getByLabel("邮箱").fill(email);
  await page.getByLabel("密码").fill(password);
  await page.getByRole("button", { name: "登录", exact: true }).click();
}

describe("two-factor login in the browser", () => {
  test("a customer turns it on on 我的账户, logs in with a code, and turns it off with a recovery code", async () => {
    const customer = await loggedInClient(server, { email: uniqueEmail("totp") });
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, customer.email, customer.password);
    await page.goto(`${server.url}/#/user_info`);
    await section(page).waitFor();
    await expectAccessible(page);
    const { secret, codes, enabledWith } = await enrolInPage(page, customer.email, "two-factor");
    await section(page).getByRole("button", { name: "我已保存" }).click();
    await section(page).getByText("剩余恢复码 10 个").waitFor();
    await expectAccessible(page);
    await screenshots(page, "two-factor-on");

    await logout(page);
    await typePassword(page, customer.email, customer.password);
    await page.getByRole("heading", { name: "两步验证" }).waitFor();
    expect((await context.cookies()).some((cookie) => cookie.name === "token")).toBe(false);
    await expectAccessible(page);
    await screenshots(page, "two-factor-login-code");
    // The enabling code is used: the same one is refused; the next step's works.
    await page.getByLabel("验证码").fill(enabledWith);
    await page.getByRole("button", { name: "验证", exact: true }).click();
    await page.getByText("验证码错误或已使用").waitFor();
    await page.getByLabel("验证码").fill(codeOf(secret, 1));
    await page.getByRole("button", { name: "验证", exact: true }).click();
    await page.getByRole("button", { name: "用户菜单" }).waitFor();
    await page.waitForURL((url) => url.hash === "#/");

    await page.goto(`${server.url}/#/user_info`);
    await section(page).getByText("剩余恢复码 10 个").waitFor();
    await section(page)
      .getByLabel("验证码或恢复码")
      .fill(codes[0] as string);
    await section(page).getByRole("button", { name: "关闭两步验证" }).click();
    const dialog = page.getByRole("dialog", { name: "关闭两步验证" });
    await dialog.waitFor();
    await expectAccessible(page);
    await dialog.getByRole("button", { name: "关闭两步验证" }).click();
    await page.locator(".toast", { hasText: "两步验证已关闭" }).waitFor();
    await section(page).getByRole("button", { name: "开启两步验证" }).waitFor();

    await logout(page);
    await typePassword(page, customer.email, customer.password);
    await page.waitForURL((url) => url.hash === "#/");
    expect(errors).toEqual([]);
    await context.close();
  });

  test("mandatory mode keeps an admin on the enrolment page until 2FA is on (390 px)", async () => {
    const admin = await loggedInClient(server, { role: "admin", email: uniqueEmail("staff") });
    await server.context.settings.update({ totp_required_staff: true });
    try {
      const { context, page, errors } = await newPage(browser, 390);
      await typePassword(page, admin.email, admin.password);
      await page.waitForURL((url) => url.hash === "#/two_factor");
      await page.getByRole("alert").getByText("本站要求管理员和运营账号开启两步验证").waitFor();
      // Any other page, a back-office one too, leads back here.
      await page.goto(`${server.url}/#/admin_config`);
      await page.waitForURL((url) => url.hash === "#/two_factor");
      await page.goto(`${server.url}/#/user_info`);
      await page.waitForURL((url) => url.hash === "#/two_factor");
      await section(page).getByRole("button", { name: "开启两步验证" }).waitFor();
      await expectAccessible(page);
      await screenshots(page, "two-factor-mandatory");

      await enrolInPage(page, admin.email, "two-factor-mandatory");
      expect(page.url()).toEndWith("#/two_factor");
      await section(page).getByRole("button", { name: "我已保存" }).click();
      await page.waitForURL((url) => url.hash === "#/");
      await page.goto(`${server.url}/#/admin_config`);
      await page.getByRole("heading", { name: "配置管理" }).waitFor();
      expect(page.url()).toEndWith("#/admin_config");
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await server.context.settings.update({ totp_required_staff: false });
    }
  });

  test("a passkey added through Chromium's virtual authenticator stands in for the code", async () => {
    const customer = await loggedInClient(server, { email: uniqueEmail("passkey") });
    const setup = await customer.client.ok<TotpSetup>("/api/user/totp_setup");
    await customer.client.ok("/api/user/totp_enable", { code: codeOf(setup.secret) });
    // WebAuthn wants a domain as the RP id: the same server as http://localhost.
    const local = server.url.replace("127.0.0.1", "localhost");
    const { context, page, errors } = await newPage(browser, 1280);
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    await typePassword(page, customer.email, customer.password, local);
    await page.getByLabel("验证码").fill(codeOf(setup.secret, 1));
    await page.getByRole("button", { name: "验证", exact: true }).click();
    await page.waitForURL((url) => url.hash === "#/");
    await page.goto(`${local}/#/user_info`);
    await section(page).getByText("通行密钥 0 个", { exact: false }).waitFor();
    await section(page).getByRole("button", { name: "添加通行密钥" }).click();
    await page.locator(".toast", { hasText: "通行密钥已添加" }).waitFor();
    await section(page).getByText("通行密钥 1 个", { exact: false }).waitFor();
    await expectAccessible(page);
    await screenshots(page, "two-factor-passkey-added");

    await logout(page);
    await typePassword(page, customer.email, customer.password, local);
    const usePasskey = page.getByRole("button", { name: "使用通行密钥" });
    await usePasskey.waitFor();
    await expectAccessible(page);
    await screenshots(page, "two-factor-login-passkey");
    await usePasskey.click();
    await page.getByRole("button", { name: "用户菜单" }).waitFor();
    await page.waitForURL((url) => url.hash === "#/");
    const used = await server.context.db.get<{ last_used_time: number | null }>(
      "SELECT last_used_time FROM passkeys WHERE user_id = ?",
      customer.user.id,
    );
    expect(used?.last_used_time).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
