/**
 * 节点管理 → 对账 in Debian's Chromium (issue 32): a node's last business days, charged against
 * expected, with the statistics page's chart; a day diverging by hand is marked 不符 in the table
 * and ⚠ on the chart's axis. axe at 1280 and 390 px. Needs the SPA built first (`bun run build:web`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { businessDay } from "../../src/lib/time.ts";
import { GB } from "../../src/lib/traffic.ts";
import { lineInput } from "../../src/modules/line/schema.ts";
import { saveLine } from "../../src/modules/line/service.ts";
import { checkPush } from "../../src/modules/node-api/report.ts";
import { applyNodeReport } from "../../src/modules/traffic/charge.ts";
import { newId } from "../../src/rpc/ids.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { saveNode } from "../nodes.ts";
import { chargeAtFaceValue, customerWithPackage, noonOfDay, noonZone, pullUserListOf } from "../traffic.ts";
import { launchChromium, loginInBrowser, newPage, screenshots, seriousAxeViolations } from "./chromium.ts";

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

describe("/admin_agents 对账", () => {
  test("the node's days with charged and expected bytes and a chart; a diverging day is marked", async () => {
    const zone = noonZone();
    await chargeAtFaceValue(server, zone);
    const admin = await loggedInClient(server, { role: "admin" });
    const agent = await saveNode(server, { name: "e2e 对账节点", ip: "203.0.113.7" });
    await saveLine(
      server.context,
      lineInput.parse({ name: "TCP", agentID: agent._id, protocol: "vmesh_tcp", bridge: "none", scale: 1.5 }),
    );
    const customer = await customerWithPackage(server, {
      traffic: 1000 * GB,
      now: Date.now(),
      timeZone: zone,
    });
    await pullUserListOf(server, agent._id);
    // Six business days of reports, the oldest first: day k moved (k + 1) × 100 MB down.
    const now = Date.now();
    for (let k = 0; k < 6; k++) {
      const at = noonOfDay(now, k - 5, zone);
      const usage = checkPush(JSON.stringify({ [customer.node_uid]: [0, (k + 1) * 100 * 1024 * 1024] }));
      if (!usage.ok) throw new Error(usage.message);
      await applyNodeReport(server.context, {
        agentId: agent._id,
        reportId: newId(),
        inbound: "vmesh_tcp",
        usage: usage.value,
        now: at,
      });
    }
    const diverging = businessDay(noonOfDay(now, -2, zone), zone);
    await server.context.db.run(
      "UPDATE node_reconcile_days SET charged_bytes = charged_bytes * 2 WHERE agent_id = ? AND day = ?",
      agent._id,
      diverging,
    );

    const { page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, admin.email, admin.password);
    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("heading", { name: "节点管理" }).waitFor();
    const row = page.getByRole("row").filter({ hasText: "e2e 对账节点" });
    await row.getByRole("button", { name: "对账" }).click();
    const dialog = page.getByRole("dialog", { name: "对账：e2e 对账节点" });
    await dialog.waitFor();
    await dialog.locator(".stats-chart canvas").first().waitFor();
    await expect(dialog.getByRole("heading", { name: "计费与应计（MB）" }).count()).resolves.toBe(1);

    const rows = dialog.getByRole("table", { name: "对账" }).getByRole("row");
    // A header and six days, newest first.
    expect(await rows.count()).toBe(7);
    const today = businessDay(now, zone);
    const cells = await rows.nth(1).getByRole("cell").allInnerTexts();
    expect(cells).toEqual([today, "1", "0.59 G", "0.00 G", "0.88 G", "0.88 G", "相符"]);
    const marked = await rows.filter({ hasText: diverging }).getByRole("cell").allInnerTexts();
    expect(marked[6]).toBe("不符 100.00%");
    expect(await dialog.getByText("不符", { exact: false }).count()).toBeGreaterThan(0);
    expect(await dialog.getByText("共 1 天不符。", { exact: false }).count()).toBe(1);

    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await page.waitForTimeout(300);
      expect(await seriousAxeViolations(page)).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await screenshots(page, "admin-node-reconcile");
    await dialog.getByRole("button", { name: "关闭" }).first().click();
    await dialog.waitFor({ state: "hidden" });
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
