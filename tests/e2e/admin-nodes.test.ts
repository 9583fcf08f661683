/**
 * The node actions of /admin_agents in Debian's Chromium: a node turns 正常 with its running
 * version and update count once it calls the node API with its token; 重置更新次数 (confirmed)
 * zeroes the count; 获取更新命令 shows the one-line command with the node's id and token and
 * copies it; 升级节点 (confirmed) against a node that is not there shows 升级失败:节点无法连接,
 * and against a node whose agent runs the real control server shows 升级成功 with the agent's
 * executable swapped for the panel's. Screenshots land in test-results/.
 * Needs the SPA built first (`bun run build:web`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import type { Agent } from "../../src/modules/agent/schema.ts";
import { type AgentRow, findAgentRow } from "../../src/modules/agent/service.ts";
import { startControlServer } from "../../src/node/agent/control.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, poll, screenshots } from "./chromium.ts";

const NEW_EXE = "#!/bin/sh\necho 'ferry new'\n";

let server: TestServer;
let browser: Browser;
let admin: ApiClient;
let adminEmail: string;
let adminPassword: string;
let dir: string;
const savedAgentEnv = process.env.FERRY_AGENT_BINARY;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  const made = await loggedInClient(server, { role: "admin" });
  admin = made.client;
  adminEmail = made.email;
  adminPassword = made.password;
  dir = mkdtempSync(join(tmpdir(), "ferry-admin-nodes-"));
  const served = join(dir, "served-ferry");
  writeFileSync(served, NEW_EXE);
  process.env.FERRY_AGENT_BINARY = served;
});
afterAll(async () => {
  process.env.FERRY_AGENT_BINARY = savedAgentEnv;
  await browser?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const toast = (page: Page, text: string) =>
  page.locator(".toast-msg").filter({ hasText: new RegExp(`^${escapeRegExp(text)}$`) });
const rowOf = (page: Page, text: string) => page.getByRole("row").filter({ hasText: text });
/** 状态, 运行版本, 更新次数 of a node's row. */
const statusCells = async (page: Page, name: string) =>
  (await rowOf(page, name).getByRole("cell").allInnerTexts()).slice(10, 13);

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
  return findAgentRow(server.context, answer.data._id) as AgentRow;
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
    expect(await statusCells(page, "e2e 升级节点")).toEqual(["异常", "-", "0"]);

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
