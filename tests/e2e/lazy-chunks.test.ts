/**
 * Every module the SPA loads with `import("…")` (issue 26 §A), exercised on the production build
 * the server serves, in Debian's Chromium: the QR codes read back from their canvas and decoded
 * with a real QR decoder (jsQR) as a phone would, every lazily loaded page rendering its own
 * content (not the spinner, not the not-found view), the statistics charts drawing, the 体验券
 * dialog opening and answering, and the login form's rules and password digest. The first test
 * reads the `import("…")` calls out of web/ and fails on one that no test here covers.
 * Needs the SPA built first (`bun scripts/build-web.ts`). One browser, one server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import jsQR from "jsqr";
import type { Browser, Locator, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { lineInput } from "../../src/modules/line/schema.ts";
import { saveLine } from "../../src/modules/line/service.ts";
import { checkPush } from "../../src/modules/node-api/report.ts";
import { createOrder } from "../../src/modules/order/service.ts";
import { applyNodeReport } from "../../src/modules/traffic/charge.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser, findUserById } from "../../src/modules/user/service.ts";
import { settleWithoutGateway } from "../../src/payments/credit.ts";
import { newId } from "../../src/rpc/ids.ts";
import { ROUTES } from "../../web/routes.ts";
import { makeCombo, makeCoupon } from "../commerce.ts";
import { type FakeEpayGateway, startFakeEpayGateway } from "../fakes/epay-gateway.ts";
import {
  type ApiClient,
  loggedInClient,
  setUserColumns,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../harness.ts";
import { saveNode } from "../nodes.ts";
import { pullUserListOf } from "../traffic.ts";
import { launchChromium, loginInBrowser, newPage, poll } from "./chromium.ts";

const ROOT = join(import.meta.dir, "../..");
const PASSWORD = "password123";
const PACK = "流量套餐 100G";

let server: TestServer;
let browser: Browser;
let gateway: FakeEpayGateway;
let admin: { client: ApiClient; email: string; password: string };

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  gateway = startFakeEpayGateway();
  // 支付宝 through the EPay gateway (it answers a QR text of its own), 微信 through the sandbox.
  await server.context.settings.update({
    alipay: "epay",
    wxpay: "sandbox",
    sandbox_pay: true,
    epay_url: gateway.url,
    epay_pid: gateway.pid,
    epay_key: gateway.key,
  });
  await makeCombo(server, { name: PACK, price: 15, traffic: 100 * GB });
  admin = await loggedInClient(server, { role: "admin" });
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await server?.close();
});

// ---- which test covers which import() ----

const QR_TEST = "QR codes decode to the subscription links and the gateways' payment texts";
const PAGES_TEST = "every lazily loaded page renders its own content";
const STATS_TEST = "the statistics charts draw";
const RECONCILE_TEST = "the reconciliation chart of 节点管理 → 对账 draws";
const TRIAL_TEST = "the 体验券 dialog opens and answers";
const LOGIN_TEST = "the login form's rules and password digest";

/** `import("…")` calls of web/ other than App.tsx's pages, each with the test that runs what it loads. */
const OTHER_LAZY_IMPORTS: Record<string, string> = {
  "web/components/QrDialog.tsx → qrcode": QR_TEST,
  "web/components/TrialVoucher.tsx → ./TrialVoucherDialog.tsx": TRIAL_TEST,
  "web/pages/admin/Statistics.tsx → ./StatsCharts.tsx": STATS_TEST,
  "web/pages/admin/Agents.tsx → ./ReconcileChart.tsx": RECONCILE_TEST,
  "web/pages/Login.tsx → ../../src/modules/user/schema.ts": LOGIN_TEST,
  "web/pages/Login.tsx → ../../src/modules/user/password.ts": LOGIN_TEST,
};

const tableName = (name: string) => (page: Page) => page.getByRole("table", { name });

/**
 * Each lazily loaded page (App.tsx `PAGES`, and one client guide for the guide page) with something
 * only that page shows once it has loaded, seen by an admin (who may open every route).
 */
const PAGE_CHECKS: Record<string, (page: Page) => Locator> = {
  "/": (page) => page.getByRole("heading", { name: "不限时流量" }),
  "/tutorial": (page) => page.getByRole("tablist", { name: "平台" }),
  "/register": (page) => page.getByLabel("确认密码"),
  "/reset": (page) => page.getByLabel("订阅链接"),
  "/confirm": (page) => page.getByText("链接无效"),
  "/checkout": (page) => page.getByRole("button", { name: "提交订单（示例）" }),
  "/orderinfo": (page) => page.getByText("实付金额"),
  "/agents": (page) => page.getByRole("region", { name: "节点说明" }),
  "/apple_id_share": (page) => page.getByText("共享账号仅对付费用户开放"),
  "/apple_id_signup_guide": (page) => page.getByText("第 1 步：准备邮箱和手机号"),
  "/windows_errors": (page) => page.getByText("所有节点都显示超时"),
  "/shop": (page) => page.getByRole("article", { name: PACK }),
  "/order": tableName("订单列表"),
  "/channel": (page) => page.getByText("您还不是渠道用户"),
  "/feedback": (page) => page.getByRole("button", { name: "提交工单" }),
  "/push": (page) => page.getByRole("button", { name: "转赠流量" }),
  "/traffic_records": (page) => page.getByLabel("记录类型"),
  "/wallet": (page) => page.getByRole("button", { name: "保存收款地址" }),
  "/user_info": (page) => page.getByRole("heading", { name: "基本资料" }),
  "/two_factor": (page) => page.getByRole("region", { name: "两步验证" }),
  "/lucky_draw": (page) => page.getByLabel("奖品盘"),
  "/agency": (page) => page.getByText("您不是代理，不能分配流量"),
  "/admin_stastic": (page) => page.getByRole("button", { name: "30 天" }),
  "/admin_coupon": tableName("优惠券列表"),
  "/coupon_records": tableName("优惠券使用记录"),
  "/admin_config": (page) => page.getByLabel("站点地址"),
  "/admin_userlist": tableName("用户列表"),
  "/all_traffic_records": tableName("全部流量记录"),
  "/admin_tradeList": tableName("交易列表"),
  "/admin_charge": tableName("提现申请"),
  "/admin_combos": tableName("商品列表"),
  "/admin_permissions": tableName("权限列表"),
  "/admin_entrys": tableName("入口列表"),
  "/admin_agents": tableName("节点列表"),
  "/admin_agentLines": tableName("线路列表"),
  "/admin_prize": tableName("奖品列表"),
  "/admin_error": tableName("错误记录"),
  "/admin_audit": tableName("操作日志"),
  "/clash_for_windows": (page) => page.getByText("Clash for Windows 仅支持 64 位 Windows"),
};

/** Pages whose heading is not the route's title: a confirm link without its parameters failed. */
const HEADINGS: Record<string, string> = { "/confirm": "注册失败" };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "dist" ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Every `import("…")` of the SPA's sources, as "file → specifier". */
function lazyImportsInWeb(): string[] {
  return sourceFiles(join(ROOT, "web")).flatMap((path) =>
    [...readFileSync(path, "utf8").matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map(
      (match) => `${relative(ROOT, path)} → ${match[1]}`,
    ),
  );
}

/** App.tsx's lazily loaded pages: route → the module its `lazyPage(() => import(…))` loads. */
function lazyPageModules(): Map<string, string> {
  const app = readFileSync(join(ROOT, "web/App.tsx"), "utf8");
  const modules = new Map(
    [...app.matchAll(/const (\w+) = lazyPage\(\(\) =>\s*import\("([^"]+)"\)/g)].map(
      (match) => [match[1], match[2]] as [string, string],
    ),
  );
  const routes = new Map<string, string>();
  for (const [, route, component] of app.matchAll(/^\s*"(\/[^"]*)": (\w+),$/gm)) {
    const module = modules.get(component as string);
    if (module) routes.set(route as string, module);
  }
  // The client guides share one lazily loaded page; one guide route stands for it.
  const guide = modules.get("GuideRoute");
  if (guide) routes.set("/clash_for_windows", guide);
  return routes;
}

test("every import() in web/ is exercised by a test of this file", () => {
  const pages = lazyPageModules();
  expect([...pages.keys()].sort()).toEqual(Object.keys(PAGE_CHECKS).sort());
  const covered = [
    ...[...pages.values()].map((module) => `web/App.tsx → ${module}`),
    ...Object.keys(OTHER_LAZY_IMPORTS),
  ];
  expect([...new Set(lazyImportsInWeb())].sort()).toEqual([...new Set(covered)].sort());
  const testNames = [QR_TEST, PAGES_TEST, STATS_TEST, RECONCILE_TEST, TRIAL_TEST, LOGIN_TEST];
  for (const name of Object.values(OTHER_LAZY_IMPORTS)) expect(testNames).toContain(name);
});

// ---- the QR library ----

/** Waits until the QR box has drawn (or failed), then decodes the canvas's pixels as a phone would. */
async function decodeQr(canvas: Locator): Promise<string | null> {
  await canvas.waitFor();
  const box = canvas.locator("xpath=..");
  await poll(() => box.getByText("二维码生成中…").count(), 0, 10_000);
  expect(await box.getByText("二维码生成失败").count()).toBe(0);
  const image = await canvas.evaluate((element: HTMLCanvasElement) => {
    const context = element.getContext("2d");
    if (!context) return null;
    const { width, height, data } = context.getImageData(0, 0, element.width, element.height);
    return { width, height, pixels: Array.from(data) };
  });
  if (!image) return null;
  return jsQR(Uint8ClampedArray.from(image.pixels), image.width, image.height)?.data ?? null;
}

async function newCustomer(): Promise<UserRow> {
  const email = uniqueEmail("qr");
  const user = await createUser(server.context, { email, passwordDigest: transformPassword(PASSWORD) });
  await setUserColumns(server.context.db, user.id, { traffic: 50 * GB });
  return (await findUserById(server.context, user.id)) as UserRow;
}

const linkOf = (client: string, user: UserRow) =>
  `${server.url}/api/subscript/${client}/${user.id}/${user.userkey}`;

describe("the QR library", () => {
  test(QR_TEST, async () => {
    const user = await newCustomer();
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, user.email, PASSWORD);

    // 订阅 ▾ → 扫描二维码 (iOS clients offer it on the dashboard).
    const picker = page.getByRole("region", { name: "选择平台与客户端" });
    await picker.getByRole("tab", { name: "iOS" }).click();
    await picker.getByRole("button", { name: "订阅 Shadowrocket" }).click();
    await page.getByText("扫描二维码", { exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Shadowrocket 扫码订阅" });
    expect(await decodeQr(dialog.locator("canvas"))).toBe(linkOf("ss", user));
    await dialog.getByRole("button", { name: "关闭" }).last().click();

    // The sing-box card of 订阅导入（进阶）.
    const singbox = page.getByRole("region", { name: "订阅导入（进阶）" }).getByLabel("sing-box 订阅二维码");
    expect(await decodeQr(singbox)).toBe(linkOf("singbox", user));

    // Desktop 支付宝 through EPay: the gateway's own QR text.
    const buy = async (payMode: string, title: string) => {
      await page.goto(`${server.url}/#/shop`);
      await page.getByRole("article", { name: PACK }).getByRole("button", { name: "立即购买" }).click();
      const confirm = page.getByRole("dialog", { name: "确认订单" });
      await confirm.getByRole("radio", { name: payMode }).check();
      await confirm.getByRole("button", { name: "确认支付" }).click();
      return page.getByRole("dialog", { name: title });
    };
    const alipay = await buy("支付宝", "支付宝扫码支付");
    const alipayText = await decodeQr(alipay.getByLabel("支付二维码"));
    const gatewayOrders = [...gateway.orders.values()];
    expect(gatewayOrders.length).toBe(1);
    expect(alipayText).toBe(`https://qr.alipay.com/bax0${gatewayOrders[0]?.tradeNo}`);
    await alipay.getByRole("button", { name: "关闭" }).last().click();

    // Desktop 微信 through the sandbox: its cashier page, the link the dialog also offers.
    const wxpay = await buy("微信支付", "微信支付扫码支付");
    const wxpayText = await decodeQr(wxpay.getByLabel("支付二维码"));
    expect(wxpayText).toStartWith(`${server.url}/pay/sandbox/`);
    expect(wxpayText).toBe(await wxpay.getByRole("link", { name: "打开支付页面" }).getAttribute("href"));

    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});

// ---- pages, charts, dialogs, rules ----

describe("lazily loaded modules", () => {
  test(PAGES_TEST, async () => {
    const { context, page, errors } = await newPage(browser, 1280);
    await context.addCookies(
      [...admin.client.cookies].map(([name, value]) => ({ name, value, url: server.url })),
    );
    for (const [route, check] of Object.entries(PAGE_CHECKS)) {
      await page.goto(`${server.url}/#${route}`);
      const heading = HEADINGS[route] ?? (ROUTES[route]?.title as string);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await check(page).first().waitFor();
      await poll(() => page.getByRole("status", { name: "加载中" }).count(), 0);
      expect(await page.getByText("页面不存在").count()).toBe(0);
    }
    // The page styles (web/pages.css) came with the first of these pages, once (web/lib/pageStyles.ts).
    const pageSheets = await page.evaluate(() =>
      [...document.styleSheets]
        .filter((sheet) => sheet.href?.endsWith("/pages.css"))
        .map((s) => s.cssRules.length),
    );
    expect(pageSheets).toHaveLength(1);
    expect(pageSheets[0]).toBeGreaterThan(100);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  test(STATS_TEST, async () => {
    const ctx = server.context;
    const { user } = await loggedInClient(server);
    const combo = await makeCombo(server, { name: "统计用", price: 15, traffic: 100 * GB });
    await settleWithoutGateway(ctx, (await createOrder(ctx, user, combo._id))._id, "manual", "test");
    const { context, page, errors } = await newPage(browser, 1280);
    await context.addCookies(
      [...admin.client.cookies].map(([name, value]) => ({ name, value, url: server.url })),
    );
    await page.goto(`${server.url}/#/admin_stastic`);
    const income = page.locator(".stats-chart").filter({ hasText: "收入（元）" });
    const canvas = income.locator(".uplot canvas");
    await canvas.waitFor();
    // uPlot drew something: the canvas is not blank.
    const painted = await canvas.evaluate((element: HTMLCanvasElement) => {
      const data = element.getContext("2d")?.getImageData(0, 0, element.width, element.height).data;
      return data ? data.some((value, index) => index % 4 === 3 && value > 0) : false;
    });
    expect(painted).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test(RECONCILE_TEST, async () => {
    const agent = await saveNode(server, { name: "分块对账节点", ip: "203.0.113.9" });
    await saveLine(
      server.context,
      lineInput.parse({ name: "TCP", agentID: agent._id, protocol: "vmesh_tcp", bridge: "none" }),
    );
    const customer = await newCustomer();
    await pullUserListOf(server, agent._id);
    const usage = checkPush(JSON.stringify({ [customer.node_uid]: [0, 5 * 1024 * 1024] }));
    if (!usage.ok) throw new Error(usage.message);
    await applyNodeReport(server.context, {
      agentId: agent._id,
      reportId: newId(),
      inbound: "vmesh_tcp",
      usage: usage.value,
      now: Date.now(),
    });
    const { context, page, errors } = await newPage(browser, 1280);
    await context.addCookies(
      [...admin.client.cookies].map(([name, value]) => ({ name, value, url: server.url })),
    );
    await page.goto(`${server.url}/#/admin_agents`);
    await page
      .getByRole("row")
      .filter({ hasText: "分块对账节点" })
      .getByRole("button", { name: "对账" })
      .click();
    const canvas = page
      .getByRole("dialog", { name: "对账：分块对账节点" })
      .locator(".stats-chart .uplot canvas");
    await canvas.first().waitFor();
    // uPlot drew something: the canvas is not blank.
    const painted = await canvas.first().evaluate((element: HTMLCanvasElement) => {
      const data = element.getContext("2d")?.getImageData(0, 0, element.width, element.height).data;
      return data ? data.some((value, index) => index % 4 === 3 && value > 0) : false;
    });
    expect(painted).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test(TRIAL_TEST, async () => {
    const user = await newCustomer();
    await setUserColumns(server.context.db, user.id, { paid_user: 1 });
    const { context, page, errors } = await newPage(browser, 1280);
    await loginInBrowser(page, server.url, user.email, PASSWORD);
    await page.getByRole("button", { name: "体验券" }).click();
    const dialog = page.getByRole("dialog", { name: "兑换体验券" });
    await dialog.getByLabel("激活码").fill("NO-SUCH-VOUCHER");
    await dialog.getByRole("button", { name: "确定" }).click();
    await dialog.getByText("体验券不存在").waitFor();
    // A real voucher is redeemed.
    await makeCoupon(server, { type: "freeUse", code: "TRY5G", trafficG: 5, NumberOfAuthorizations: 9 });
    await dialog.getByLabel("激活码").fill("TRY5G");
    await dialog.getByRole("button", { name: "确定" }).click();
    await poll(() => dialog.count(), 0);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test(LOGIN_TEST, async () => {
    const user = await newCustomer();
    const { context, page, errors } = await newPage(browser, 1280);
    await page.goto(`${server.url}/#/login`);
    const email = page.getByLabel("邮箱");
    const password = page.getByLabel("密码");
    // The rules (schema.ts): an empty password is refused before asking the server.
    await email.fill(user.email);
    await page.getByRole("button", { name: "登录" }).click();
    await page.getByText("密码不能为空").waitFor();
    // A wrong password reaches the server, which refuses it.
    await password.fill("wrong-password");
    await page.getByRole("button", { name: "登录" }).click();
    await page.getByText("用户不存在或密码错误").waitFor();
    // The digest (password.ts) of the right password is what the server stored.
    await password.fill(PASSWORD);
    await page.getByRole("button", { name: "登录" }).click();
    await page.getByRole("button", { name: "用户菜单" }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
