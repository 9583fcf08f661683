/**
 * Issue 28 item 1: nothing that matters lives in one replica's memory. Two servers (replicas) on
 * one PostgreSQL database, as behind a load balancer: login failures and coupon tries counted on
 * one are refused on the other (the limit is shared, not doubled); online IPs reported through one
 * are counted in the alivelist asked of the other; a setting saved on one is in force on the other
 * within 2 s; the bot's @username learnt by the replica running the bot shows on the other's bind
 * page; a webhook update posted to both is handled once; a dobuy on each at once for one order
 * answers the same attempt. Two servers on one SQLite file are not a deployment: PostgreSQL only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LOG_WINDOW_MS } from "../src/db/counted-log.ts";
import { GB } from "../src/lib/traffic.ts";
import { PER_SOURCE_PER_WINDOW, recordError } from "../src/modules/errors/service.ts";
import { lineInput } from "../src/modules/line/schema.ts";
import { saveLine } from "../src/modules/line/service.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import { knownBotUsername, webhookSecrets } from "../src/modules/telegram/bot-state.ts";
import type { BindInfo } from "../src/modules/telegram/schema.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import { createUser, findUserById } from "../src/modules/user/service.ts";
import { createOrder, dobuy, makeCombo, makeCoupon } from "./commerce.ts";
import { type FakeEpayGateway, startFakeEpayGateway } from "./fakes/epay-gateway.ts";
import {
  FAKE_BOT_TOKEN,
  FAKE_BOT_USERNAME,
  FAST_BOT_TIMINGS,
  type FakeTelegram,
  startFakeTelegram,
} from "./fakes/telegram.ts";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "./harness.ts";
import { saveNode } from "./nodes.ts";
import { testClusterUrl, testDatabaseOf } from "./pg.ts";
import { recordTraffic } from "./traffic.ts";

const onPostgres = testClusterUrl() !== null;

let first: TestServer;
let second: TestServer;
let fake: FakeTelegram;
let gateway: FakeEpayGateway;

beforeAll(async () => {
  if (!onPostgres) return;
  fake = startFakeTelegram();
  gateway = startFakeEpayGateway();
  first = await startTestServer({ rateLimitScale: 1, telegram: FAST_BOT_TIMINGS });
  await first.context.settings.update({
    alipay: "epay",
    wxpay: "epay",
    epay_url: gateway.url,
    epay_pid: gateway.pid,
    epay_key: gateway.key,
    telegram_api_base: fake.url,
  });
  // The second replica's bot loops sleep for the whole file: only the first runs the bot, as one
  // replica does behind a load balancer, so what the second shows of the bot comes from the database.
  second = await startTestServer({
    rateLimitScale: 1,
    replicaOf: first,
    telegram: { ...FAST_BOT_TIMINGS, tickMs: 600_000 },
  });
});

afterAll(async () => {
  if (!onPostgres) return;
  await second?.close();
  await first?.close();
  await gateway?.close();
  await fake?.close();
});

/** The same browser (its cookies) speaking to the other replica. */
function sameBrowserOn(server: TestServer, client: ApiClient): ApiClient {
  const other = new ApiClient(server.url);
  for (const [name, value] of client.cookies) other.cookies.set(name, value);
  return other;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await Bun.sleep(25);
  }
}

describe.skipIf(!onPostgres)("two replicas on one PostgreSQL database", () => {
  test("the replicas share one database", () => {
    expect(testDatabaseOf(second.dataDir)).toBe(testDatabaseOf(first.dataDir) as string);
  });

  test("10 login failures spread over both replicas lock the account on both: the limit is shared, not doubled", async () => {
    const email = `replica-login-${Date.now()}@example.com`;
    await createUser(first.context, { email, passwordDigest: transformPassword("right-password-1") });
    for (let i = 0; i < 10; i++) {
      const replica = i % 2 ? second : first;
      expect((await new ApiClient(replica.url).login(email, `wrong-${i}`)).code).toBe(1000);
    }
    expect((await new ApiClient(second.url).login(email, "right-password-1")).code).toBe(1005);
    expect((await new ApiClient(first.url).login(email, "right-password-1")).code).toBe(1005);
  });

  test("a customer's 10 coupon tries a minute count on both replicas together", async () => {
    const { client } = await loggedInClient(first);
    const elsewhere = sameBrowserOn(second, client);
    const redeem = (on: ApiClient, code: string) => on.call("/api/coupon/redeem_coupon", { code });
    for (let i = 0; i < 10; i++) {
      const answer = await redeem(i % 2 ? elsewhere : client, `NO-SUCH-CODE-${i}`);
      expect(answer.code).toBe(1016);
    }
    const { code } = await makeCoupon(first, { type: "freeUse", trafficG: 1, NumberOfAuthorizations: 10 });
    expect((await redeem(elsewhere, code)).code).toBe(1021);
    expect((await redeem(client, code)).code).toBe(1021);
  });

  test("online IPs a node reports to one replica are counted in the alivelist asked of the other", async () => {
    const agent = await saveNode(first, {
      name: "东京 副本",
      ip: "203.0.113.80",
      host: "replica.example.com",
    });
    const node = (await findAgentRow(first.context, agent._id)) as AgentRow;
    await saveLine(
      first.context,
      lineInput.parse({ name: "副本 TCP", agentID: node.id, protocol: "vmesh_tcp", bridge: "none" }),
    );
    const { user } = await loggedInClient(first);
    await recordTraffic(first, user.id, "buy", GB);
    const uid = (await findUserById(first.context, user.id))?.node_uid as number;
    const url = (server: TestServer, action: string) =>
      `${server.url}/api/v1/server/UniProxy/${action}?token=${node.api_token}&node_id=${node.node_no}&node_type=ferry`;
    const nodeFetch = (target: string, init: RequestInit = {}) =>
      fetch(target, { ...init, headers: { "user-agent": "ferry-agent/9.9.9" } });
    const alivelist = async (server: TestServer) =>
      ((await (await nodeFetch(url(server, "alivelist"))).json()) as { alive: Record<string, number> }).alive;
    // The node is given its users by the first replica…
    expect((await nodeFetch(url(first, "user"))).status).toBe(200);
    // …reports through the first, and the second counts what it reported.
    const report = { [uid]: ["198.51.100.10", "198.51.100.11:4433"] };
    expect(
      (await nodeFetch(url(first, "alive"), { method: "POST", body: JSON.stringify(report) })).status,
    ).toBe(200);
    expect((await alivelist(second))[uid]).toBe(2);
    // A later report through the second replaces it, as the first sees.
    const fewer = { [uid]: ["198.51.100.11"] };
    expect(
      (await nodeFetch(url(second, "alive"), { method: "POST", body: JSON.stringify(fewer) })).status,
    ).toBe(200);
    expect((await alivelist(first))[uid]).toBe(1);
  });

  test("a setting saved on one replica is in force on the other within 2 s", async () => {
    const { client: admin } = await loggedInClient(first, { role: "admin" });
    const hostInfo = async (server: TestServer) =>
      (await new ApiClient(server.url).ok<{ contact_info: string }>("/api/host/get")).contact_info;
    const before = await hostInfo(second); // the second replica has the settings cached now
    const contact = `客服微信 replica-${Date.now()}`;
    expect(before).not.toBe(contact);
    expect((await admin.call("/api/admin/config/set_config", { contact_info: contact })).code).toBe(0);
    const saved = Date.now();
    await until("the setting on the second replica", async () =>
      (await hostInfo(second)) === contact ? true : undefined,
    );
    expect(Date.now() - saved).toBeLessThan(2_000);
  });

  test("the bot's @username, learnt by the replica running the bot, shows on the other's bind page", async () => {
    const { client } = await loggedInClient(second);
    const bindInfo = async () => await client.ok<BindInfo>("/api/user/bind_info");
    expect((await bindInfo()).botUsername).toBe("");
    await first.context.settings.update({ telegram_bot_token: FAKE_BOT_TOKEN });
    await until("getMe", async () => fake.calls.find((call) => call.method === "getMe"));
    await until(
      "the bot's name known to the second replica",
      async () => (await knownBotUsername(second.context)) || undefined,
    );
    expect(await bindInfo()).toMatchObject({ enabled: true, botUsername: FAKE_BOT_USERNAME });
  });

  test("a webhook update posted to both replicas at once is handled once", async () => {
    await first.context.settings.update({ telegram_bot_token: FAKE_BOT_TOKEN, telegram_webhook: true });
    try {
      await until("setWebhook", async () => fake.webhook ?? undefined);
      await until(
        "the webhook setting on the second replica",
        async () => (await second.context.settings.get("telegram_webhook")) || undefined,
      );
      const secrets = webhookSecrets(FAKE_BOT_TOKEN);
      const chat = { id: 9_800_001, first_name: "副本" };
      const update = JSON.stringify(fake.webhookUpdate(chat, "/help"));
      const post = (server: TestServer) =>
        fetch(`${server.url}/api/telegram/webhook/${secrets.path}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secrets.header },
          body: update,
        });
      const answers = await Promise.all([post(first), post(second), post(first), post(second)]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const queued = await first.context.db.all(
        "SELECT text FROM telegram_outbox WHERE chat_id = ?",
        chat.id,
      );
      expect(queued).toHaveLength(1);
    } finally {
      await first.context.settings.update({ telegram_webhook: false });
    }
  });

  test("a dobuy on each replica at once for one order answers the same attempt: one gateway request", async () => {
    const combo = await makeCombo(first, { name: "副本套餐", price: 12, traffic: 1 });
    const { client } = await loggedInClient(first);
    const elsewhere = sameBrowserOn(second, client);
    const order = await createOrder(client, combo._id);
    // A gateway that takes its time: the replica that lost the race finds the attempt unanswered.
    gateway.delayMs = 400;
    try {
      const [here, there] = await Promise.all([dobuy(client, order._id), dobuy(elsewhere, order._id)]);
      expect([here.code, there.code]).toEqual([0, 0]);
      expect(here.data.qrcode).not.toBe("");
      expect(there.data.qrcode).toBe(here.data.qrcode);
    } finally {
      gateway.delayMs = 0;
    }
    const asked = gateway.mapiRequests.filter((request) => request.params.return_url?.includes(order._id));
    expect(asked).toHaveLength(1);
    expect(await first.context.db.all("SELECT status FROM payments WHERE order_id = ?", order._id)).toEqual([
      { status: "pending" },
    ]);
  });

  test("trade_status asked of both replicas at once queries the gateway once", async () => {
    const combo = await makeCombo(first, { name: "副本查询套餐", price: 9, traffic: 1 });
    const { client } = await loggedInClient(first);
    const elsewhere = sameBrowserOn(second, client);
    const order = await createOrder(client, combo._id);
    expect((await dobuy(client, order._id)).code).toBe(0);
    const { trade_no: trade } = (await first.context.db.get<{ trade_no: string }>(
      "SELECT trade_no FROM payments WHERE order_id = ?",
      order._id,
    )) as { trade_no: string };
    // Old enough to be asked about (QUERY_AFTER_MS), as if the customer had waited at the QR code.
    await first.context.db.run(
      "UPDATE payments SET create_time = create_time - 11000 WHERE trade_no = ?",
      trade,
    );
    const status = (on: ApiClient) => on.call("/api/shop/trade_status", { trade_id: order._id });
    const answers = await Promise.all([client, elsewhere, client, elsewhere, client, elsewhere].map(status));
    expect(answers.map((answer) => answer.code)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(gateway.queryRequests.filter((query) => query.get("out_trade_no") === trade)).toHaveLength(1);
  });
  test("the error log's hourly cap per source holds over both replicas recording at once", async () => {
    const window = (Math.floor(Date.now() / LOG_WINDOW_MS) + 2) * LOG_WINDOW_MS;
    await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        recordError((i % 2 ? second : first).context.db, "replica source", new Error(`#${i}`), window + i),
      ),
    );
    const rows = await first.context.db.get<{ n: number; counted: number }>(
      "SELECT COUNT(*) AS n, SUM(repeat_count) AS counted FROM error_logs WHERE name = 'replica source'",
    );
    expect(rows).toEqual({ n: PER_SOURCE_PER_WINDOW + 1, counted: 80 });
  });
});
