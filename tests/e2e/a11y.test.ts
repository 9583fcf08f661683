/**
 * Accessibility (issue 26 D20): axe-core scans every route of web/routes.ts as a visitor, a
 * customer and an admin, at 1280 and 390 px, on the production build the server serves, and fails
 * on any serious or critical violation with one line per element: rule, impact, target selector,
 * route, role and width. The customer has an order, an unpaid order, a ticket with an answer,
 * traffic records, a transfer, a draw and a trial voucher, and the admin a channel with a rebate
 * and a withdrawal, a node, a line, an entry, prizes, coupons and an error row, so the scans see
 * real tables and cards, not empty states. Open states (menus, dialogs) are scanned too.
 *
 * Kept quick for CI's two cores: one browser, one server, one context per role and width, routes
 * reached by changing the hash, each scanned once its content is there (no spinner, no request in
 * flight, the route's data on screen). Needs the SPA built first (`bun scripts/build-web.ts`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AxeResults } from "axe-core";
import axe from "axe-core";
import type { Browser, Locator, Page } from "playwright-core";
import { GB } from "../../src/lib/traffic.ts";
import { recordError } from "../../src/modules/errors/service.ts";
import type { Ticket } from "../../src/modules/feedback/schema.ts";
import type { Push } from "../../src/modules/push/schema.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { findUserById } from "../../src/modules/user/service.ts";
import { ROUTES, type RouteInfo } from "../../web/routes.ts";
import {
  createOrder,
  giveWallet,
  makeCombo,
  makeCoupon,
  payWithSandbox,
  startShopServer,
} from "../commerce.ts";
import { loggedInClient, setUserColumns, type TestServer } from "../harness.ts";
import { chargeNode, makeChargingNode } from "../traffic.ts";
import { launchChromium, loginInBrowser, newPage, type TestPage } from "./chromium.ts";

type Role = "visitor" | "customer" | "admin";
const WIDTHS = [1280, 390] as const;
const ROLES: readonly Role[] = ["visitor", "customer", "admin"];
const FAILING_IMPACTS = new Set(["serious", "critical"]);
/** How long no request may be in flight before a page counts as loaded (a chunk, then its calls). */
const QUIET_MS = 100;

const PAID_COMBO = "月付套餐";
const OPEN_COMBO = "季付套餐";
const TICKET = "香港节点晚上很慢";
const PRIZE = "一等奖";
const NODE = "香港 01";
const ENTRY = "上海入口";
const CHANNEL_CODE = "A11YCH";
const VOUCHER = "A11YTRIAL";
const ERROR_NAME = "a11y-scan";

/**
 * What shows once a route's data is there, for the routes whose data this file sets up: the scan
 * waits for it, and it proves the page is a real table or card, not an empty state.
 */
const CONTENT: Record<Exclude<Role, "visitor">, Record<string, string>> = {
  customer: {
    "/shop": PAID_COMBO,
    "/order": OPEN_COMBO,
    "/agents": NODE,
    "/feedback": TICKET,
    // "/push": the transfer's code, set with the data.
    "/lucky_draw": PRIZE,
    "/traffic_records": "节点流量",
    "/wallet": "客服补偿",
  },
  admin: {
    "/shop": PAID_COMBO,
    "/agents": NODE,
    "/channel": "cu***@example.com",
    "/wallet": "待结算",
    "/feedback": TICKET,
    "/admin_userlist": "customer",
    "/admin_tradeList": PAID_COMBO,
    "/admin_combos": OPEN_COMBO,
    "/admin_coupon": VOUCHER,
    "/coupon_records": VOUCHER,
    "/admin_charge": "admin@example.com",
    "/admin_agents": NODE,
    "/admin_entrys": ENTRY,
    "/admin_agentLines": NODE,
    "/admin_prize": PRIZE,
    "/admin_error": ERROR_NAME,
    "/admin_audit": "entry.create",
    "/all_traffic_records": "customer",
  },
};

const contentOf = (role: Role, route: string) => (role === "visitor" ? undefined : CONTENT[role][route]);

let server: TestServer;
let browser: Browser;
let customer: Awaited<ReturnType<typeof loggedInClient>>;
let admin: Awaited<ReturnType<typeof loggedInClient>>;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startShopServer();
  admin = await loggedInClient(server, { role: "admin", email: "admin@example.com" });
  customer = await loggedInClient(server, { email: "customer@example.com" });
  await giveRealisticData();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Everything the customer and the admin have, made through the API and the services. */
async function giveRealisticData() {
  const ctx = server.context;
  await ctx.settings.update({ min_charge_money: 1 });
  const agentId = await makeChargingNode(server, "Asia/Shanghai");
  await admin.client.ok("/api/admin/entrys/update", { name: ENTRY, ip: "198.51.100.9" });
  await admin.client.ok("/api/admin/users/update_channel", {
    email: admin.email,
    name: "测试渠道",
    code: CHANNEL_CODE,
    rewardRate: 0.2,
    comsumerDuration: 30,
  });
  await setUserColumns(ctx.db, customer.user.id, { channel_code: CHANNEL_CODE });

  const paid = await makeCombo(server, { name: PAID_COMBO, price: 15, traffic: 100 * GB, vipDuration: 30 });
  const open = await makeCombo(server, { name: OPEN_COMBO, price: 40, traffic: 300 * GB, vipDuration: 90 });
  await payWithSandbox(server, customer.client, (await createOrder(customer.client, paid._id))._id);
  await createOrder(customer.client, open._id);
  await giveWallet(server, customer.user.id, 500, "客服补偿");

  await makeCoupon(server, { type: "cash", code: "A11Y10", forMoney: 10, NumberOfAuthorizations: 5 });
  await makeCoupon(server, { type: "freeUse", code: VOUCHER, trafficG: 8 });
  await customer.client.ok("/api/coupon/redeem_coupon", { code: VOUCHER });

  const ticket = await customer.client.ok<Ticket>("/api/feedback/create", {
    title: TICKET,
    desc: "从昨晚开始，Clash 里香港节点很慢。",
  });
  await admin.client.ok("/api/feedback/response", { id: ticket._id, desc: "已处理，请更新订阅后再试。" });

  const uid = ((await findUserById(ctx, customer.user.id)) as UserRow).node_uid;
  await chargeNode(server, agentId, { [uid]: [GB / 2, 3 * GB] }, Date.now());
  const push = await customer.client.ok<Push>("/api/push/create", { pushNumber: 20 });
  CONTENT.customer["/push"] = push.code;

  for (const [name, weight] of [
    [PRIZE, 1],
    ["二等奖", 3],
  ] as const) {
    await admin.client.ok("/api/yunying/prize/update", { name, gainTraffic: 1, gainVipTime: 0, weight });
  }
  await customer.client.ok("/api/prize/draw");

  await admin.client.ok("/api/wallet/change_reward_adress", {
    addressType: "USDT-TRC20",
    address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
  });
  await admin.client.ok("/api/wallet/make_charge");
  await recordError(ctx.db, ERROR_NAME, new Error("测试错误：节点推送超时"));
}

/** A violation, one element per line as the failure shows it. */
interface Finding {
  rule: string;
  impact: string;
  target: string;
  route: string;
  role: string;
  width: number;
  detail: string;
}

const describeFinding = (f: Finding) =>
  `${f.rule} (${f.impact}) ${f.target} on #${f.route} as ${f.role} at ${f.width} px: ${f.detail}`;

/** Counts the requests of a page still in flight (page chunks and API calls alike). */
function trackRequests(page: Page): () => number {
  let inFlight = 0;
  page.on("request", () => {
    inFlight += 1;
  });
  const done = () => {
    inFlight -= 1;
  };
  page.on("requestfinished", done);
  page.on("requestfailed", done);
  return () => inFlight;
}

interface Viewer {
  role: Role;
  width: number;
  tab: TestPage;
  inFlight: () => number;
}

async function openViewer(role: Role, width: number): Promise<Viewer> {
  const tab = await newPage(browser, width);
  const inFlight = trackRequests(tab.page);
  const account = role === "customer" ? customer : role === "admin" ? admin : null;
  if (account) await loginInBrowser(tab.page, server.url, account.email, account.password);
  else await tab.page.goto(`${server.url}/#/`);
  return { role, width, tab, inFlight };
}

/**
 * Waits until the route's content is there: the title is the route's, no page spinner or busy
 * list, `text` (when given) on screen, and no request in flight for a short quiet spell.
 */
async function waitForContent(viewer: Viewer, title: string, text?: string) {
  const { page } = viewer.tab;
  await page.waitForFunction(
    (expected) =>
      document.title.startsWith(`${expected} - `) &&
      document.querySelector("main h1, main .result-title") !== null &&
      document.querySelector("main .page-spinner, main [aria-busy='true']") === null,
    title,
    { polling: "raf", timeout: 15_000 },
  );
  if (text) {
    const shown = page.locator("main").getByText(text).filter({ visible: true });
    await shown.first().waitFor({ timeout: 15_000 });
  }
  let quietSince = Date.now();
  const deadline = Date.now() + 15_000;
  while (Date.now() - quietSince < QUIET_MS && Date.now() < deadline) {
    if (viewer.inFlight() > 0) quietSince = Date.now();
    await Bun.sleep(20);
  }
  await page.waitForFunction(
    () => document.querySelector("main .page-spinner, main [aria-busy='true']") === null,
    undefined,
    { polling: "raf", timeout: 15_000 },
  );
}

/** Runs axe-core on the page as it is; the serious and critical violations, one per element. */
async function scan(viewer: Viewer, route: string, state = ""): Promise<Finding[]> {
  const { page } = viewer.tab;
  // Colours are measured as drawn: let fades and pops (a dialog's, a menu's) finish first.
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((animation) => Number.isFinite(animation.effect?.getComputedTiming().endTime))
        .map((animation) => animation.finished.catch(() => undefined)),
    ),
  );
  // Evaluated over the protocol rather than added as a <script>: the page's CSP refuses inline scripts.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axe.source);
  const results = await page.evaluate(
    () =>
      (window as unknown as { axe: typeof axe }).axe.run(document, {
        resultTypes: ["violations"],
      }) as Promise<AxeResults>,
  );
  const where = state ? `${route} (${state})` : route;
  return results.violations
    .filter((v) => FAILING_IMPACTS.has(v.impact ?? ""))
    .flatMap((v) =>
      v.nodes.map((node) => ({
        rule: v.id,
        impact: v.impact ?? "",
        target: node.target.map(String).join(" "),
        route: where,
        role: viewer.role,
        width: viewer.width,
        detail: (node.any[0]?.message ?? node.all[0]?.message ?? node.none[0]?.message ?? v.help).slice(
          0,
          240,
        ),
      })),
    );
}

/** Goes to a route by changing the hash, as a link would. */
async function goTo(viewer: Viewer, route: string) {
  await viewer.tab.page.evaluate((hash) => {
    location.hash = hash;
  }, `#${route}`);
}

/**
 * Where the app sends a viewer who opens `route`: a visitor at a page that needs login to /login,
 * a logged-in user at /login home. Those routes are scanned where they land.
 */
function landingOf(role: Role, route: string, info: RouteInfo): string {
  if (role === "visitor") return info.auth ? "/login" : route;
  return route === "/login" ? "/" : route;
}

/** Every route in web/routes.ts, scanned once its content is there. */
async function scanEveryRoute(viewer: Viewer): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const [route, info] of Object.entries(ROUTES)) {
    await goTo(viewer, route);
    const landing = landingOf(viewer.role, route, info);
    if (landing !== route) {
      // The page it lands on is a route of its own, scanned in its turn.
      await viewer.tab.page.waitForFunction((hash) => location.hash === hash, `#${landing}`);
      continue;
    }
    await waitForContent(viewer, info.title, contentOf(viewer.role, route)).catch((error: Error) => {
      throw new Error(`#${route} as ${viewer.role} at ${viewer.width} px never settled: ${error.message}`);
    });
    findings.push(...(await scan(viewer, route)));
  }
  return findings;
}

describe("axe-core: no serious or critical violation", () => {
  for (const role of ROLES) {
    for (const width of WIDTHS) {
      test(`every route as ${role} at ${width} px`, async () => {
        const viewer = await openViewer(role, width);
        const findings = await scanEveryRoute(viewer);
        expect(findings.map(describeFinding)).toEqual([]);
        expect(viewer.tab.errors).toEqual([]);
        await viewer.tab.context.close();
      }, 180_000);
    }
  }
});

/** An open state of a page: what opens it, and what is then on screen. */
interface OpenState {
  route: string;
  name: string;
  open: (page: Page) => Promise<Locator>;
}

const dialog = (page: Page, name: string) => page.getByRole("dialog", { name });

/**
 * Opens the header's dropdown named `name`; returns what its panel shows (`shows`, found by text,
 * so it holds whatever markup and portal the dropdown uses).
 */
async function headerMenu(page: Page, name: string, shows: string) {
  await page.getByRole("banner").getByRole("button", { name }).click();
  return page.getByText(shows, { exact: true });
}

const CUSTOMER_STATES: readonly OpenState[] = [
  { route: "/", name: "用户菜单 open", open: (page) => headerMenu(page, "用户菜单", "退出登录") },
  { route: "/", name: "通知 open", open: (page) => headerMenu(page, "通知", "通知") },
  {
    route: "/",
    name: "体验券 dialog",
    open: async (page) => {
      await page.getByRole("banner").getByRole("button", { name: "体验券" }).click();
      return dialog(page, "兑换体验券");
    },
  },
  {
    route: "/",
    name: "订阅 menu open",
    open: async (page) => {
      await page.getByRole("button", { name: "订阅 Loon" }).click();
      return page.getByText("复制订阅", { exact: true });
    },
  },
  {
    route: "/",
    name: "扫码订阅 dialog",
    open: async (page) => {
      await page.getByRole("button", { name: "订阅 Loon" }).click();
      await page.getByText("扫描二维码", { exact: true }).click();
      return dialog(page, "Loon 扫码订阅");
    },
  },
  {
    route: "/shop",
    name: "确认订单 dialog",
    open: async (page) => {
      await page.getByRole("article", { name: PAID_COMBO }).getByRole("button", { name: "立即购买" }).click();
      const confirm = dialog(page, "确认订单");
      await confirm.getByRole("button", { name: "确认支付" }).waitFor();
      return confirm;
    },
  },
  {
    route: "/shop",
    name: "支付宝扫码支付 dialog",
    open: async (page) => {
      await page.getByRole("article", { name: PAID_COMBO }).getByRole("button", { name: "立即购买" }).click();
      await dialog(page, "确认订单").getByRole("button", { name: "确认支付" }).click();
      return dialog(page, "支付宝扫码支付");
    },
  },
  {
    route: "/feedback",
    name: "提交工单 dialog with field errors",
    open: async (page) => {
      await page.getByRole("button", { name: "提交工单" }).click();
      const form = dialog(page, "提交工单");
      await form.getByRole("button", { name: "提交" }).click();
      await form.locator(".field-error").first().waitFor();
      return form;
    },
  },
  {
    route: "/push",
    name: "转赠流量 dialog",
    open: async (page) => {
      await page.getByRole("button", { name: "转赠流量" }).click();
      return dialog(page, "转赠流量");
    },
  },
];

const ADMIN_STATES: readonly OpenState[] = [
  {
    route: "/admin_combos",
    name: "添加商品 dialog",
    open: async (page) => {
      await page.getByRole("button", { name: "添加", exact: true }).click();
      return dialog(page, "添加商品");
    },
  },
  {
    route: "/admin_combos",
    name: "删除 confirm dialog",
    open: async (page) => {
      await page.getByRole("row", { name: OPEN_COMBO }).getByRole("button", { name: "删除" }).click();
      return page.getByRole("dialog").filter({ hasText: OPEN_COMBO });
    },
  },
  {
    route: "/admin_userlist",
    name: "编辑用户 dialog",
    open: async (page) => {
      await page.getByRole("row", { name: customer.email }).getByRole("button", { name: "编辑" }).click();
      return dialog(page, `编辑用户 · ${customer.email}`);
    },
  },
];

/** Goes to the state's route, opens it, scans, and closes it again with Esc. */
async function scanOpenState(viewer: Viewer, state: OpenState): Promise<Finding[]> {
  const { page } = viewer.tab;
  await goTo(viewer, state.route);
  await waitForContent(viewer, ROUTES[state.route]?.title ?? "", contentOf(viewer.role, state.route));
  const opened = await state.open(page);
  await opened.first().waitFor();
  const findings = await scan(viewer, state.route, state.name);
  await page.keyboard.press("Escape");
  await opened.first().waitFor({ state: "hidden" });
  return findings;
}

describe("axe-core: menus and dialogs open", () => {
  const cases = [
    ...WIDTHS.map((width) => ({ role: "customer" as const, width, states: CUSTOMER_STATES })),
    { role: "admin" as const, width: 1280, states: ADMIN_STATES },
  ];
  for (const { role, width, states } of cases) {
    test(`${states.length} open states as ${role} at ${width} px`, async () => {
      const viewer = await openViewer(role, width);
      const findings: Finding[] = [];
      for (const state of states) findings.push(...(await scanOpenState(viewer, state)));
      expect(findings.map(describeFinding)).toEqual([]);
      expect(viewer.tab.errors).toEqual([]);
      await viewer.tab.context.close();
    }, 120_000);
  }
});
