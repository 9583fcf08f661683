/**
 * The node form and actions of /admin_agents in Debian's Chromium. A new node saves on the first try
 * with a name and an IP: its type's defaults fill every port (issue 12); a port left blank is marked
 * and focused, nothing sent. A node that never called the panel is 未连接 in grey, one that stopped
 * calling 异常 in red. A node turns 正常 with its running
 * version and update count once it calls the node API with its token; 重置更新次数 (confirmed)
 * zeroes the count; 获取更新命令 shows the one-line command with the node's id and token and
 * copies it; 升级节点 (confirmed) against a node that is not there shows 升级失败:节点无法连接,
 * and against a node whose agent runs the real control server shows 升级成功 with the agent's
 * executable swapped for the panel's. Screenshots land in test-results/.
 * Needs the SPA built first (`bun run build:web`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { type Agent, newNodeDefaults } from "../../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow } from "../../src/modules/node-record/service.ts";
import { startControlServer } from "../../src/node-program/control.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { serveAgentBinary } from "../nodes.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf, poll, SHOTS, screenshots } from "./chromium.ts";

const NEW_EXE = "#!/bin/sh\necho 'ferry new'\n";

let server: TestServer;
let browser: Browser;
let admin: ApiClient;
let adminEmail: string;
let adminPassword: string;
let dir: string;
let restoreAgent: () => void;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  const made = await loggedInClient(server, { role: "admin" });
  admin = made.client;
  adminEmail = made.email;
  adminPassword = made.password;
  ({ dir, restore: restoreAgent } = serveAgentBinary("ferry-admin-nodes-", NEW_EXE));
});
afterAll(async () => {
  restoreAgent?.();
  await browser?.close();
  await server?.close();
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const toast = (page: Page, text: string) =>
  page.locator(".toast-msg").filter({ hasText: new RegExp(`^${escapeRegExp(text)}$`) });
const rowOf = (page: Page, text: string) => page.getByRole("row").filter({ hasText: text });
/** 状态, 运行版本, 更新次数 of a node's row. */
const statusCells = async (page: Page, name: string) =>
  (await rowOf(page, name).getByRole("cell").allInnerTexts()).slice(4, 7);

async function addNode(name: string, ctrlPort: number): Promise<AgentRow> {
  const answer = await admin.call<Agent>("/api/admin/agents/update", {
    name,
    type: "v2ray",
    ip: "127.0.0.1",
    ctrl_port: ctrlPort,
    zz_port: 20000,
    port: 10000,
    public_port: 10000,
    serverType: "ubuntu_x86",
  });
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return (await findAgentRow(server.context, answer.data._id)) as AgentRow;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port as number;
  await probe.stop(true);
  return port;
}

async function confirmWith(page: Page, title: string, button: string) {
  const confirm = page.getByRole("dialog", { name: title });
  await confirm.getByRole("button", { name: button }).click();
  await confirm.waitFor({ state: "hidden" });
}

/** The error line an input is marked invalid with (aria-invalid, aria-describedby). */
async function errorOf(page: Page, input: Locator): Promise<string | null> {
  await poll(() => input.getAttribute("aria-invalid"), "true");
  const id = await input.getAttribute("aria-describedby");
  return page.locator(`[id="${id}"]`).textContent();
}

/** The 状态 badge of a node's row: its text and whether it is the grey, green or red one. */
async function statusBadge(page: Page, name: string) {
  const badge = rowOf(page, name).locator(".badge");
  const className = (await badge.getAttribute("class")) ?? "";
  const colour = ["badge-muted", "admin-status-ok", "network-status-error"].find((c) =>
    className.includes(c),
  );
  return { text: await badge.textContent(), colour };
}

describe("/admin_agents node form", () => {
  test("a new node saves on the first try with its type's defaults; a blank port is marked and focused", async () => {
    const { page, context, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, adminEmail, adminPassword);
    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("heading", { name: "节点管理" }).waitFor();
    await page.getByRole("button", { name: "添加" }).click();
    const form = page.getByRole("dialog", { name: "添加节点" });
    const field = (label: string) => form.getByLabel(label, { exact: true });
    const defaults = newNodeDefaults("v2ray");
    expect([
      await field("控制端口").inputValue(),
      await field("中转端口").inputValue(),
      await field("端口").inputValue(),
      await field("公开端口").inputValue(),
      await field("服务器类型").inputValue(),
    ]).toEqual([
      String(defaults.ctrl_port),
      String(defaults.zz_port),
      String(defaults.port),
      String(defaults.public_port),
      defaults.serverType,
    ]);
    await field("名称").fill("e2e 默认节点");
    await field("IP").fill("203.0.113.80");
    await screenshots(page, "admin-node-form");

    // A port emptied by hand: 请输入数字 under it, the focus on it, nothing sent.
    let sends = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/admin/agents/update")) sends += 1;
    });
    await field("中转端口").fill("");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await field("名称").focus();
      await form.getByRole("button", { name: "保存" }).click();
      expect(await errorOf(page, field("中转端口"))).toBe("请输入数字");
      await poll(() => field("中转端口").evaluate((input) => input === document.activeElement), true);
      await page.waitForTimeout(300); // let the dialog's scrolling settle
      await page.screenshot({ path: join(SHOTS, `admin-node-form-error-${width}.png`) });
    }
    expect(sends).toBe(0);

    // Back to the default: the first save goes through.
    await field("中转端口").fill(String(defaults.zz_port));
    const request = page.waitForRequest((r) => r.url().endsWith("/api/admin/agents/update"));
    await form.getByRole("button", { name: "保存" }).click();
    expect(payloadOf((await request).postData())).toMatchObject({
      name: "e2e 默认节点",
      ip: "203.0.113.80",
      type: "v2ray",
      ...defaults,
    });
    await toast(page, "添加成功").waitFor();
    await form.waitFor({ state: "hidden" });
    expect(sends).toBe(1);

    // Never called the panel: 未连接 in grey, not the red 异常.
    expect(await statusBadge(page, "e2e 默认节点")).toEqual({ text: "未连接", colour: "badge-muted" });
    await screenshots(page, "admin-node-never-connected");
    // Last heard from long ago (a day after the epoch): it stopped, 异常 in red.
    await server.context.db.run(
      "UPDATE agents SET last_seen_time = ? WHERE name = ?",
      86_400_000,
      "e2e 默认节点",
    );
    await page.reload();
    await rowOf(page, "e2e 默认节点").waitFor();
    expect(await statusBadge(page, "e2e 默认节点")).toEqual({ text: "异常", colour: "network-status-error" });
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("/admin_agents node actions", () => {
  test("status, version and update count; reset; the update command; upgrade failing and succeeding", async () => {
    const port = await closedPort();
    const node = await addNode("e2e 升级节点", port);
    const { context, page, errors } = await newPage(browser, 1280);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await loginInBrowser(page, server.url, adminEmail, adminPassword);
    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("heading", { name: "节点管理" }).waitFor();
    await rowOf(page, "e2e 升级节点").waitFor();
    expect(await statusCells(page, "e2e 升级节点")).toEqual(["未连接", "-", "0"]);

    // The node's agent calls the node API with its token: normal, its version, one update.
    const config = await fetch(
      `${server.url}/api/v1/server/UniProxy/config?node_type=ferry&node_id=${node.node_no}&token=${node.api_token}`,
      { headers: { "user-agent": "ferry-agent/0.1.0" } },
    );
    expect(config.status).toBe(200);
    await page.reload();
    await rowOf(page, "e2e 升级节点").waitFor();
    expect(await statusCells(page, "e2e 升级节点")).toEqual(["正常", "0.1.0", "1"]);

    // 重置更新次数, after confirming.
    await page.getByRole("button", { name: "重置更新次数" }).click();
    await confirmWith(page, "重置确认", "重置");
    await toast(page, "更新成功").waitFor();
    await poll(() => statusCells(page, "e2e 升级节点"), ["正常", "0.1.0", "0"]);

    // 获取更新命令: the one-line command with this node's id and token, copied on request.
    await rowOf(page, "e2e 升级节点").getByRole("button", { name: "获取更新命令" }).click();
    const commandDialog = page.getByRole("dialog", { name: "更新命令" });
    const command = (await commandDialog.locator("pre").textContent()) ?? "";
    expect(command).toBe(
      `curl -fsSL '${server.url}/node/install.sh?server_type=ubuntu_x86' | sh -s -- ` +
        `--panel '${server.url}' --node-id ${node.node_no} --token ${node.api_token}`,
    );
    await screenshots(page, "admin-node-command");
    await commandDialog.getByRole("button", { name: "复制" }).click();
    await toast(page, "命令已复制到剪贴板").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(command);
    await commandDialog.getByText("关闭", { exact: true }).click();
    await commandDialog.waitFor({ state: "hidden" });

    // 升级节点 against a node whose control port nobody answers: cancel first, then confirm.
    let upgrades = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/admin/agents/upgrade_agentserver")) upgrades += 1;
    });
    await rowOf(page, "e2e 升级节点").getByRole("button", { name: "升级节点" }).click();
    await confirmWith(page, "升级确认", "取消");
    expect(upgrades).toBe(0);
    await rowOf(page, "e2e 升级节点").getByRole("button", { name: "升级节点" }).click();
    await confirmWith(page, "升级确认", "升级");
    await toast(page, `升级失败:节点无法连接（127.0.0.1:${port}）`).waitFor();
    expect(upgrades).toBe(1);

    // Now the agent is there, running the real control server on that port.
    const exe = join(dir, "ferry-on-node");
    writeFileSync(exe, "#!/bin/sh\necho 'ferry old'\n", { mode: 0o755 });
    const control = startControlServer({
      host: "127.0.0.1",
      port,
      token: node.api_token,
      panelUrl: server.url,
      exe,
      agent: {
        sync: async () => ({ users: 0 }),
        status: () => ({ version: "0.1.0", users: 0, core: "running", pendingReports: 0, lastPushTime: 0 }),
        upgraded: () => {},
      },
    });
    try {
      await rowOf(page, "e2e 升级节点").getByRole("button", { name: "升级节点" }).click();
      await confirmWith(page, "升级确认", "升级");
      await toast(page, "升级成功").waitFor();
      expect(readFileSync(exe, "utf8")).toBe(NEW_EXE);
    } finally {
      await control.stop();
    }
    await screenshots(page, "admin-nodes");
    expect(errors).toEqual([]);
    await context.close();
  });
});

/** The left and right edge of every button in the row. */
async function buttonEdges(page: Page, name: string) {
  const row = rowOf(page, name);
  const boxes = await row.getByRole("button").evaluateAll((buttons) =>
    buttons.map((button) => {
      const box = button.getBoundingClientRect();
      return { label: button.textContent ?? "", left: box.left, right: box.right };
    }),
  );
  return boxes;
}

describe("/admin_agents layout", () => {
  test("at 1280 px every row action, 异常上报 included, is in view; the rest of a node is in 详情", async () => {
    const node = await addNode("e2e 香港 BGP 宽度节点 01", 888);
    await server.context.db.run(
      "UPDATE agents SET \"desc\" = ?, host = ?, ip = ?, country_code = 'HK' WHERE id = ?",
      "香港 BGP 线路，晚高峰较稳定，适合游戏与视频",
      "hk.example.com",
      "2001:db8:85a3::8a2e:370:7334",
      node.id,
    );
    // The node reports a user it was not given: the row gets an 异常上报 count to open.
    const stranger = await loggedInClient(server);
    await server.context.db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", GB, stranger.user.id);
    const push = await fetch(
      `${server.url}/api/v1/server/UniProxy/push?node_type=ferry&node_id=${node.node_no}&token=${node.api_token}`,
      {
        method: "POST",
        body: JSON.stringify({ [stranger.user.node_uid]: [0, GB] }),
        headers: { "user-agent": "ferry-agent/0.1.0" },
      },
    );
    expect(push.status).toBe(200);

    const { page, context, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, adminEmail, adminPassword);
    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("heading", { name: "节点管理" }).waitFor();
    await rowOf(page, "e2e 香港 BGP 宽度节点 01").waitFor();

    const labels = ["详情", "对账", "编辑", "复制", "升级节点", "获取更新命令", "删除"];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await page.waitForTimeout(200);
      const edges = await buttonEdges(page, "e2e 香港 BGP 宽度节点 01");
      // 1280: the anomaly count and every action; 390: the actions (the sticky column).
      const expected = width === 1280 ? ["1", ...labels] : labels;
      const inView = edges.filter((edge) => edge.left >= 0 && edge.right <= width).map((edge) => edge.label);
      expect(inView).toEqual(expect.arrayContaining(expected));
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    // Nothing to scroll at 1280: the table fits its container.
    expect(
      await page.locator(".admin-list .table-wrap").evaluate((wrap) => wrap.scrollWidth <= wrap.clientWidth),
    ).toBe(true);
    await screenshots(page, "admin-nodes-layout");

    // 详情 holds what left the table: ports, warp, logging, the description, the install flavour.
    await rowOf(page, "e2e 香港 BGP 宽度节点 01").getByRole("button", { name: "详情" }).click();
    const details = page.getByRole("dialog", { name: "节点详情：e2e 香港 BGP 宽度节点 01" });
    await details.waitFor();
    const facts = await details
      .locator("dl")
      .evaluate((list) =>
        Object.fromEntries(
          [...list.querySelectorAll("dt")].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]),
        ),
      );
    expect(facts).toMatchObject({
      名称: "e2e 香港 BGP 宽度节点 01",
      类型: "v2ray",
      IP: "2001:db8:85a3::8a2e:370:7334",
      国家: "🇭🇰 香港",
      "域名（WS/TLS，可空）": "hk.example.com",
      控制端口: "888",
      中转端口: "20000",
      端口: "10000",
      公开端口: "10000",
      "Warp 分流": "关",
      日志: "关",
      服务器类型: "Ubuntu x86",
      描述: "香港 BGP 线路，晚高峰较稳定，适合游戏与视频",
      状态: "正常",
      运行版本: "0.1.0",
      更新次数: "0",
      异常上报: "1",
    });
    await screenshots(page, "admin-node-details");
    await details.getByRole("button", { name: "关闭" }).first().click();
    await details.waitFor({ state: "hidden" });
    expect(errors).toEqual([]);
    await context.close();
  });
});
