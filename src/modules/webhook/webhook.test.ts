/**
 * Issue 30 §3, webhooks, against receivers on loopback (tests/fakes/webhook-receiver.ts) that check
 * X-Ferry-Signature as the README tells receivers to:
 * - every event type, made through the real API (signup, the sandbox's payment notification, the
 *   wallet and back-office withdrawal calls, tickets, a node's calls and pushes), is delivered
 *   signed with the webhook's secret;
 * - a receiver that is down gets every event once it is back (each id, none lost), and a delivery
 *   that cannot be made before the give-up time is given up and written to the error log;
 * - a receiver that never answers slows neither a payment notification nor another webhook;
 * - the secret never leaves the server, and saving the mask keeps it; 发送测试 and the log.
 *
 * The sender's timings are shortened through the server's options (ServeOptions.webhooks): the
 * first retry after 100 ms instead of 30 s, doubling up to 800 ms instead of an hour, given up after
 * 8 s instead of 24 h (so 2 s down here stands for the hours a real outage may last, tried many
 * times over).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, giveWallet, makeCombo, payWithSandbox } from "../../../tests/commerce.ts";
import { type FakeWebhookReceiver, startWebhookReceiver } from "../../../tests/fakes/webhook-receiver.ts";
import {
  ApiClient,
  loggedInClient,
  startTestServer,
  startWithAdmin,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { makeChargingNode, recordTraffic } from "../../../tests/traffic.ts";
import { MB } from "../../lib/traffic.ts";
import { Code } from "../../rpc/codes.ts";
import { type AgentRow, findAgentRow } from "../node-record/service.ts";
import { SECRET_MASK, type Settings } from "../settings/schema.ts";
import { transformPassword } from "../user/password.ts";
import { WEBHOOK_EVENTS, type Webhook, type WebhookLog, type WebhookTestResult } from "./schema.ts";
import { startWebhookSender } from "./sender.ts";

const SECRET = "whsec-loopback-0123456789";
const TRC20 = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const GIVE_UP_MS = 8_000;
/** Posts in flight in all (the default is 16); each webhook may have 2 of them. */
const MAX_IN_FLIGHT = 4;

let server: TestServer;
let admin: ApiClient;
const receivers: FakeWebhookReceiver[] = [];

beforeAll(async () => {
  ({ server, admin } = await startWithAdmin(() =>
    startTestServer({
      webhooks: {
        pollMs: 50,
        firstRetryMs: 100,
        maxRetryMs: 800,
        giveUpAfterMs: GIVE_UP_MS,
        maxInFlight: MAX_IN_FLIGHT,
        nodeScanMs: 100,
      },
    }),
  ));
  await server.context.settings.update({
    sandbox_pay: true,
    alipay: "sandbox",
    wxpay: "sandbox",
    min_charge_money: 1,
  });
});
afterAll(async () => {
  await server?.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

function receiver(secret = SECRET): FakeWebhookReceiver {
  const started = startWebhookReceiver(secret);
  receivers.push(started);
  return started;
}

type WebhookInput = Omit<Webhook, "id"> & { id?: string };

/** Saves the whole list through 配置管理 as the back office does; answers the saved (masked) list. */
async function saveWebhooks(webhooks: WebhookInput[]): Promise<Webhook[]> {
  return (await admin.ok<Settings>("/api/admin/config/set_config", { webhooks })).webhooks;
}

/** Adds a webhook to those saved; answers it as saved (with its id). */
async function addWebhook(url: string, events: Webhook["events"], secret = SECRET): Promise<Webhook> {
  const saved = (await admin.ok<Settings>("/api/admin/config/get")).webhooks;
  const after = await saveWebhooks([...saved, { url, secret, events }]);
  return after.at(-1) as Webhook;
}

async function newCustomer() {
  return await loggedInClient(server);
}

/** The node's own HTTP calls (UniProxy), with its token. */
function nodeCall(node: AgentRow, action: string, init: RequestInit = {}) {
  const query = new URLSearchParams({
    token: node.api_token,
    node_id: String(node.node_no),
    node_type: "ferry",
  });
  return fetch(`${server.url}/api/v1/server/UniProxy/${action}?${query}`, {
    ...init,
    headers: { "user-agent": "ferry-agent/9.9.9", ...(init.headers ?? {}) },
  });
}

const ofType = (type: string) => (delivered: { type: string }[]) => delivered.some((d) => d.type === type);

describe("every event reaches a receiver on loopback, signed with the webhook's secret", () => {
  let all: FakeWebhookReceiver;
  beforeAll(async () => {
    all = receiver();
    await addWebhook(all.url, [...WEBHOOK_EVENTS]);
  });

  test("user.registered: a visitor signs up", async () => {
    const email = uniqueEmail("signup");
    const visitor = new ApiClient(server.url);
    await visitor.ok("/api/user/signup", { email, password: transformPassword("correct-horse-1") });
    await all.waitFor((delivered) =>
      delivered.some((d) => d.type === "user.registered" && d.data.email === email),
    );
  });

  test("order.paid: the sandbox gateway's notification pays an order", async () => {
    const buyer = await newCustomer();
    const combo = await makeCombo(server, { name: "月付", price: 12.5, traffic: 1024 });
    const order = await createOrder(buyer.client, combo._id);
    await payWithSandbox(server, buyer.client, order._id);
    await all.waitFor((delivered) =>
      delivered.some((d) => d.type === "order.paid" && d.data.orderId === order._id),
    );
    const paid = all.delivered.find((d) => d.data.orderId === order._id);
    expect(paid?.data).toMatchObject({
      userId: buyer.user.id,
      email: buyer.email,
      amountFen: 1250,
      method: "alipay",
    });
  });

  test("withdrawal.requested and withdrawal.settled: a customer withdraws, an admin settles one and refuses another", async () => {
    const seller = await newCustomer();
    await seller.client.ok("/api/wallet/change_reward_adress", { addressType: "USDT-TRC20", address: TRC20 });
    await giveWallet(server, seller.user.id, 300);
    const first = await seller.client.ok<{ _id: string }>("/api/wallet/make_charge");
    await admin.ok("/api/admin/charge/checkout_charge", { charge_id: first._id, txid: "tx-1" });
    await giveWallet(server, seller.user.id, 200);
    const second = await seller.client.ok<{ _id: string }>("/api/wallet/make_charge");
    await admin.ok("/api/admin/charge/refuse_charge", { charge_id: second._id, reason: "地址有误" });
    const settled = (id: string) => (delivered: FakeWebhookReceiver["delivered"]) =>
      delivered.find((d) => d.type === "withdrawal.settled" && d.data.withdrawalId === id);
    const requestedOf = (delivered: FakeWebhookReceiver["delivered"]) =>
      delivered.filter((d) => d.type === "withdrawal.requested" && d.data.userId === seller.user.id);
    // Deliveries are posted side by side: they may arrive in any order.
    await all.waitFor(
      (delivered) =>
        Boolean(settled(first._id)(delivered) && settled(second._id)(delivered)) &&
        requestedOf(delivered).length === 2,
    );
    const requested = requestedOf(all.delivered).sort(
      (a, b) => Number(b.data.moneyFen) - Number(a.data.moneyFen),
    );
    expect(requested.map((d) => [d.data.withdrawalId, d.data.moneyFen])).toEqual([
      [first._id, 300],
      [second._id, 200],
    ]);
    expect(settled(first._id)(all.delivered)?.data).toMatchObject({
      status: "paid",
      txid: "tx-1",
      moneyFen: 300,
    });
    expect(settled(second._id)(all.delivered)?.data).toMatchObject({ status: "refused", msg: "地址有误" });
  });

  test("ticket.created and ticket.replied: a customer opens a ticket, support answers", async () => {
    const asker = await newCustomer();
    const ticket = await asker.client.ok<{ _id: string }>("/api/feedback/create", {
      title: "节点连不上",
      desc: "香港节点全部超时",
      imageUrl: "",
    });
    await admin.ok("/api/feedback/response", { id: ticket._id, desc: "已修复，请重试", imageUrl: "" });
    await all.waitFor((delivered) =>
      ["ticket.created", "ticket.replied"].every((type) =>
        delivered.some((d) => d.type === type && d.data.ticketId === ticket._id),
      ),
    );
    expect(
      all.delivered.find((d) => d.type === "ticket.created" && d.data.ticketId === ticket._id)?.data,
    ).toMatchObject({ userId: asker.user.id, email: asker.email, title: "节点连不上" });
    expect(all.delivered.find((d) => d.type === "ticket.replied")?.data).toMatchObject({
      author: "ADMIN",
      text: "已修复，请重试",
    });
  });

  test("node.down once a node has been silent for three update intervals, node.up at its next call", async () => {
    const agentId = await makeChargingNode(server, "Asia/Shanghai");
    const node = (await findAgentRow(server.context, agentId)) as AgentRow;
    expect((await nodeCall(node, "config")).status).toBe(200);
    // The node was last heard ten minutes ago (updateV2rayDuration 60 s: silent for 3 minutes is down).
    const heard = Date.now() - 10 * 60_000;
    await server.context.db.run("UPDATE agents SET last_seen_time = ? WHERE id = ?", heard, agentId);
    await all.waitFor((delivered) =>
      delivered.some((d) => d.type === "node.down" && d.data.nodeId === agentId),
    );
    expect((await nodeCall(node, "config")).status).toBe(200);
    await all.waitFor((delivered) =>
      delivered.some((d) => d.type === "node.up" && d.data.nodeId === agentId),
    );
    const events = all.delivered.filter((d) => d.data.nodeId === agentId && d.type.startsWith("node."));
    expect(events.map((d) => [d.type, d.data.lastSeenTime])).toEqual([
      ["node.down", heard],
      ["node.up", heard],
    ]);
  });

  test("traffic.exhausted: a node's push takes a customer's last traffic, once", async () => {
    const agentId = await makeChargingNode(server, "Asia/Shanghai");
    const node = (await findAgentRow(server.context, agentId)) as AgentRow;
    const customer = await newCustomer();
    await recordTraffic(server, customer.user.id, "buy", MB);
    expect((await nodeCall(node, "user")).status).toBe(200); // the node is given the customer
    const push = async (bytes: number) =>
      await nodeCall(node, "push", {
        method: "POST",
        body: JSON.stringify({ [customer.user.node_uid]: [0, bytes] }),
        headers: { "content-type": "application/json", "x-request-id": crypto.randomUUID() },
      });
    expect((await push(MB / 2)).status).toBe(200);
    expect((await push(MB)).status).toBe(200);
    expect((await push(MB)).status).toBe(200);
    await all.waitFor(ofType("traffic.exhausted"));
    const exhausted = await server.context.db.all<{ body: string }>(
      "SELECT body FROM webhook_deliveries WHERE type = 'traffic.exhausted'",
    );
    expect(exhausted.map((row) => JSON.parse(row.body).data.userId)).toEqual([customer.user.id]);
    expect(all.delivered.find((d) => d.type === "traffic.exhausted")?.data).toMatchObject({
      userId: customer.user.id,
      email: customer.email,
      nodeId: agentId,
    });
  });

  test("every delivery verified, and each event type was delivered", () => {
    expect(all.received.length).toBeGreaterThan(0);
    expect(all.received.filter((d) => !d.verified)).toEqual([]);
    expect(new Set(all.delivered.map((d) => d.type))).toEqual(new Set(WEBHOOK_EVENTS));
  });
});

describe("a receiver down, then back", () => {
  test("gets every event once it is back: each id delivered, none lost", async () => {
    const flaky = receiver();
    await flaky.down();
    await addWebhook(flaky.url, ["user.registered"]);
    const emails = Array.from({ length: 5 }, () => uniqueEmail("outage"));
    for (const email of emails) {
      await new ApiClient(server.url).ok("/api/user/signup", {
        email,
        password: transformPassword("correct-horse-1"),
      });
    }
    const queued = await server.context.db.all<{ event_id: string; body: string }>(
      "SELECT event_id, body FROM webhook_deliveries WHERE url = ?",
      flaky.url,
    );
    expect(queued.map((row) => JSON.parse(row.body).data.email).sort()).toEqual([...emails].sort());
    // Down for a while: every delivery is tried again and again, and fails.
    const retried = async () =>
      await server.context.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE url = ? AND attempts >= 5 AND delivered_time = 0",
        flaky.url,
      );
    const deadline = Date.now() + 20_000;
    while (Number((await retried())?.n) < emails.length && Date.now() < deadline) await Bun.sleep(50);
    expect(Number((await retried())?.n)).toBe(emails.length);
    expect(flaky.received).toEqual([]);
    flaky.up();
    const ids = queued.map((row) => row.event_id);
    await flaky.waitFor((delivered) => ids.every((id) => delivered.some((d) => d.id === id)));
    expect(flaky.delivered.every((d) => d.verified)).toBe(true);
    expect(new Set(flaky.delivered.map((d) => d.id))).toEqual(new Set(ids));
  });

  test("a delivery that cannot be made before the give-up time is given up, written to the error log and told to the admins' bot", async () => {
    const gone = receiver();
    await gone.down();
    // The admin has bound the bot: the give-up is told there too.
    const adminId = (await server.context.db.get<{ id: string }>("SELECT id FROM users WHERE type = 'admin'"))
      ?.id;
    await server.context.db.run(
      "INSERT INTO telegram_bindings (user_id, chat_id, bind_time) VALUES (?, 4242, ?)",
      adminId ?? "",
      Date.now(),
    );
    await addWebhook(gone.url, ["ticket.created"]);
    const asker = await newCustomer();
    const ticket = await asker.client.ok<{ _id: string }>("/api/feedback/create", {
      title: "无人接收",
      desc: "接收端一直不在",
      imageUrl: "",
    });
    const givenUp = async () =>
      await server.context.db.get<{ event_id: string; attempts: number; given_up_time: number }>(
        "SELECT event_id, attempts, given_up_time FROM webhook_deliveries WHERE url = ?",
        gone.url,
      );
    const deadline = Date.now() + GIVE_UP_MS + 20_000;
    while (!(await givenUp())?.given_up_time && Date.now() < deadline) await Bun.sleep(100);
    const row = await givenUp();
    expect(row?.given_up_time).toBeGreaterThan(0);
    expect(row?.attempts).toBeGreaterThan(3);
    const errors = await server.context.db.all<{ msg: string }>(
      "SELECT msg FROM error_logs WHERE name = 'webhook sender'",
    );
    expect(errors.map((error) => error.msg)).toEqual([
      expect.stringContaining(`Webhook 投递已放弃：ticket.created 事件 ${row?.event_id} 发往 ${gone.url}`),
    ]);
    const told = await server.context.db.all<{ text: string }>(
      "SELECT text FROM telegram_outbox WHERE chat_id = 4242 AND text LIKE 'Webhook%'",
    );
    expect(told.map((message) => message.text)).toEqual(errors.map((error) => error.msg));
    expect(ticket._id).toBeTruthy();
  });
});

describe("a receiver that never answers", () => {
  let slow: FakeWebhookReceiver;
  test("slows neither a payment notification nor the deliveries to another webhook", async () => {
    slow = receiver();
    slow.mode = "hang";
    const fast = receiver();
    await addWebhook(slow.url, ["order.paid", "user.registered"]);
    await addWebhook(fast.url, ["order.paid"]);
    // More deliveries wait for the slow receiver than the sender posts at once in all (MAX_IN_FLIGHT).
    for (let n = 0; n < MAX_IN_FLIGHT + 2; n += 1) {
      await new ApiClient(server.url).ok("/api/user/signup", {
        email: uniqueEmail("slow"),
        password: transformPassword("correct-horse-1"),
      });
    }
    // It holds two of them open: its own share of the posts in flight, no more.
    const deadline = Date.now() + 20_000;
    while (slow.hanging < 2 && Date.now() < deadline) await Bun.sleep(20);
    expect(slow.hanging).toBe(2);
    // While it hangs, payment notifications are answered (payWithSandbox checks the 303)…
    const buyer = await newCustomer();
    const combo = await makeCombo(server, { name: "季付", price: 30, traffic: 1024 });
    const first = await createOrder(buyer.client, combo._id);
    await payWithSandbox(server, buyer.client, first._id);
    const second = await createOrder(buyer.client, combo._id);
    await payWithSandbox(server, buyer.client, second._id);
    expect(slow.hanging).toBe(2);
    // …and the other webhook gets both payments long before the slow posts time out (10 s).
    await fast.waitFor(
      (delivered) => [first._id, second._id].every((id) => delivered.some((d) => d.data.orderId === id)),
      5_000,
    );
    expect(slow.hanging).toBe(2);
    expect(slow.delivered).toEqual([]);
  });

  test("a sender whose lease is lost (its signal aborted) cuts its posts in flight and stops", async () => {
    // A second sender, as another replica's would be while it held the lease: it takes two more of
    // the waiting deliveries (the claim keeps it from posting one the server's sender holds).
    const lease = new AbortController();
    const servers = slow.hangingIds;
    const other = startWebhookSender(
      server.context,
      // Its posts would wait a minute for an answer: only the abort can end them within the test.
      { pollMs: 50, maxInFlight: MAX_IN_FLIGHT, timeoutMs: 60_000 },
      lease.signal,
    );
    const deadline = Date.now() + 20_000;
    while (slow.hanging < 4 && Date.now() < deadline) await Bun.sleep(20);
    expect(slow.hanging).toBe(4);
    const others = slow.hangingIds.filter((id) => !servers.includes(id));
    expect(others).toHaveLength(2);
    lease.abort();
    const cut = () => !slow.hangingIds.some((id) => others.includes(id));
    while (!cut() && Date.now() < deadline) await Bun.sleep(20);
    expect({ cut: cut(), hanging: slow.hangingIds.sort() }).toEqual({
      cut: true,
      hanging: [...servers].sort(),
    });
    await other.stop();
    await Bun.sleep(300); // its polls would have started new posts by now
    expect(slow.hangingIds.sort()).toEqual([...servers].sort());
  });
});

describe("secrets, 发送测试 and the delivery log", () => {
  test("the secret never appears in the settings' answers; saving the mask keeps it", async () => {
    const pinged = receiver("whsec-kept-across-saves-42");
    const saved = await addWebhook(pinged.url, ["order.paid"], "whsec-kept-across-saves-42");
    expect(saved.secret).toBe(SECRET_MASK);
    expect(saved.id).not.toBe("");
    const raw = await admin.raw(
      "/api/admin/config/get",
      JSON.stringify({ data: Buffer.from("{}").toString("base64") }),
    );
    const answer = Buffer.from(((await raw.json()) as { data: string }).data, "base64").toString();
    expect(answer).toContain(pinged.url);
    for (const secret of [SECRET, "whsec-kept-across-saves-42"]) expect(answer).not.toContain(secret);
    // Saved again as the back office sends it (mask in place), with another event: the secret stays.
    const list = (await admin.ok<Settings>("/api/admin/config/get")).webhooks;
    await saveWebhooks(
      list.map((webhook) =>
        webhook.id === saved.id ? { ...webhook, events: ["order.paid", "node.down"] } : webhook,
      ),
    );
    const tested = await admin.ok<WebhookTestResult>("/api/admin/webhooks/test", { id: saved.id });
    expect(tested).toMatchObject({ ok: true, status: 200, error: "" });
    expect(pinged.delivered.map((d) => [d.type, d.id, d.verified])).toEqual([["ping", tested.eventId, true]]);
    // A mask with nothing stored behind it is refused.
    const unknown = await admin.call("/api/admin/config/set_config", {
      webhooks: [
        ...list,
        { url: "https://hooks.example.com/new", secret: SECRET_MASK, events: ["order.paid"] },
      ],
    });
    expect(unknown.code).toBe(Code.badInput);
    // So is a list naming one id twice (each webhook's log and secret go by its id).
    const twice = await admin.call("/api/admin/config/set_config", { webhooks: [...list, { ...saved }] });
    expect(twice.code).toBe(Code.badInput);
    expect(twice.msg).toContain("Webhook ID 重复");
  });

  test("发送测试 reports a receiver's failure; the log shows the last status per webhook; admins only", async () => {
    const failing = receiver();
    failing.mode = "fail";
    const saved = await addWebhook(failing.url, ["node.up"]);
    const tested = await admin.ok<WebhookTestResult>("/api/admin/webhooks/test", { id: saved.id });
    expect(tested).toMatchObject({ ok: false, status: 503 });
    expect(tested.error).toContain("HTTP 503");
    const log = await admin.ok<WebhookLog>("/api/admin/webhooks/log", { webhookId: saved.id });
    expect(log.summaries.find((s) => s.webhookId === saved.id)).toMatchObject({
      lastStatus: 503,
      lastDelivered: false,
      pending: 0,
    });
    expect(log.list.map((d) => [d.type, d.state, d.lastStatus])).toEqual([["ping", "given_up", 503]]);
    expect(log.total).toBe(1);
    const customer = await newCustomer();
    for (const path of ["/api/admin/webhooks/test", "/api/admin/webhooks/log"]) {
      expect((await customer.client.call(path, { id: saved.id })).code).toBe(Code.forbidden);
    }
    expect(failing.received.map((d) => d.type)).toEqual(["ping"]);
  });
});
