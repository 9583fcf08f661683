/**
 * The first page is small (issue 18 §1), under the security headers the server always sends: a
 * customer's first visit to `/#/login` downloads at most 120 KB gzip of JavaScript and CSS, the
 * dashboard at most 150 KB, with no console error and no CSP violation, and no page other than the
 * one shown (the back office above all) comes with it: app.js and app.css alone (issue 31). The
 * dashboard comes as a page, with the pages' styles. A back-office page is fetched on its first
 * visit, with the loading spinner while it comes. Sizes, not times (tests/e2e/first-visit.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import type { Browser } from "playwright-core";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, newPage, poll } from "./chromium.ts";
import { firstVisit } from "./first-visit.ts";

const KB = 1000;
const webDir = join(import.meta.dir, "../../web");

/** Component files of the pages (web/pages/**); esbuild names a page's chunk after its file. */
function pageNames(dir: string): Set<string> {
  return new Set(
    readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".tsx"))
      .map((file) => basename(file, ".tsx")),
  );
}
const ADMIN_PAGES = pageNames(join(webDir, "pages/admin"));
const ALL_PAGES = pageNames(join(webDir, "pages"));

/** `/chunks/Config-AB12CD34.js` → `Config`; shared chunks (`chunk-…`) → undefined. */
const chunkPage = (path: string) => /^\/chunks\/(.+)-[A-Z0-9]+\.js$/.exec(path)?.[1];

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

describe("the first page is small", () => {
  test("the SPA is served with its Content-Security-Policy", async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.headers.get("content-security-policy")).not.toContain("unsafe-eval");
  });

  test("/#/login: at most 120 KB of JS and CSS, no console error, no CSP violation, no other page", async () => {
    const visit = await firstVisit(browser, server.url, "/login", {
      ready: (page) => page.getByLabel("邮箱").waitFor(),
    });
    expect(visit.problems).toEqual([]);
    expect(visit.jsGzipBytes + visit.cssGzipBytes).toBeLessThanOrEqual(120 * KB);
    const pages = visit.downloads.map((d) => chunkPage(d.path)).filter((name) => name !== undefined);
    expect(pages.filter((name) => ADMIN_PAGES.has(name))).toEqual([]);
    expect(pages.filter((name) => ALL_PAGES.has(name) || name === "GuidePage")).toEqual([]);
    // Two files (issue 31): the modules app.js shares with pages are bundled into it, and the
    // styles of the other pages (pages.css) come with the first of them.
    expect(visit.downloads.map((d) => d.path).sort()).toEqual(["/app.css", "/app.js"]);
  });

  test("logging in from the first page works under the policy and loads the dashboard", async () => {
    const customer = await loggedInClient(server);
    const { context, page } = await newPage(browser, 1280);
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(`${server.url}/#/login`);
    await page.getByLabel("邮箱").fill(customer.email);
    await page.getByLabel("密码").fill(customer.password);
    await page.getByLabel("密码").press("Enter");
    await page.getByRole("heading", { name: "不限时流量" }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  test("the dashboard, logged in: at most 150 KB, no back-office chunk", async () => {
    const customer = await loggedInClient(server);
    const visit = await firstVisit(browser, server.url, "/", {
      cookies: customer.client.cookies,
      ready: (page) => page.getByRole("heading", { name: "不限时流量" }).waitFor(),
    });
    expect(visit.problems).toEqual([]);
    expect(visit.jsGzipBytes + visit.cssGzipBytes).toBeLessThanOrEqual(150 * KB);
    const pages = visit.downloads.map((d) => chunkPage(d.path)).filter((name) => name !== undefined);
    expect(pages.filter((name) => ADMIN_PAGES.has(name))).toEqual([]);
    // The dashboard is fetched as a page, with the page styles.
    expect(pages).toContain("Home");
    expect(visit.downloads.map((d) => d.path)).toContain("/pages.css");
  });

  test("a back-office page is fetched on its first visit, with the loading spinner meanwhile", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const { context, page } = await newPage(browser, 1280);
    await context.addCookies(
      [...admin.client.cookies].map(([name, value]) => ({ name, value, url: server.url })),
    );
    // The page's chunk is held back until the spinner has been seen.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fetched: string[] = [];
    await page.route(/\/chunks\/Config-[A-Z0-9]+\.js$/, async (route) => {
      fetched.push(new URL(route.request().url()).pathname);
      await held;
      await route.continue();
    });
    await page.goto(`${server.url}/#/admin_config`);
    // Requested only once the session is known and the page is to be shown: the spinner stays.
    await poll(async () => fetched.length, 1);
    await page.getByRole("status", { name: "加载中" }).waitFor();
    expect(await page.getByRole("heading", { name: "配置管理" }).count()).toBe(0);
    release();
    await page.getByLabel("站点地址").waitFor();
    expect(fetched).toHaveLength(1);
    await context.close();
  });
});
