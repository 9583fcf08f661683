/**
 * Issue 26, C11: a server started without `--allow-private-urls` (the harness passes it for its
 * fakes; this file does not) refuses URL settings that point at this machine, the local network or
 * link-local addresses when they are saved, and refuses to connect when a name resolves to one
 * (DNS rebinding) for every server it calls: EPay, TronGrid, the Telegram Bot API, SMTP, and
 * webhook receivers (issue 30 §3).
 *
 * The name that resolves to a local address is this machine's own host name (os.hostname(), which
 * /etc/hosts or the container's resolver maps to a loopback or private address): a real name
 * through the real resolver. The test checks that first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { ADDRESS_KIND_TEXT, type AddressKind, addressKind } from "../src/lib/addresses.ts";
import type { Order, PayResult } from "../src/modules/order/schema.ts";
import type { Settings } from "../src/modules/settings/schema.ts";
import { queueChatMessage } from "../src/modules/telegram/outbox.ts";
import type { WebhookLog, WebhookTestResult } from "../src/modules/webhook/schema.ts";
import { pollUsdtOnce } from "../src/payments/usdt-watcher.ts";
import { makeCombo } from "./commerce.ts";
import { type FakeEpayGateway, startFakeEpayGateway } from "./fakes/epay-gateway.ts";
import { FAKE_BOT_TOKEN, FAST_BOT_TIMINGS, type FakeTelegram, startFakeTelegram } from "./fakes/telegram.ts";
import { type FakeTronGrid, startFakeTronGrid } from "./fakes/trongrid.ts";
import { startWebhookReceiver } from "./fakes/webhook-receiver.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "./harness.ts";
import { type MailSink, sinkSettings, startMailSink } from "./mail-sink.ts";

const LOCAL_NAME = hostname();
const TRON_ADDRESS = "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7";

let server: TestServer;
let admin: ApiClient;
let gateway: FakeEpayGateway;
let grid: FakeTronGrid;
let telegram: FakeTelegram;
let sink: MailSink;

beforeAll(async () => {
  server = await startTestServer({ allowPrivateUrls: false, telegram: FAST_BOT_TIMINGS });
  admin = (await loggedInClient(server, { role: "admin" })).client;
  gateway = startFakeEpayGateway();
  grid = startFakeTronGrid();
  telegram = startFakeTelegram();
  sink = await startMailSink();
});
afterAll(async () => {
  await server?.close();
  await Promise.all([gateway?.close(), grid?.close(), telegram?.close(), sink?.close()]);
});

/** `http://<this machine's name>:<port of a fake on 127.0.0.1>/…` */
const byName = (url: string) => {
  const parsed = new URL(url);
  parsed.hostname = LOCAL_NAME;
  return parsed.toString();
};

const setConfig = (patch: Partial<Settings>) => admin.call("/api/admin/config/set_config", patch);

async function errorRows(name: string) {
  return (
    await server.context.db.all<{ msg: string }>(
      "SELECT msg FROM error_logs WHERE name = ? ORDER BY id",
      name,
    )
  ).map((row) => row.msg);
}

async function until<T>(
  what: string,
  read: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

describe("saving (C11)", () => {
  const LOCAL_TARGETS: [string, string][] = [
    ["127.0.0.1", "本机地址"],
    ["[::1]", "本机地址"],
    ["0x7f000001", "本机地址"],
    ["2130706433", "本机地址"],
    ["0177.0.0.1", "本机地址"],
    ["[::ffff:127.0.0.1]", "本机地址"],
    ["localhost", "本机地址"],
    ["10.1.2.3", "内网地址"],
    ["172.16.0.1", "内网地址"],
    ["192.168.1.1", "内网地址"],
    ["[fc00::1]", "内网地址"],
    ["169.254.169.254", "链路本地地址"],
    ["[fe80::1]", "链路本地地址"],
    ["0.0.0.0", "未指定地址"],
  ];
  const URL_SETTINGS = [
    "epay_url",
    "notify_url",
    "return_url",
    "trongrid_url",
    "telegram_api_base",
    "backup_s3_endpoint",
  ] as const;

  test("every URL setting the server calls or hands to a gateway refuses local targets in any spelling (1000)", async () => {
    const before = await server.context.settings.all();
    const answers: string[] = [];
    for (const key of URL_SETTINGS) {
      for (const [host, kind] of LOCAL_TARGETS) {
        const answer = await setConfig({ [key]: `http://${host}:8080/api/` });
        answers.push(`${key} ${host} → ${answer.code} ${answer.msg}`);
        expect(answer.msg).toContain(`${key}: 不能指向${kind}`);
      }
    }
    expect(answers.filter((line) => !line.includes(" → 1000 参数错误 "))).toEqual([]);
    expect(answers[0]).toBe(
      "epay_url 127.0.0.1 → 1000 参数错误 epay_url: 不能指向本机地址（127.0.0.1）；内网网关须以 --allow-private-urls 启动服务",
    );
    const after = await server.context.settings.all();
    for (const key of URL_SETTINGS) expect(after[key]).toBe(before[key]);
  });

  test("so does the SMTP host", async () => {
    for (const [host, kind] of LOCAL_TARGETS) {
      const answer = await setConfig({ smtp_host: host.replace(/^\[(.*)\]$/, "$1") });
      expect({ host, code: answer.code, msg: answer.msg }).toMatchObject({ host, code: 1000 });
      expect(answer.msg).toContain(`smtp_host: 不能指向${kind}`);
    }
    expect(await server.context.settings.get("smtp_host")).toBe("");
  });

  test("public addresses and names are saved; a name is checked where it is used", async () => {
    for (const patch of [
      { epay_url: "https://pay.example.com/" },
      { trongrid_url: "https://api.trongrid.io" },
      { telegram_api_base: "http://203.0.113.10:8081" },
      { notify_url: "https://[2001:db8::1]/" },
      { smtp_host: "smtp.example.com" },
      { return_url: byName("http://127.0.0.1:8080/") },
    ]) {
      const answer = await setConfig(patch);
      expect({ patch, code: answer.code }).toEqual({ patch, code: 0 });
    }
  });

  test("a webhook pointing at a local address is refused on save (issue 30 §3), whatever else the list holds", async () => {
    const events = ["order.paid"] as const;
    const publicHook = {
      id: "",
      url: "https://hooks.example.com/ferry",
      secret: "whsec-public-1",
      events: [...events],
    };
    for (const [host, kind] of LOCAL_TARGETS) {
      const answer = await setConfig({
        webhooks: [
          publicHook,
          { id: "", url: `http://${host}:9000/hook`, secret: "whsec-local-1", events: [...events] },
        ],
      });
      expect({ host, code: answer.code }).toEqual({ host, code: 1000 });
      expect(answer.msg).toContain(`webhooks: 不能指向${kind}`);
    }
    expect(await server.context.settings.get("webhooks")).toEqual([]);
    expect((await setConfig({ webhooks: [publicHook] })).code).toBe(0);
    expect((await setConfig({ webhooks: [] })).code).toBe(0);
  });
});

describe("connecting, after the name resolves (C11)", () => {
  test(`this machine's name (${LOCAL_NAME}) resolves to a local address`, async () => {
    const addresses = (await Bun.dns.lookup(LOCAL_NAME)).map((r) => r.address);
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.filter((address) => addressKind(address) === "public")).toEqual([]);
  });

  test("EPay: a gateway named by it is never called; the payment fails and the log says why", async () => {
    const saved = await setConfig({
      alipay: "epay",
      epay_url: byName(gateway.url),
      epay_pid: gateway.pid,
      epay_key: gateway.key,
    });
    expect(saved.code).toBe(0);
    const combo = await makeCombo(server, { name: "私网测试", price: 10, traffic: 1024 ** 3 });
    const buyer = (await loggedInClient(server)).client;
    const order = await buyer.ok<Order>("/api/shop/create_order", { combo_id: combo._id });
    const refused = await buyer.call<PayResult>("/api/shop/dobuy", {
      order_id: order._id,
      pay_mode: "alipay",
    });
    expect(refused.code).not.toBe(0);
    expect(gateway.mapiRequests).toEqual([]);
    // The address and its kind are whatever this machine's resolver gives (127.0.0.1 here, a 10.x
    // address on some hosts); the log names both.
    const [first] = await Bun.dns.lookup(LOCAL_NAME);
    const kind = addressKind(first?.address ?? "") as Exclude<AddressKind, "public">;
    expect((await errorRows("pay epay 支付宝")).at(-1)).toContain(
      `拒绝连接 ${LOCAL_NAME}（${first?.address}，${ADDRESS_KIND_TEXT[kind]}）`,
    );

    // The same server started with the flag would call it: the refusal is the rule, not the network.
    server.context.allowPrivateUrls = true;
    try {
      await server.context.settings.update({ epay_url: gateway.url });
      const paid = await buyer.call<PayResult>("/api/shop/dobuy", {
        order_id: order._id,
        pay_mode: "alipay",
      });
      expect(paid.code).toBe(0);
      expect(gateway.mapiRequests.length).toBe(1);
    } finally {
      server.context.allowPrivateUrls = false;
    }
  });

  test("TronGrid: the watcher does not ask it, and the key never leaves", async () => {
    expect(
      (await setConfig({ usdtpay: TRON_ADDRESS, trongrid_url: byName(grid.url), usdtCheckInterval: 3600 }))
        .code,
    ).toBe(0);
    await server.context.settings.update({ trongrid_api_key: "key-that-must-stay" });
    const combo = await makeCombo(server, { name: "私网USDT", price: 12, traffic: 1024 ** 3 });
    const buyer = (await loggedInClient(server)).client;
    const order = await buyer.ok<Order>("/api/shop/create_order", { combo_id: combo._id });
    await buyer.ok<PayResult>("/api/shop/dobuy", { order_id: order._id, pay_mode: "usdt" });
    await expect(pollUsdtOnce(server.context)).rejects.toThrow(`拒绝连接 ${LOCAL_NAME}`);
    expect(grid.requests).toEqual([]);
  });

  test("Telegram: the bot does not call a Bot API named by it; the message waits with the reason", async () => {
    await server.context.db.exec("DELETE FROM telegram_outbox");
    expect(
      (await setConfig({ telegram_api_base: byName(telegram.url), telegram_bot_token: FAKE_BOT_TOKEN })).code,
    ).toBe(0);
    await queueChatMessage(server.context, 4242, "你好");
    const lastError = await until("the outbox row's error", async () => {
      const row = await server.context.db.get<{ last_error: string }>(
        "SELECT last_error FROM telegram_outbox WHERE chat_id = 4242",
      );
      return row?.last_error ? row.last_error : undefined;
    });
    expect(lastError).toContain(`拒绝连接 ${LOCAL_NAME}`);
    expect(telegram.calls).toEqual([]);
    expect((await setConfig({ telegram_bot_token: "" })).code).toBe(0);
  });

  test("SMTP: no mail goes to a relay named by it; the reset answers 999 and the log says why", async () => {
    expect((await setConfig({ ...sinkSettings(sink), smtp_host: LOCAL_NAME })).code).toBe(0);
    const { client, user, email } = await loggedInClient(server);
    const answer = await client.call("/api/user/reset_password", {
      email,
      password: "0".repeat(64),
      describUrl: `${server.url}/api/subscript/clash/${user.id}/${user.userkey}`,
    });
    expect(answer.code).toBe(999);
    expect((await errorRows("reset_password mail")).at(-1)).toContain(`拒绝连接 ${LOCAL_NAME}`);
    expect(sink.mails).toEqual([]);
  });

  test("Webhook: a receiver named by it is never called; 发送测试 and the delivery log say why (issue 30 §3)", async () => {
    const receiver = startWebhookReceiver("whsec-private-name-1");
    try {
      const saved = await admin.ok<Settings>("/api/admin/config/set_config", {
        webhooks: [{ url: byName(receiver.url), secret: "whsec-private-name-1", events: ["order.paid"] }],
      });
      const id = saved.webhooks[0]?.id ?? "";
      const tested = await admin.ok<WebhookTestResult>("/api/admin/webhooks/test", { id });
      expect(tested).toMatchObject({ ok: false, status: 0 });
      expect(tested.error).toContain(`拒绝连接 ${LOCAL_NAME}`);
      const log = await admin.ok<WebhookLog>("/api/admin/webhooks/log", { webhookId: id });
      expect(log.list.map((d) => [d.state, d.lastError.includes(`拒绝连接 ${LOCAL_NAME}`)])).toEqual([
        ["given_up", true],
      ]);
      expect(receiver.received).toEqual([]);
    } finally {
      await setConfig({ webhooks: [] });
      await receiver.close();
    }
  });
});
