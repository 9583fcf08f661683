/**
 * Issue 28, "Must show": three real `ferry serve` replicas on one PostgreSQL database behind a
 * round-robin proxy on loopback (tests/round-robin.ts), each request on another replica than the
 * last. Customers sign up, log in, buy through the sandbox and with USDT (a fake TronGrid), check
 * in, redeem a trial voucher, upload an image and transfer traffic while a fake node pulls its user
 * list and pushes reports through the proxy; a session made on one replica works on the others; a
 * setting saved on one is in force on all within 2 s. Then, under that load, the replica holding
 * the USDT watcher's and the Telegram bot's leases is killed with SIGKILL: both jobs resume on
 * another replica within 30 s (a USDT payment made after the kill is credited, a Telegram message
 * sent after it is answered), the fake Telegram API never sees two getUpdates at once, every
 * acknowledged payment and node report counts exactly once, and every balance equals its ledger.
 * Last, two replicas started at once on an empty database both serve, the migrations applied once.
 *
 * PostgreSQL only (several processes on one SQLite file are not a supported set-up).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AppContext, createContext } from "../src/context.ts";
import { type Db, openPostgres } from "../src/db/db.ts";
import { migrate } from "../src/db/migrate.ts";
import { migrations } from "../src/embedded.ts";
import { parseDecimal } from "../src/lib/money.ts";
import { GB } from "../src/lib/traffic.ts";
import { comboInput } from "../src/modules/combo/schema.ts";
import { saveCombo } from "../src/modules/combo/service.ts";
import { couponInput } from "../src/modules/coupon/schema.ts";
import { saveCoupon } from "../src/modules/coupon/service.ts";
import { quadrantPng } from "../src/modules/file/test-images.ts";
import { lineInput } from "../src/modules/line/schema.ts";
import { saveLine } from "../src/modules/line/service.ts";
import { agentInput } from "../src/modules/node-record/schema.ts";
import { findAgentRow, saveAgent } from "../src/modules/node-record/service.ts";
import type { Order, PayResult, TradeStatus } from "../src/modules/order/schema.ts";
import type { Push } from "../src/modules/push/schema.ts";
import type { HostInfo } from "../src/modules/settings/schema.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import type { UserInfo } from "../src/modules/user/schema.ts";
import { createUser } from "../src/modules/user/service.ts";
import { newId } from "../src/rpc/ids.ts";
import { dobuy, notifySandbox, sandboxTradeNo } from "./commerce.ts";
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from "./fakes/telegram.ts";
import { type FakeTronGrid, startFakeTronGrid } from "./fakes/trongrid.ts";
import { ApiClient, uniqueEmail } from "./harness.ts";
import { ledgerMismatches } from "./ledgers.ts";
import { V2RAY_NODE } from "./nodes.ts";
import { createTestDatabase, type TestDatabase, testClusterUrl } from "./pg.ts";
import { type Replica, startReplica } from "./replica.ts";
import { type RoundRobin, startRoundRobin } from "./round-robin.ts";
import { downloadImage, uploadImage } from "./uploads.ts";

const USDT_ADDRESS = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7";
const PASSWORD = "correct-horse-1";
/** A trial voucher every customer redeems once. */
const VOUCHER_CODE = "REPLICA1X";
/** The bounds: a setting everywhere within 2 s, a job resumed within 30 s of its holder's death. */
const SETTING_SPREAD_MS = 2_000;
const FAILOVER_MS = 30_000;

/** A browser behind the proxy: its own address (X-Forwarded-For), which the replicas believe from the proxy. */
class Browser extends ApiClient {
  constructor(
    baseUrl: string,
    readonly ip: string,
  ) {
    super(baseUrl);
  }

  override raw(path: string, body: string | undefined, headers: Record<string, string> = {}) {
    return super.raw(path, body, { "x-forwarded-for": this.ip, ...headers });
  }

  /** The same browser (its cookies) talking to another address: a replica directly. */
  at(baseUrl: string): Browser {
    const other = new Browser(baseUrl, this.ip);
    for (const [name, value] of this.cookies) other.cookies.set(name, value);
    return other;
  }
}

let addressNo = 0;
const nextAddress = () => {
  addressNo += 1;
  return `198.51.${100 + Math.floor(addressNo / 250)}.${(addressNo % 250) + 1}`;
};

/** Polls `check` until it answers something other than undefined/false, at most until `startedAt + limitMs`. */
async function within<T>(
  what: string,
  startedAt: number,
  limitMs: number,
  check: () => Promise<T | undefined | false>,
): Promise<{ value: T; afterMs: number }> {
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return { value, afterMs: Date.now() - startedAt };
    if (Date.now() > startedAt + limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await Bun.sleep(50);
  }
}

describe.skipIf(!testClusterUrl())("three replicas on one PostgreSQL behind a round-robin proxy", () => {
  let database: TestDatabase;
  let db: Db;
  let ctx: AppContext;
  let grid: FakeTronGrid;
  let telegram: FakeTelegram;
  let proxy: RoundRobin;
  let replicas: Replica[] = [];
  let admin: Browser;
  let comboId: string;
  let node: { node_no: number; api_token: string };
  /** Every account the test made, for the ledger check. */
  const accounts: string[] = [];
  /** Orders whose payment a gateway had acknowledged (sandbox notify answered, USDT sent on chain). */
  const acknowledged: { orderId: string; tradeNo: string; via: "sandbox" | "usdt" }[] = [];
  /** Node reports the proxy answered 200 for. */
  const acceptedReports: string[] = [];

  /** `within`, failing with what the replicas printed on stderr. */
  const waitFor = <T>(
    what: string,
    startedAt: number,
    limitMs: number,
    check: () => Promise<T | undefined | false>,
  ) =>
    within(what, startedAt, limitMs, check).catch((error: Error) => {
      const printed = replicas.map(
        (replica) => `--- ${replica.name} (pid ${replica.pid})\n${replica.output().stderr}`,
      );
      throw new Error(`${error.message}\n${printed.join("\n")}`);
    });

  beforeAll(async () => {
    database = (await createTestDatabase()) as TestDatabase;
    db = await openPostgres(database.url, { max: 4 });
    // The test's own connection prepares the shop before any replica starts, as an operator's
    // `ferry db copy` or first replica would: settings, an admin, a package, a voucher, a node.
    await migrate(db, migrations);
    ctx = createContext(db, { allowPrivateUrls: true });
    grid = startFakeTronGrid();
    telegram = startFakeTelegram();
    proxy = startRoundRobin();
    await ctx.settings.update({
      site_url: proxy.url,
      sandbox_pay: true,
      alipay: "sandbox",
      wxpay: "sandbox",
      usdtpay: USDT_ADDRESS,
      exchange_rate: 7.2,
      usdtCheckTime: 20,
      usdtCheckInterval: 3,
      trongrid_url: grid.url,
      telegram_bot_token: FAKE_BOT_TOKEN,
      telegram_api_base: telegram.url,
      minPushNum: 1,
      traffic_spend_scale: 1,
      upload_traffic_spend_scale: 1,
      minestTrafficSpend: 0,
    });
    const adminEmail = uniqueEmail("admin");
    await createUser(ctx, { email: adminEmail, passwordDigest: transformPassword(PASSWORD), type: "admin" });
    comboId = (
      await saveCombo(
        ctx,
        comboInput.parse({ name: "10G 流量包", price: 15, traffic: 10 * GB, vipDuration: 0 }),
      )
    )._id;
    await saveCoupon(
      ctx,
      couponInput.parse({
        code: VOUCHER_CODE,
        name: "体验券",
        type: "freeUse",
        trafficG: 1,
        NumberOfAuthorizations: 1000,
      }),
    );
    const agent = await saveAgent(
      ctx,
      agentInput.parse({ ...V2RAY_NODE, name: "香港 01", country: { code: "HK" }, ip: "203.0.113.9" }),
    );
    await saveLine(
      ctx,
      lineInput.parse({ name: "TCP", agentID: agent._id, protocol: "vmesh_tcp", bridge: "none", scale: 1 }),
    );
    node = (await findAgentRow(ctx, agent._id)) as { node_no: number; api_token: string };

    replicas = await Promise.all(["a", "b", "c"].map((name) => startReplica(name, database.url)));
    proxy.upstreams.push(...replicas.map((replica) => replica.url));
    admin = new Browser(proxy.url, nextAddress());
    expect((await admin.login(adminEmail, PASSWORD)).code).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await proxy?.close();
    await grid?.close();
    await telegram?.close();
    ctx?.mailer.close();
    await db?.close();
    await database?.drop();
  });

  // ---- what customers and the node do, all through the proxy ----

  async function signUp(): Promise<Browser> {
    const browser = new Browser(proxy.url, nextAddress());
    const email = uniqueEmail("replica");
    const answer = await browser.call<UserInfo>("/api/user/signup", {
      email,
      password: transformPassword(PASSWORD),
    });
    expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: answer.msg });
    accounts.push(answer.data._id);
    return browser;
  }

  async function newOrder(browser: Browser): Promise<string> {
    const order = await browser.ok<Order>("/api/shop/create_order", { combo_id: comboId });
    return order._id;
  }

  const tradeStatus = async (browser: Browser, orderId: string) =>
    (await browser.ok<TradeStatus>("/api/shop/trade_status", { trade_id: orderId })).status;

  /** Buys the package through the sandbox cashier; answers once the notification was acknowledged. */
  async function buyWithSandbox(browser: Browser): Promise<string> {
    const orderId = await newOrder(browser);
    const pay = await dobuy(browser, orderId);
    expect(pay.code).toBe(0);
    const tradeNo = sandboxTradeNo(pay.data);
    const fen = Math.round(pay.data.request_pay_amound * 100);
    // A notification the proxy could not deliver (502) is sent again, as a gateway does.
    for (;;) {
      const response = await notifySandbox(proxy, tradeNo, fen);
      if (response.status === 303) break;
      expect(response.status).toBe(502);
    }
    acknowledged.push({ orderId, tradeNo, via: "sandbox" });
    return orderId;
  }

  /** Starts a USDT payment and sends its exact amount on chain (the fake TronGrid); answers the order. */
  async function payWithUsdt(browser: Browser): Promise<string> {
    const orderId = await newOrder(browser);
    const pay = await browser.ok<PayResult>("/api/shop/dobuy", { order_id: orderId, pay_mode: "usdt" });
    const units = parseDecimal(pay.request_pay_amound_usdt, 6) ?? Number.NaN;
    const tradeNo = (
      await db.get<{ trade_no: string }>(
        "SELECT trade_no FROM payments WHERE order_id = ? AND provider = 'usdt_trc20'",
        orderId,
      )
    )?.trade_no as string;
    grid.addTransfer({ to: USDT_ADDRESS, value: String(units) });
    acknowledged.push({ orderId, tradeNo, via: "usdt" });
    return orderId;
  }

  /** The fake node: pulls its user list, then pushes usage for each user on it, resending a report until it is acknowledged. */
  function startNode(): { stop(): Promise<void> } {
    let running = true;
    const query = new URLSearchParams({
      node_id: String(node.node_no),
      token: node.api_token,
      node_type: "v2ray",
    });
    const headers = { "user-agent": "ferry-agent/9.9.9" };
    const loop = (async () => {
      while (running) {
        const list = await fetch(`${proxy.url}/api/v1/server/UniProxy/user?${query}`, { headers });
        if (list.status !== 200) {
          await Bun.sleep(100);
          continue;
        }
        const users = ((await list.json()) as { users: { id: number }[] }).users;
        if (users.length > 0) {
          const reportId = newId();
          const body = JSON.stringify(Object.fromEntries(users.map((user) => [user.id, [1_000, 20_000]])));
          for (;;) {
            const push = await fetch(`${proxy.url}/api/v1/server/UniProxy/push?${query}&inbound=vmesh_tcp`, {
              method: "POST",
              body,
              headers: { ...headers, "content-type": "application/json", "x-request-id": reportId },
            });
            if (push.status === 200) break;
            await Bun.sleep(100);
          }
          acceptedReports.push(reportId);
        }
        await Bun.sleep(200);
      }
    })();
    return {
      async stop() {
        running = false;
        await loop;
      },
    };
  }

  /** One customer's visit: log in again, buy, check in, redeem the voucher, upload and view an image. */
  async function customerVisit(): Promise<Browser> {
    const browser = await signUp();
    // A session made on one replica works on each of the others, asked directly.
    const me = await browser.ok<UserInfo>("/api/user/userinfo");
    for (const replica of replicas) {
      expect((await browser.at(replica.url).ok<UserInfo>("/api/user/userinfo"))._id).toBe(me._id);
    }
    const again = new Browser(proxy.url, browser.ip);
    expect((await again.login(me.email, PASSWORD)).code).toBe(0);
    const orderId = await buyWithSandbox(again);
    expect(await tradeStatus(again, orderId)).toBe("paied");
    expect((await again.call("/api/user/sign_use")).code).toBe(0);
    expect((await again.call("/api/coupon/redeem_coupon", { code: VOUCHER_CODE })).code).toBe(0);
    const image = quadrantPng(24);
    const uploaded = await uploadImage(again, image);
    expect(uploaded.status).toBe(200);
    // Stored through one replica, served by each.
    for (const replica of replicas) {
      expect((await downloadImage(replica.url, uploaded.filename)).bytes.equals(image)).toBe(true);
    }
    return again;
  }

  test("customers' flows land on every replica in turn, sessions and settings are shared", async () => {
    const nodeLoop = startNode();
    try {
      const customers = await Promise.all([customerVisit(), customerVisit(), customerVisit()]);
      // Transfers: each customer receives the next one's.
      const pushes = await Promise.all(
        customers.map((customer) => customer.ok<Push>("/api/push/create", { pushNumber: 1 })),
      );
      for (const [i, customer] of customers.entries()) {
        const code = (pushes[(i + 1) % pushes.length] as Push).code;
        expect((await customer.call("/api/push/receive", { code })).code).toBe(0);
      }
      // USDT: the watcher, wherever it runs, credits each transfer once.
      const usdtOrders = await Promise.all(customers.map((customer) => payWithUsdt(customer)));
      for (const [i, orderId] of usdtOrders.entries()) {
        await waitFor("a USDT payment credited", Date.now(), FAILOVER_MS, async () =>
          (await tradeStatus(customers[i] as Browser, orderId)) === "paied" ? true : undefined,
        );
      }

      // A setting saved through one replica is in force on each within 2 s (asked directly).
      const notice = `集群公告 ${newId()}`;
      expect((await admin.call("/api/admin/config/set_config", { notice_content: notice })).code).toBe(0);
      const saved = Date.now();
      for (const replica of replicas) {
        const reader = new Browser(replica.url, nextAddress());
        await waitFor(`the notice on replica ${replica.name}`, saved, SETTING_SPREAD_MS, async () =>
          (await reader.ok<HostInfo>("/api/host/get")).notice.notice_content === notice ? true : undefined,
        );
      }
    } finally {
      await nodeLoop.stop();
    }
    expect(acceptedReports.length).toBeGreaterThan(0);
    // Each request went to another replica than the one before it, and every replica answered.
    const hops = proxy.hops;
    const repeats = hops.filter((hop, i) => i > 0 && hop.upstream === (hops[i - 1] as typeof hop).upstream);
    expect(repeats).toEqual([]);
    expect(new Set(hops.map((hop) => hop.upstream))).toEqual(new Set([0, 1, 2]));
    expect(hops.filter((hop) => hop.status >= 500)).toEqual([]);
  }, 90_000);

  /** The replica holding a job's lease now (via the replicas table), or null. */
  async function holderOf(job: string): Promise<Replica | null> {
    const row = await db.get<{ pid: number; port: number }>(
      `SELECT r.pid, r.port FROM leases l JOIN replicas r ON r.id = l.holder
        WHERE l.job = ? AND l.expire_time > ?`,
      job,
      Date.now(),
    );
    return replicas.find((replica) => replica.pid === row?.pid && replica.alive) ?? null;
  }

  test("kill -9 of the jobs' holder under load: they resume elsewhere within 30 s, nothing counted twice", async () => {
    const chat = { id: 7_100_001, first_name: "值班" };
    // The bot answers before the kill (the one poller is up).
    telegram.userSays(chat, "/help");
    await waitFor("the bot's answer before the kill", Date.now(), FAILOVER_MS, async () =>
      telegram.messagesTo(chat.id).length > 0 ? true : undefined,
    );
    const watcherHolder = await waitFor("a live holder of usdt-watcher", Date.now(), FAILOVER_MS, () =>
      holderOf("usdt-watcher").then((holder) => holder ?? undefined),
    );
    const botHolder = await waitFor("a live holder of telegram-bot", Date.now(), FAILOVER_MS, () =>
      holderOf("telegram-bot").then((holder) => holder ?? undefined),
    );

    const nodeLoop = startNode();
    const customer = await customerVisit();
    // Load while the holder dies: the node pushes, customers keep signing up and buying. A request
    // the dying replica was handling is answered 502 by the proxy (nothing acknowledged): that
    // visit is dropped, the next one goes on.
    let loading = true;
    const cutShort: string[] = [];
    const load = (async () => {
      while (loading) {
        try {
          await buyWithSandbox(await signUp());
        } catch (error) {
          cutShort.push((error as Error).message);
        }
      }
    })();
    const victims = [...new Set([watcherHolder.value, botHolder.value])];
    const hopsBefore = proxy.hops.length;
    try {
      await Bun.sleep(500);
      for (const victim of victims) await victim.kill();
      const killed = Date.now();

      const usdtOrder = await payWithUsdt(customer);
      const chatAfter = { id: 7_100_002, first_name: "夜班" };
      telegram.userSays(chatAfter, "/help");
      const credited = await waitFor(
        "the USDT payment made after the kill credited",
        killed,
        FAILOVER_MS,
        async () => ((await tradeStatus(customer, usdtOrder)) === "paied" ? true : undefined),
      );
      const answered = await waitFor(
        "the Telegram message sent after the kill answered",
        killed,
        FAILOVER_MS,
        async () => (telegram.messagesTo(chatAfter.id).length > 0 ? true : undefined),
      );
      expect(credited.afterMs).toBeLessThanOrEqual(FAILOVER_MS);
      expect(answered.afterMs).toBeLessThanOrEqual(FAILOVER_MS);
      // The leases are held again, by replicas that are alive.
      for (const job of ["usdt-watcher", "telegram-bot"]) {
        const holder = await holderOf(job);
        expect({ job, alive: holder?.alive ?? false }).toEqual({ job, alive: true });
        expect(victims).not.toContain(holder as Replica);
      }
    } finally {
      loading = false;
      await load;
      await nodeLoop.stop();
    }

    // Only requests in flight on a killed replica failed, each answered 502 by the proxy.
    const victimIndexes = victims.map((victim) => replicas.indexOf(victim));
    const failed = proxy.hops.slice(hopsBefore).filter((hop) => hop.status >= 500);
    expect(failed.filter((hop) => hop.status !== 502 || !victimIndexes.includes(hop.upstream))).toEqual([]);
    expect(cutShort.filter((message) => !message.includes("HTTP 502"))).toEqual([]);

    // Telegram never saw two getUpdates at once, before, during or after the failover, and each
    // message was answered once.
    expect(telegram.maxPolling).toBe(1);
    expect(telegram.sent.map((message) => message.chat_id)).toEqual([7_100_001, 7_100_002]);

    // Every acknowledged payment credited exactly once.
    for (const { orderId, tradeNo, via } of acknowledged) {
      const order = await db.get<{ status: string }>("SELECT status FROM orders WHERE id = ?", orderId);
      const credits = await db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM traffic_records WHERE order_id = ? AND type = 'buy'",
        orderId,
      );
      const events = await db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM payment_events WHERE trade_no = ? AND result = 'credited'",
        tradeNo,
      );
      expect({ orderId, via, status: order?.status, credits: credits?.n, events: events?.n }).toEqual({
        orderId,
        via,
        status: "paied",
        credits: 1,
        events: 1,
      });
    }
    // No order credited twice, acknowledged or not.
    expect(
      await db.all(
        "SELECT order_id, COUNT(*) AS n FROM traffic_records WHERE type = 'buy' GROUP BY order_id HAVING COUNT(*) > 1",
      ),
    ).toEqual([]);
    // Every acknowledged node report charged once.
    const reports = await db.all<{ report_id: string; n: number }>(
      "SELECT report_id, COUNT(*) AS n FROM node_reports GROUP BY report_id",
    );
    const charged = new Map(reports.map((row) => [row.report_id, row.n]));
    expect(acceptedReports.filter((id) => charged.get(id) !== 1)).toEqual([]);
    // Every balance equals its ledger: the accounts the test saw made, and any a cut-off sign-up made.
    const everyone = (await db.all<{ id: string }>("SELECT id FROM users")).map((row) => row.id);
    expect(everyone).toEqual(expect.arrayContaining(accounts));
    expect(await ledgerMismatches(db, everyone)).toEqual([]);
  }, 120_000);
});

describe.skipIf(!testClusterUrl())("two replicas started at once on an empty database", () => {
  test("both serve; the migrations ran once", async () => {
    const empty = (await createTestDatabase()) as TestDatabase;
    const started: Replica[] = [];
    try {
      const both = await Promise.all(["x", "y"].map((name) => startReplica(name, empty.url)));
      started.push(...both);
      for (const replica of both) {
        expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
        expect((await fetch(`${replica.url}/readyz`)).status).toBe(200);
      }
      const check = await openPostgres(empty.url, { max: 1 });
      try {
        const applied = await check.all<{ version: number; n: number }>(
          "SELECT version, COUNT(*) AS n FROM schema_migrations GROUP BY version ORDER BY version",
        );
        expect(applied).toEqual(migrations.map((migration) => ({ version: migration.version, n: 1 })));
      } finally {
        await check.close();
      }
    } finally {
      for (const replica of started) expect(await replica.stop()).toBe(0);
      await empty.drop();
    }
  }, 60_000);
});
