/**
 * What the browser tests share: Debian's Chromium driven by playwright-core, a page per viewport
 * width that records page errors, polling, envelope payloads of captured requests, logging in
 * through the login page, and screenshots in test-results/.
 */
import { expect } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { fromBase64Json } from "../../src/rpc/envelope.ts";

/**
 * Debian's Chromium: its headless shell (package chromium-headless-shell, the same engine without
 * the browser's UI layer) where installed — it starts a page about 4× and answers a protocol round
 * trip about 2× faster on CI's two cores — else the full browser in headless mode.
 */
const CHROMIUM =
  ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].find((path) => existsSync(path)) ??
  "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
export const SHOTS = join(import.meta.dir, "../../test-results");

/** Launches Chromium once the SPA is known to be built; makes the screenshot folder. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(join(import.meta.dir, "../../web/dist/app.js"))) {
    throw new Error("web/dist is missing: run `bun scripts/build-web.ts` first");
  }
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

export interface TestPage {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors thrown in the page. */
  errors: string[];
}

/** A fresh context (no cookies, no storage) with one page `width` px wide. */
export async function newPage(browser: Browser, width = 1280): Promise<TestPage> {
  const context = await browser.newContext({ viewport: { width, height: 800 }, locale: "zh-CN" });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  return { context, page, errors };
}

/** Adds `csp: <directive> <blocked URI>` to `into` for every Content-Security-Policy violation of the page. */
export async function recordCspViolations(page: Page, into: string[]): Promise<void> {
  await page.exposeFunction("reportCspViolation", (text: string) => into.push(`csp: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      const report = (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation;
      report(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
}

/** Retries `read` until it deep-equals `expected` (bun:test has no expect.poll). */
export async function poll<T>(read: () => Promise<T>, expected: T, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let value = await read();
  while (!Bun.deepEquals(value, expected) && Date.now() < until) {
    await Bun.sleep(100);
    value = await read();
  }
  expect(value as unknown).toEqual(expected);
}

/** Decodes the envelope payload of a captured request. */
export function payloadOf(postData: string | null): Record<string, unknown> {
  const body = JSON.parse(postData ?? "{}") as { data: string };
  const decoded = fromBase64Json(body.data);
  if (!decoded.ok) throw new Error(decoded.reason);
  return decoded.value as Record<string, unknown>;
}

/**
 * Logs in through the login page and waits until it has gone home (it goes once, when the user
 * info arrives), so that navigating on afterwards is not undone.
 */
export async function loginInBrowser(page: Page, baseUrl: string, email: string, password: string) {
  await page.goto(`${baseUrl}/#/login`);
  await page.getByLabel("邮箱").fill(email);
  await page.getByLabel("邮箱").press("Enter");
  await page.getByLabel("密码").fill(password);
  await page.getByLabel("密码").press("Enter");
  await page.getByRole("button", { name: "用户菜单" }).waitFor();
  await page.waitForURL((url) => url.hash === "#/");
}

/**
 * Reloads the page and waits for the new document. Not `page.reload()`: its answer carries the
 * document's Response object, which playwright-core under Bun now and then fails to bind
 * ("Object with guid response@… was not bound in the connection"), failing a passing test.
 */
export async function reloadPage(page: Page) {
  await page.evaluate(() => {
    (window as { ferryBeforeReload?: boolean }).ferryBeforeReload = true;
    location.reload();
  });
  await page.waitForFunction(
    () =>
      !(window as { ferryBeforeReload?: boolean }).ferryBeforeReload && document.readyState === "complete",
  );
}

/** Full-page screenshots `<name>-1280.png` and `<name>-390.png`; leaves the page 1280 px wide. */
export async function screenshots(page: Page, name: string) {
  await page.waitForTimeout(300); // let transitions settle
  await page.screenshot({ path: join(SHOTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 800 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(SHOTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * axe-core's serious and critical violations on the page as it is, as `rule: target` lines (for a
 * test's own new screens; tests/e2e/a11y.test.ts scans every route with more detail).
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  const axe = (await import("axe-core")).default;
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const results = await (window as unknown as { axe: typeof import("axe-core") }).axe.run(document, {
      resultTypes: ["violations"],
    });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? "",
      targets: v.nodes.map((node) => node.target.map(String).join(" ")),
    }));
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.targets.map((target) => `${v.id}: ${target}`));
}
