/**
 * 异常上报 on /admin_agents in Debian's Chromium (issue 11): a node that reports traffic for a user
 * it was not given charges nobody, its row counts the anomaly, and the count opens the users and
 * days it concerns. Needs the SPA built first (`bun run build:web`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { Agent } from "../../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow } from "../../src/modules/node-record/service.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { findUserById } from "../../src/modules/user/service.ts";
import { loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, screenshots } from "./chromium.ts";

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

describe("/admin_agents 异常上报", () => {
  test("the row counts what a node reported for a user it was not given; the count opens the detail", async () => {
    const admin = await loggedInClient(server, { role: "admin" });
    const answer = await admin.client.call<Agent>("/api/admin/agents/update", {
      name: "e2e 异常节点",
      type: "v2ray",
      ip: "127.0.0.1",
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
    });
    const node = (await findAgentRow(server.context, answer.data._id)) as AgentRow;
    const victim = await loggedInClient(server);
    await server.context.db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", 10 * GB, victim.user.id);

    const push = await fetch(
      `${server.url}/api/v1/server/UniProxy/push?node_type=ferry&node_id=${node.node_no}&token=${node.api_token}`,
      { method: "POST", body: JSON.stringify({ [victim.user.node_uid]: [0, 3 * GB] }) },
    );
    expect(push.status).toBe(200);
    expect(((await findUserById(server.context, victim.user.id)) as UserRow).traffic).toBe(10 * GB);

    const { page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, admin.email, admin.password);
    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("heading", { name: "节点管理" }).waitFor();
    await page.getByRole("columnheader", { name: "异常上报" }).waitFor();
    await page.getByRole("button", { name: "e2e 异常节点 异常上报 1 条" }).click();
    const dialog = page.getByRole("dialog", { name: "异常上报：e2e 异常节点" });
    await dialog.waitFor();
    const row = dialog.getByRole("row").filter({ hasText: victim.email });
    await row.waitFor();
    const cells = await row.getByRole("cell").allInnerTexts();
    expect(cells.slice(1, 6)).toEqual([
      String(victim.user.node_uid),
      victim.email,
      "不在该节点的用户列表",
      "0.00 G",
      "3.00 G",
    ]);
    await screenshots(page, "admin-node-anomalies");
    await dialog.getByRole("button", { name: "关闭" }).first().click();
    await dialog.waitFor({ state: "hidden" });
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
