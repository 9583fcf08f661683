/**
 * 全部节点链接（SSR） in Debian's Chromium (issue 26 D16): a customer none of whose lines SSR can use
 * sees the dashboard say so instead of a link, and the listing page says it in words rather than
 * a placeholder ssr:// line; with a compat line the dashboard links to the page, which lists it.
 * Needs the SPA built first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import type { AgentLine } from "../../src/modules/line/schema.ts";
import { type Agent, newNodeDefaults } from "../../src/modules/node-record/schema.ts";
import { Notice } from "../../src/subscription/service.ts";
import {
  type ApiClient,
  loggedInClient,
  setUserColumns,
  startTestServer,
  type TestServer,
} from "../harness.ts";
import { launchChromium, loginInBrowser, newPage, SHOTS } from "./chromium.ts";

let server: TestServer;
let browser: Browser;
let admin: ApiClient;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  admin = (await loggedInClient(server, { role: "admin" })).client;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function addLine(agentID: string, name: string, protocol: AgentLine["protocol"]) {
  const line = await admin.call<AgentLine>("/api/admin/agent_line/update", {
    name,
    agentID,
    protocol,
    bridge: "none",
  });
  expect({ code: line.code, msg: line.msg }).toEqual({ code: 0, msg: "ok" });
}

const advanced = (page: Page) => page.getByRole("region", { name: "订阅导入（进阶）" });

/** The advanced card at both widths, for looking at. */
async function shootCard(page: Page, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await advanced(page).screenshot({ path: join(SHOTS, `${name}-${width}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** What the listing page shows in the browser, one entry a line. */
async function listingLines(page: Page): Promise<string[]> {
  const text = (await page.locator("body").textContent()) ?? "";
  return text.split("\n").filter((line) => line.trim() !== "");
}

describe("全部节点链接（SSR）", () => {
  test("no SSR line: said on the dashboard and on the page; a compat line: the link and its ssr:// line", async () => {
    const node = await admin.call<Agent>("/api/admin/agents/update", {
      ...newNodeDefaults("v2ray"),
      name: "香港",
      type: "v2ray",
      ip: "203.0.113.80",
    });
    await addLine(node.data._id, "香港 VMess", "vmesh_tcp");
    const customer = await loggedInClient(server);
    await setUserColumns(server.context.db, customer.user.id, { traffic: 10 * GB });

    const { page, context, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, customer.email, customer.password);
    const card = advanced(page);
    await card.getByText("全部节点链接（SSR）：暂无支持 SSR 的线路。").waitFor();
    expect(await card.getByRole("link", { name: /全部节点链接/ }).count()).toBe(0);
    await shootCard(page, "ssr-listing-none");

    // The page itself, opened by hand: the reason in words, no ssr:// line.
    await page.goto(`${server.url}/user/getUserAllURL?type=ssr`);
    expect(await listingLines(page)).toEqual([Notice.noSsrLines]);

    // A line SSR can use: the dashboard links to the page, and the page lists it.
    await addLine(node.data._id, "香港 SSR", "compat");
    await page.goto(`${server.url}/#/`);
    const link = advanced(page).getByRole("link", { name: "全部节点链接（SSR）" });
    expect(await link.getAttribute("href")).toBe("/user/getUserAllURL?type=ssr");
    await shootCard(page, "ssr-listing-link");
    await link.click();
    await page.waitForURL((url) => url.pathname === "/user/getUserAllURL");
    const lines = await listingLines(page);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith("ssr://");
    expect(errors).toEqual([]);
    await context.close();
  });
});
