/**
 * The node back office in Debian's Chromium: while there is no entry the line form's entry field
 * links to 入口管理; an admin adds an entry, a Reality node (the type's defaults fill the ports;
 * warp and logging go away) and a line relayed through the entry (the entry field only for 中转; a
 * fixed name with a count of 2 is refused on the count, before sending), and the line then shows
 * up in a customer's v2ray subscription fetched over HTTP. Then the line form against h2 and
 * v2ray nodes (CDN for VMess WebSocket), the node filter, copy, 复制日志, 重置流量 and deletes.
 * Screenshots of the three screens at 1280 and 390 px land in test-results/. The tests run in
 * order and build on each other's records (one server for the file).
 * Needs the SPA built first (`bun run build:web`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { Entry } from "../../src/modules/entry/schema.ts";
import { type AgentLine, FIX_NAME_REFUSAL } from "../../src/modules/line/schema.ts";
import type { Agent } from "../../src/modules/node-record/schema.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { ApiClient, startTestServer, type TestServer, uniqueEmail } from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, payloadOf, poll, SHOTS } from "./chromium.ts";

const PASSWORD = "password123";

let server: TestServer;
let browser: Browser;
let adminEmail: string;
let admin: ApiClient;
let subscriber: UserRow;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  adminEmail = uniqueEmail("admin");
  const passwordDigest = transformPassword(PASSWORD);
  await createUser(server.context, { email: adminEmail, passwordDigest, type: "admin" });
  admin = new ApiClient(server.url);
  expect((await admin.login(adminEmail, PASSWORD)).code).toBe(0);
  // A customer with 10 G of permanent traffic, set straight in the database.
  subscriber = await createUser(server.context, { email: uniqueEmail("subscriber"), passwordDigest });
  await server.context.db.run("UPDATE balances SET traffic = ? WHERE user_id = ?", 10 * GB, subscriber.id);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const login = (page: Page) => loginInBrowser(page, server.url, adminEmail, PASSWORD);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The toast that says exactly `text` (or starts with it, for failures with a server message). */
const toast = (page: Page, text: string, match: "exact" | "prefix" = "exact") =>
  page
    .locator(".toast-msg")
    .filter({ hasText: new RegExp(`^${escapeRegExp(text)}${match === "exact" ? "$" : ""}`) });
const dialog = (page: Page, title: string) => page.getByRole("dialog", { name: title });
const rowOf = (page: Page, text: string) => page.getByRole("row").filter({ hasText: text });
/** The cells of the row with `text`, once that row is on screen (a save reloads the list after the toast). */
async function cellsOf(page: Page, text: string) {
  const row = rowOf(page, text);
  await row.waitFor();
  return row.getByRole("cell").allInnerTexts();
}
/** The error line an input is marked invalid with (aria-invalid, aria-describedby). */
async function errorOf(page: Page, input: Locator): Promise<string | null> {
  await poll(() => input.getAttribute("aria-invalid"), "true");
  const id = await input.getAttribute("aria-describedby");
  return page.locator(`[id="${id}"]`).textContent();
}

/** The request the next click sends to `path`, decoded. */
async function sent(page: Page, path: string, click: () => Promise<unknown>) {
  const request = page.waitForRequest((r) => r.url().endsWith(path));
  await click();
  return payloadOf((await request).postData());
}

async function ok<T>(path: string, payload: unknown = {}): Promise<T> {
  const answer = await admin.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

/** The share links of the customer's v2ray subscription, as v2rayN reads it (base64 list). */
async function subscriptionLinks(): Promise<
  { scheme: string; name: string; hostPort: string; id: string }[]
> {
  const response = await fetch(`${server.url}/api/subscript/v2ray/${subscriber.id}/${subscriber.userkey}`);
  expect(response.status).toBe(200);
  const list = Buffer.from(await response.text(), "base64").toString("utf8");
  return (
    list
      .split("\n")
      // The profile's `#key: value` lines come first; v2rayN skips what is not a link.
      .filter((line) => line.trim() !== "" && !line.startsWith("#"))
      .map((uri) => {
        const scheme = uri.slice(0, uri.indexOf("://"));
        if (scheme === "vmess") {
          const json = JSON.parse(Buffer.from(uri.slice("vmess://".length), "base64").toString("utf8"));
          return { scheme, name: json.ps, hostPort: `${json.add}:${json.port}`, id: json.id };
        }
        const url = new URL(uri);
        return { scheme, name: decodeURIComponent(url.hash.slice(1)), hostPort: url.host, id: url.username };
      })
  );
}

describe("admin nodes, entries and lines", () => {
  test("an entry, a Reality node and a relayed line added in the browser reach a customer's subscription", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await login(page);

    // No entry yet: a new line starts 直连 (issue 26 D17); choosing 中转 says there is no entry
    // where it is chosen and links to 入口管理.
    await page.goto(`${server.url}/#/admin_agentLines`);
    await page.getByRole("heading", { name: "线路管理" }).waitFor();
    await page.getByRole("button", { name: "添加" }).click();
    const noEntry = dialog(page, "添加线路");
    expect(await noEntry.getByLabel("桥接方式", { exact: true }).inputValue()).toBe("none");
    expect(await noEntry.getByText("暂无入口。").count()).toBe(0);
    await noEntry.getByLabel("桥接方式", { exact: true }).selectOption({ label: "中转" });
    expect(await noEntry.getByLabel("入口", { exact: true }).count()).toBe(0);
    await noEntry.getByText("暂无入口。").waitFor();
    await page.waitForTimeout(300); // let the dialog's fade-in finish
    await page.screenshot({ path: join(SHOTS, "admin_agentLines-no-entry-1280.png") });
    await noEntry.getByRole("link", { name: "入口管理" }).click();
    await page.waitForURL((url) => url.hash === "#/admin_entrys");
    await noEntry.waitFor({ state: "detached" });

    // The entry: an IP list typed one address a line.
    await page.getByRole("heading", { name: "入口管理" }).waitFor();
    await page.getByRole("cell", { name: "暂无记录" }).waitFor();
    await page.getByRole("button", { name: "添加" }).click();
    const entryForm = dialog(page, "添加入口");
    await entryForm.getByLabel("名称", { exact: true }).fill("e2e 入口");
    await entryForm.getByLabel("默认IP", { exact: true }).fill("198.51.100.9");
    await entryForm.getByLabel("IP列表", { exact: true }).fill("198.51.100.21\n\n 198.51.100.22 \n");
    const entrySent = await sent(page, "/api/admin/entrys/update", () =>
      entryForm.getByRole("button", { name: "保存" }).click(),
    );
    expect(entrySent).toEqual({
      name: "e2e 入口",
      index: 0,
      ip: "198.51.100.9",
      ipList: ["198.51.100.21", "198.51.100.22"],
      desc: "",
      visible: true,
    });
    await toast(page, "添加成功").waitFor();
    await entryForm.waitFor({ state: "hidden" });
    expect((await cellsOf(page, "e2e 入口")).slice(0, 6)).toEqual([
      "0",
      "e2e 入口",
      "198.51.100.9",
      "198.51.100.21\n198.51.100.22",
      "",
      "可用",
    ]);
    await poll(() => toast(page, "添加成功").count(), 0);

    // The node: v2ray defaults first, then reality's (seed 001 §2.3.1).
    await page.goto(`${server.url}/#/admin_agents`);
    await page.getByRole("heading", { name: "节点管理" }).waitFor();
    await page.getByRole("cell", { name: "暂无记录" }).waitFor();
    await page.getByRole("button", { name: "添加" }).click();
    const nodeForm = dialog(page, "添加节点");
    const field = (label: string) => nodeForm.getByLabel(label, { exact: true });
    expect(await field("类型").inputValue()).toBe("v2ray");
    expect(await field("控制端口").inputValue()).toBe("888");
    expect(await field("服务器类型").inputValue()).toBe("ubuntu_x86");
    expect(await nodeForm.getByRole("switch", { name: "Warp 分流" }).count()).toBe(1);
    expect(await nodeForm.getByRole("switch", { name: "日志" }).count()).toBe(1);
    expect(await field("域名（WS/TLS，可空）").count()).toBe(1);

    await field("类型").selectOption("reality");
    expect(await field("控制端口").inputValue()).toBe("888");
    expect(await field("中转端口").inputValue()).toBe("443");
    expect(await field("端口").inputValue()).toBe("443");
    expect(await field("公开端口").inputValue()).toBe("443");
    expect(await field("服务器类型").inputValue()).toBe("ubuntu_reality");
    expect(await nodeForm.getByRole("switch", { name: "Warp 分流" }).count()).toBe(0);
    expect(await nodeForm.getByRole("switch", { name: "日志" }).count()).toBe(0);
    expect(await field("SS 加密方式").count()).toBe(0);

    // The country list comes from /country/country.json: flag and name.
    await poll(async () => (await field("国家").locator("option").count()) > 1, true);
    await field("国家").selectOption({ label: "🇯🇵 日本" });
    await field("名称").fill("东京 Reality");
    await field("IP").fill("203.0.113.50");
    await field("伪装域名（SNI）").fill("www.microsoft.com");
    const nodeSent = await sent(page, "/api/admin/agents/update", () =>
      nodeForm.getByRole("button", { name: "保存" }).click(),
    );
    expect(nodeSent).toMatchObject({
      name: "东京 Reality",
      country: { code: "JP" },
      type: "reality",
      ip: "203.0.113.50",
      host: "www.microsoft.com",
      ctrl_port: 888,
      zz_port: 443,
      port: 443,
      public_port: 443,
      serverType: "ubuntu_reality",
      warp: false,
      open_log: false,
      ssh_password: "",
    });
    expect(nodeSent).not.toHaveProperty("_id");
    await toast(page, "添加成功").waitFor();
    await nodeForm.waitFor({ state: "hidden" });
    await poll(() => toast(page, "添加成功").count(), 0);
    const nodeCells = await cellsOf(page, "东京 Reality");
    // Ports and the rest are in 详情 (issue 26 D13; tests/e2e/admin-nodes.test.ts).
    expect(nodeCells.slice(0, 8)).toEqual([
      "东京 Reality",
      "🇯🇵 日本",
      "reality",
      "203.0.113.50",
      "未连接",
      "-",
      "0",
      "0",
    ]);

    // Editing a Reality node shows the server-made public key and short id, read-only.
    const [node] = await ok<Agent[]>("/api/admin/agents/list");
    await rowOf(page, "东京 Reality").getByRole("button", { name: "编辑" }).click();
    const editForm = dialog(page, "编辑节点");
    await editForm.getByText(node?.reality_public_key ?? "?").waitFor();
    await editForm.getByText(node?.reality_short_id ?? "?").waitFor();
    await editForm.getByRole("button", { name: "取消" }).click();
    await editForm.waitFor({ state: "hidden" });

    // The line: entry only for 中转; a fixed name with two copies is refused before saving.
    await page.goto(`${server.url}/#/admin_agentLines`);
    await page.getByRole("heading", { name: "线路管理" }).waitFor();
    await page.getByRole("cell", { name: "暂无记录" }).waitFor();
    await page.getByRole("button", { name: "添加" }).click();
    const lineForm = dialog(page, "添加线路");
    const lineField = (label: string) => lineForm.getByLabel(label, { exact: true });
    await lineField("线路名称").fill("e2e 东京");
    expect(await lineField("协议").locator("option").allTextContents()).toEqual(["VLESS Reality"]);
    expect(await lineField("桥接方式").locator("option").allTextContents()).toEqual(["直连", "中转"]);
    expect(await lineField("桥接方式").inputValue()).toBe("report");
    await lineField("入口").waitFor();
    await lineField("桥接方式").selectOption({ label: "直连" });
    expect(await lineField("入口").count()).toBe(0);
    await lineField("桥接方式").selectOption({ label: "中转" });
    await lineField("入口").selectOption({ label: "e2e 入口" });

    let updates = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/admin/agent_line/update")) updates += 1;
    });
    await lineForm.getByRole("switch", { name: "固定名字" }).check();
    await lineField("数量").fill("2");
    await lineForm.getByRole("button", { name: "保存" }).click();
    expect(await errorOf(page, lineField("数量"))).toBe(FIX_NAME_REFUSAL);
    await poll(() => lineField("数量").evaluate((input) => input === document.activeElement), true);
    expect(updates).toBe(0);
    expect(await lineForm.isVisible()).toBe(true);

    await lineField("数量").fill("1");
    const lineSent = await sent(page, "/api/admin/agent_line/update", () =>
      lineForm.getByRole("button", { name: "保存" }).click(),
    );
    const [entry] = await ok<Entry[]>("/api/admin/entrys/list");
    expect(lineSent).toEqual({
      index: 0,
      name: "e2e 东京",
      agentID: node?._id,
      protocol: "reality",
      bridge: "report",
      entryID: entry?._id,
      scale: 1,
      num: 1,
      public: true,
      fixName: true,
      disableForAgency: false,
      permissionRequire: "",
      msg: "",
      bridgeAddr: "",
    });
    await toast(page, "添加成功").waitFor();
    await lineForm.waitFor({ state: "hidden" });
    expect((await cellsOf(page, "e2e 东京")).slice(0, 10)).toEqual([
      "0",
      "东京 Reality",
      "e2e 东京",
      "VLESS Reality",
      "e2e 入口",
      "开",
      "无",
      "1",
      "1",
      "0.00",
    ]);
    await context.close();
    expect(errors).toEqual([]);

    // The customer's subscription carries the line once per entry address, on the relay port.
    const links = await subscriptionLinks();
    expect(links.map((link) => link.scheme)).toEqual(["vless", "vless"]);
    expect(links.map((link) => link.hostPort)).toEqual(["198.51.100.21:443", "198.51.100.22:443"]);
    for (const link of links) {
      expect(link.name).toContain("e2e 东京");
      expect(link.id).toBe(subscriber.proxy_secret);
    }
  });

  test("the line form follows the node type; a CDN line reaches the subscription; filter, copy, log copy, reset", async () => {
    const v2ray = await ok<Agent>("/api/admin/agents/update", {
      name: "香港 v2ray",
      country: { code: "HK" },
      type: "v2ray",
      ip: "203.0.113.7",
      host: "hk.example.com",
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
    });
    await ok<Agent>("/api/admin/agents/update", {
      name: "洛杉矶 h2",
      country: { code: "US" },
      type: "h2",
      ip: "203.0.113.9",
      ctrl_port: 999,
      zz_port: 443,
      port: 8443,
      public_port: 8443,
      serverType: "ubuntu_x86",
    });

    const { context, page, errors } = await newPage(browser, 1280);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await login(page);
    await page.goto(`${server.url}/#/admin_agentLines`);
    await rowOf(page, "e2e 东京").waitFor();

    await page.getByRole("button", { name: "添加" }).click();
    const form = dialog(page, "添加线路");
    const field = (label: string) => form.getByLabel(label, { exact: true });
    // An h2 node: Hysteria2, direct only, no entry.
    await field("节点").selectOption({ label: "🇺🇸 洛杉矶 h2（h2）" });
    expect(await field("协议").locator("option").allTextContents()).toEqual(["Hysteria2"]);
    expect(await field("桥接方式").locator("option").allTextContents()).toEqual(["直连"]);
    expect(await field("入口").count()).toBe(0);
    // A v2ray node starts on VMess TCP through an entry; the CDN is offered for WebSocket only.
    await field("节点").selectOption({ label: "🇭🇰 香港 v2ray（v2ray）" });
    expect(await field("协议").inputValue()).toBe("vmesh_tcp");
    expect(await field("桥接方式").inputValue()).toBe("report");
    await field("入口").waitFor();
    expect(await field("桥接方式").locator("option").allTextContents()).toEqual(["直连", "中转"]);
    await field("协议").selectOption({ label: "VMess WebSocket" });
    expect(await field("桥接方式").locator("option").allTextContents()).toEqual(["直连", "CDN", "中转"]);
    await field("桥接方式").selectOption({ label: "CDN" });
    expect(await field("入口").count()).toBe(0);
    await field("CDN 地址（可空，默认节点域名）").fill("cdn.example.net");
    await field("线路名称").fill("香港 CDN");
    await field("流量倍率").fill("1.5");
    const lineSent = await sent(page, "/api/admin/agent_line/update", () =>
      form.getByRole("button", { name: "保存" }).click(),
    );
    expect(lineSent).toMatchObject({
      agentID: v2ray._id,
      protocol: "vmesh_ws",
      bridge: "cf_cdn",
      entryID: "",
      bridgeAddr: "cdn.example.net",
      scale: 1.5,
    });
    await toast(page, "添加成功").waitFor();
    await rowOf(page, "香港 CDN").waitFor();
    expect((await cellsOf(page, "香港 CDN")).slice(3, 5)).toEqual(["VMess WebSocket", "CDN"]);

    const cdn = (await subscriptionLinks()).find((link) => link.scheme === "vmess");
    expect(cdn?.name).toContain("香港 CDN");
    expect(cdn?.hostPort).toBe("cdn.example.net:443");

    // The node filter asks the server for one node's lines; 全部 brings the rest back.
    const filtered = await sent(page, "/api/admin/agent_line/list", () =>
      page.getByLabel("节点", { exact: true }).selectOption({ label: "🇭🇰 香港 v2ray（v2ray）" }),
    );
    expect(filtered).toEqual({ agentID: v2ray._id });
    await rowOf(page, "e2e 东京").waitFor({ state: "detached" });
    expect(await rowOf(page, "香港 CDN").count()).toBe(1);
    await page.getByLabel("节点", { exact: true }).selectOption({ label: "全部" });
    await rowOf(page, "e2e 东京").waitFor();

    // 复制日志: the line's JSON on the clipboard.
    const lines = await ok<AgentLine[]>("/api/admin/agent_line/list");
    const cdnLine = lines.find((line) => line.name === "香港 CDN");
    await rowOf(page, "香港 CDN").getByRole("button", { name: "复制日志" }).click();
    await toast(page, "已复制到剪贴板").waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(JSON.parse(copied)).toEqual(cdnLine);

    // Copy: the row's values without the id make a new line.
    await rowOf(page, "香港 CDN").getByRole("button", { name: "复制", exact: true }).click();
    const copy = dialog(page, "添加线路");
    expect(await copy.getByLabel("CDN 地址（可空，默认节点域名）", { exact: true }).inputValue()).toBe(
      "cdn.example.net",
    );
    await copy.getByLabel("线路名称", { exact: true }).fill("香港 CDN 备用");
    const copySent = await sent(page, "/api/admin/agent_line/update", () =>
      copy.getByRole("button", { name: "保存" }).click(),
    );
    expect(copySent).not.toHaveProperty("_id");
    expect(copySent).toMatchObject({ protocol: "vmesh_ws", bridge: "cf_cdn", scale: 1.5 });
    await rowOf(page, "香港 CDN 备用").waitFor();
    expect(await ok<AgentLine[]>("/api/admin/agent_line/list")).toHaveLength(3);

    // 重置流量 asks first, then zeroes every line's heat.
    await server.context.db.run("UPDATE agent_lines SET hot = ?", 5 * GB);
    await page.reload();
    await poll(async () => (await cellsOf(page, "e2e 东京"))[9], "5.00");
    await page.getByRole("button", { name: "重置流量" }).click();
    const confirmReset = dialog(page, "重置确认");
    await confirmReset.getByRole("button", { name: "取消" }).click();
    await confirmReset.waitFor({ state: "hidden" });
    expect(await server.context.db.get("SELECT SUM(hot) AS hot FROM agent_lines")).toEqual({
      hot: 15 * GB,
    });
    await page.getByRole("button", { name: "重置流量" }).click();
    await confirmReset.getByRole("button", { name: "重置" }).click();
    await toast(page, "流量刷新成功").waitFor();
    await poll(async () => (await cellsOf(page, "e2e 东京"))[9], "0.00");

    // Delete asks first.
    await rowOf(page, "香港 CDN 备用").getByRole("button", { name: "删除" }).click();
    await dialog(page, "删除确认").getByRole("button", { name: "删除" }).click();
    await toast(page, "删除成功").waitFor();
    await rowOf(page, "香港 CDN 备用").waitFor({ state: "detached" });
    await context.close();
    expect(errors).toEqual([]);
  });

  test("nodes and entries: copy makes a new record without the id; delete asks first", async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await login(page);
    await page.goto(`${server.url}/#/admin_agents`);
    await rowOf(page, "香港 v2ray").getByRole("button", { name: "复制", exact: true }).click();
    const copy = dialog(page, "添加节点");
    expect(await copy.getByLabel("IP", { exact: true }).inputValue()).toBe("203.0.113.7");
    expect(await copy.getByLabel("中转端口", { exact: true }).inputValue()).toBe("20000");
    await copy.getByLabel("名称", { exact: true }).fill("香港 v2ray 2");
    const copySent = await sent(page, "/api/admin/agents/update", () =>
      copy.getByRole("button", { name: "保存" }).click(),
    );
    expect(copySent).not.toHaveProperty("_id");
    expect(copySent).toMatchObject({
      type: "v2ray",
      ip: "203.0.113.7",
      zz_port: 20000,
      host: "hk.example.com",
    });
    await toast(page, "添加成功").waitFor();
    await rowOf(page, "香港 v2ray 2").waitFor();

    const copyRow = rowOf(page, "香港 v2ray 2");
    await copyRow.getByRole("button", { name: "删除" }).click();
    const confirm = dialog(page, "删除确认");
    await confirm.getByRole("button", { name: "取消" }).click();
    await confirm.waitFor({ state: "hidden" });
    expect(await copyRow.count()).toBe(1);
    await copyRow.getByRole("button", { name: "删除" }).click();
    await confirm.getByRole("button", { name: "删除" }).click();
    await toast(page, "节点删除成功").waitFor();
    await copyRow.waitFor({ state: "detached" });
    const names = (await ok<Agent[]>("/api/admin/agents/list")).map((agent) => agent.name);
    expect(names.sort()).toEqual(["东京 Reality", "洛杉矶 h2", "香港 v2ray"].sort());

    // Entries: the copy keeps the IP list; deleting it asks first.
    await page.goto(`${server.url}/#/admin_entrys`);
    await rowOf(page, "e2e 入口").getByRole("button", { name: "复制", exact: true }).click();
    const entryCopy = dialog(page, "添加入口");
    expect(await entryCopy.getByLabel("IP列表", { exact: true }).inputValue()).toBe(
      "198.51.100.21\n198.51.100.22",
    );
    await entryCopy.getByLabel("名称", { exact: true }).fill("e2e 入口 副本");
    const entrySent = await sent(page, "/api/admin/entrys/update", () =>
      entryCopy.getByRole("button", { name: "保存" }).click(),
    );
    expect(entrySent).not.toHaveProperty("_id");
    await rowOf(page, "e2e 入口 副本").waitFor();
    await rowOf(page, "e2e 入口 副本").getByRole("button", { name: "删除" }).click();
    await dialog(page, "删除确认").getByRole("button", { name: "删除" }).click();
    await toast(page, "删除成功").waitFor();
    await rowOf(page, "e2e 入口 副本").waitFor({ state: "detached" });
    expect(await ok<Entry[]>("/api/admin/entrys/list")).toHaveLength(1);

    // What the server's schema refuses is shown on its field before sending, the field focused.
    let entrySaves = 0;
    page.on("request", (r) => {
      if (r.url().endsWith("/api/admin/entrys/update")) entrySaves += 1;
    });
    await page.getByRole("button", { name: "添加" }).click();
    const empty = dialog(page, "添加入口");
    const defaultIp = empty.getByLabel("默认IP", { exact: true });
    await empty.getByLabel("名称", { exact: true }).fill("无地址入口");
    await empty.getByRole("button", { name: "保存" }).click();
    expect(await errorOf(page, defaultIp)).toBe("默认 IP 与 IP 列表不能都为空");
    await poll(() => defaultIp.evaluate((input) => input === document.activeElement), true);
    expect(entrySaves).toBe(0);
    await empty.getByRole("button", { name: "取消" }).click();

    // A refusal the form cannot foresee (the entry was deleted meanwhile) keeps the form open
    // and shows the server's message.
    const doomed = await ok<Entry>("/api/admin/entrys/update", {
      name: "将被删除的入口",
      ip: "198.51.100.40",
    });
    await page.reload();
    await rowOf(page, "将被删除的入口").getByRole("button", { name: "编辑" }).click();
    const stale = dialog(page, "编辑入口");
    await ok("/api/admin/entrys/delete", { id: doomed._id });
    await stale.getByRole("button", { name: "保存" }).click();
    await toast(page, "配置失败:入口不存在").waitFor();
    expect(await stale.isVisible()).toBe(true);
    await stale.getByRole("button", { name: "取消" }).click();
    await context.close();
    expect(errors).toEqual([]);
  });

  test("screenshots of the three screens at 1280 and 390 px", async () => {
    const screens: [path: string, heading: string, ready: (page: Page) => Promise<void>][] = [
      ["/admin_agents", "节点管理", (p) => p.getByRole("cell", { name: "东京 Reality" }).waitFor()],
      ["/admin_entrys", "入口管理", (p) => p.getByRole("cell", { name: "e2e 入口" }).waitFor()],
      ["/admin_agentLines", "线路管理", (p) => p.getByRole("cell", { name: "香港 CDN" }).waitFor()],
    ];
    for (const width of [1280, 390]) {
      const { context, page, errors } = await newPage(browser, width);
      await login(page);
      for (const [path, heading, ready] of screens) {
        await page.goto(`${server.url}/#${path}`);
        await page.getByRole("heading", { name: heading }).waitFor();
        await ready(page);
        await page.screenshot({ path: join(SHOTS, `${path.slice(1)}-${width}.png`), fullPage: true });
      }
      // The line form over the list.
      await page.getByRole("button", { name: "添加" }).click();
      await dialog(page, "添加线路").waitFor();
      await page.waitForTimeout(300); // let the dialog's fade-in finish
      await page.screenshot({ path: join(SHOTS, `admin_agentLines-form-${width}.png`) });
      await context.close();
      expect(errors).toEqual([]);
    }
  });
});
