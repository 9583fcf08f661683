/**
 * Issue 28 item 5 in Debian's Chromium: 集群状态 on 运维日志 lists each replica (this server and a
 * second one that stopped reporting, 离线) with the jobs whose leases it holds; at 390 px the table
 * scrolls sideways with the replica's id kept in view; an empty list says 暂无副本. Screenshots at
 * 1280 and 390 px land in test-results/. Needs the SPA built first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { JOB_NAMES } from "../../src/cluster/leases.ts";
import { toBase64Json } from "../../src/rpc/envelope.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, reloadPage, screenshots } from "./chromium.ts";

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

const section = (page: Page) => page.locator("section.cluster-status");
const rows = (page: Page) => section(page).locator("tbody tr");

test("an admin sees each replica, whether it is online and the jobs it holds, at 1280 and 390 px", async () => {
  const admin = await loggedInClient(server, { role: "admin" });
  const lastSeen = Date.now() - 5 * 60_000;
  await server.context.db.run(
    `INSERT INTO replicas (id, host, port, pid, version, started_time, last_seen)
       VALUES ('0badc0ffee000000', 'web-2.example.internal', 3000, 4242, '0.0.9', ?, ?)`,
    lastSeen - 3_600_000,
    lastSeen,
  );

  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.goto(`${server.url}/#/admin_error`);
  await page.getByRole("heading", { name: "运维日志" }).waitFor();
  await section(page).getByRole("heading", { name: "集群状态" }).waitFor();
  await poll(() => rows(page).count(), 2);

  const offline = await rows(page).nth(0).getByRole("cell").allInnerTexts();
  expect(offline).toEqual([
    "0badc0ffee000000",
    "web-2.example.internal:3000",
    "4242",
    "0.0.9",
    expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    "离线",
    "无",
  ]);
  const online = await rows(page).nth(1).getByRole("cell").allInnerTexts();
  expect(online.slice(0, 4)).toEqual([
    server.replica.id,
    `${server.replica.host}:${server.port}`,
    String(process.pid),
    server.replica.version,
  ]);
  expect(online[6]).toBe("在线");
  expect(await rows(page).nth(1).getByRole("cell").nth(7).locator("code").allInnerTexts()).toEqual(
    [...JOB_NAMES].sort(),
  );
  await screenshots(page, "admin-cluster-status");

  // 390 px: the table scrolls sideways inside its frame (a tab stop named after it), and the
  // replica's id stays at the frame's left edge while it does.
  await page.setViewportSize({ width: 390, height: 800 });
  const frame = section(page).getByRole("region", { name: "集群状态" });
  await frame.waitFor();
  expect(await frame.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  const idCell = rows(page).nth(1).getByRole("cell").first();
  const before = await idCell.boundingBox();
  await frame.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
  await poll(async () => await frame.evaluate((el) => el.scrollLeft > 0), true);
  const after = await idCell.boundingBox();
  expect(after?.x).toBe(before?.x as number);
  expect(errors).toEqual([]);
  await context.close();
  await server.context.db.run("DELETE FROM replicas WHERE id = '0badc0ffee000000'");
});

test("an empty list says 暂无副本", async () => {
  const admin = await loggedInClient(server, { role: "admin" });
  const { context, page, errors } = await newPage(browser, 1280);
  await loginInBrowser(page, server.url, admin.email, admin.password);
  await page.route("**/api/admin/replicas", (route) =>
    route.fulfill({
      contentType: "application/json",
      body: JSON.stringify({ data: toBase64Json({ code: 0, data: [], msg: "ok" }) }),
    }),
  );
  await page.goto(`${server.url}/#/admin_error`);
  await section(page).getByRole("cell", { name: "暂无副本" }).waitFor();
  await reloadPage(page);
  await section(page).getByRole("cell", { name: "暂无副本" }).waitFor();
  expect(errors).toEqual([]);
  await context.close();
});
