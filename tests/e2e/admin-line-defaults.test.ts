/**
 * 线路管理's new line in Debian's Chromium (issue 26 D17): while no entry exists, a line on a
 * v2ray or Reality node starts 直连 and saves as it opened; once an entry exists it starts 中转
 * (seed 001 §2.9) with the entry to choose. Needs the SPA built first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { AgentLine } from "../../src/modules/line/schema.ts";
import { type Agent, newNodeDefaults } from "../../src/modules/node-record/schema.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf } from "./chromium.ts";

let server: TestServer;
let browser: Browser;
let admin: ApiClient;
let adminEmail: string;
let adminPassword: string;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  ({
    client: admin,
    email: adminEmail,
    password: adminPassword,
  } = await loggedInClient(server, {
    role: "admin",
  }));
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function addNode(name: string, type: Agent["type"], host = ""): Promise<Agent> {
  const answer = await admin.call<Agent>("/api/admin/agents/update", {
    ...newNodeDefaults(type),
    name,
    type,
    ip: "203.0.113.70",
    host,
  });
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data;
}

/** Opens 线路管理 afresh (its lists load again), then 添加线路, and picks `node`. */
async function startLine(page: Page, node: string) {
  await page.goto(`${server.url}/#/admin_agents`);
  await page.getByRole("heading", { name: "节点管理" }).waitFor();
  const entries = page.waitForResponse((r) => r.url().endsWith("/api/admin/entrys/list"));
  await page.goto(`${server.url}/#/admin_agentLines`);
  await page.getByRole("heading", { name: "线路管理" }).waitFor();
  await entries;
  await page.getByRole("button", { name: "添加" }).click();
  const form = page.getByRole("dialog", { name: "添加线路" });
  await form.getByLabel("节点", { exact: true }).selectOption({ label: node });
  return form;
}

describe("a new line's bridge", () => {
  test("直连 while there is no entry, 中转 once there is one", async () => {
    await addNode("默认 v2ray", "v2ray");
    await addNode("默认 Reality", "reality", "www.example.com");
    const { page, context, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, adminEmail, adminPassword);

    let form = await startLine(page, "默认 v2ray（v2ray）");
    const bridge = () => form.getByLabel("桥接方式", { exact: true }).inputValue();
    expect([await form.getByLabel("协议", { exact: true }).inputValue(), await bridge()]).toEqual([
      "vmesh_tcp",
      "none",
    ]);
    expect(await form.getByText("暂无入口。").count()).toBe(0);
    // It saves as it opened: nothing to fix first.
    await form.getByLabel("线路名称", { exact: true }).fill("直连线路");
    const sent = page.waitForRequest((r) => r.url().endsWith("/api/admin/agent_line/update"));
    await form.getByRole("button", { name: "保存" }).click();
    expect(payloadOf((await sent).postData())).toMatchObject({ bridge: "none", entryID: "" });
    await form.waitFor({ state: "hidden" });
    const lines = await admin.call<AgentLine[]>("/api/admin/agent_line/list", {});
    expect(lines.data.map((line) => [line.name, line.protocol, line.bridge])).toEqual([
      ["直连线路", "vmesh_tcp", "none"],
    ]);

    form = await startLine(page, "默认 Reality（reality）");
    expect(await bridge()).toBe("none");
    await form.getByRole("button", { name: "取消" }).click();

    // With an entry, the seed's 中转 and the entry to choose.
    const entry = await admin.call("/api/admin/entrys/update", {
      name: "默认入口",
      ipList: ["198.51.100.70"],
    });
    expect(entry.code).toBe(0);
    form = await startLine(page, "默认 v2ray（v2ray）");
    expect(await bridge()).toBe("report");
    await form.getByLabel("入口", { exact: true }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
