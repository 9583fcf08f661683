/**
 * `ferry telegram status`, run as a real process against the data directory of a running server
 * whose bot talks to the fake Bot API (tests/fakes/telegram.ts). Every row it reports is made by
 * the production code paths: chats bind by sending the bot their command, the sender delivers,
 * gives up on a chat that blocked the bot (403) and keeps retrying while the API answers 500, and
 * the alert scan tells a time package ending.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tx } from "../src/db/db.ts";
import { DAY_MS, formatInstant } from "../src/lib/time.ts";
import { changeTraffic } from "../src/modules/ledger/service.ts";
import { scanAlerts } from "../src/modules/telegram/alerts.ts";
import { queueUserMessage } from "../src/modules/telegram/outbox.ts";
import type { BindInfo } from "../src/modules/telegram/schema.ts";
import type { TelegramStatus } from "../src/modules/telegram/status.ts";
import {
  FAKE_BOT_TOKEN,
  FAST_BOT_TIMINGS,
  type FakeChat,
  type FakeTelegram,
  startFakeTelegram,
} from "../tests/fakes/telegram.ts";
import { loggedInClient, startTestServer, type TestServer } from "../tests/harness.ts";
import { expectHelp, type FerryIn, ferryIn } from "./test-helpers.ts";

let fake: FakeTelegram;
let server: TestServer;
let cli: FerryIn;

/** Not the panel's default (Asia/Shanghai), so the output shows the setting is used. */
const TIME_ZONE = "America/New_York";

beforeAll(async () => {
  fake = startFakeTelegram();
  // The alert scan runs once when the token is set and then hourly: the test's own scan is the one that tells.
  server = await startTestServer({ rateLimitScale: 1, telegram: FAST_BOT_TIMINGS });
  await server.context.settings.update({ site_url: server.url, timezone: TIME_ZONE });
  cli = ferryIn(server.dataDir);
});

afterAll(async () => {
  fake.mode = "normal";
  await server?.close();
  await fake?.close();
});

async function until<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await Bun.sleep(25);
  }
}

/** A customer who binds a chat by sending the bot the command their profile shows. */
async function boundCustomer(chat: FakeChat) {
  const account = await loggedInClient(server);
  const info = (await account.client.call<BindInfo>("/api/user/bind_info")).data;
  fake.userSays(chat, info.command);
  await until("绑定成功", () => fake.messagesTo(chat.id).some((m) => m.text.includes("绑定成功")));
  return account;
}

const outboxRow = async (text: string) =>
  await server.context.db.get<{ status: string; last_error: string }>(
    "SELECT status, last_error FROM telegram_outbox WHERE text = ?",
    text,
  );

test("telegram status has --help", async () => {
  await expectHelp([
    [["telegram"], ["status"]],
    [
      ["telegram", "status"],
      ["--json", "--data"],
    ],
  ]);
});

test("with no token: the bot is off and nothing has happened", async () => {
  expect(await cli.json<TelegramStatus>(["telegram", "status"])).toEqual({
    tokenSet: false,
    botId: "",
    receiving: "off",
    boundAccounts: 0,
    outbox: { pending: 0, sent: 0, failed: 0 },
    lastSentTime: null,
    failures: [],
    alerts: [],
  });
  const text = await cli.ok(["telegram", "status"]);
  expect(text).toContain("bot token    not set: the bot is off");
  expect(text).toContain("outbox       0 pending, 0 sent, 0 failed");
  expect(text).toContain("last sent    never");
  expect(text).toContain("failed messages: none");
  expect(text).toContain("alerts told: none");
});

test("bound accounts, the outbox, why messages failed, when one last went out, the alerts told — never the token", async () => {
  await server.context.settings.update({ telegram_api_base: fake.url, telegram_bot_token: FAKE_BOT_TOKEN });
  const aliceChat: FakeChat = { id: 8_100_001, first_name: "Alice", username: "alice_tg" };
  const bobChat: FakeChat = { id: 8_100_002, first_name: "Bob" };
  const alice = await boundCustomer(aliceChat);
  const bob = await boundCustomer(bobChat);

  // Bob blocks the bot: his next message is given up on the first try (403).
  fake.blocked.add(bobChat.id);
  const toBob =
    "您的工单「发票开具」有新回复：\n请在个人信息页填写发票抬头后重新提交，我们会在三个工作日内处理完毕。";
  await queueUserMessage(server.context, bob.user.id, toBob);
  await until("Bob's message given up", async () => (await outboxRow(toBob))?.status === "failed");

  // Alice's time package ends within 3 days: the alert scan tells her, once.
  const ctx = server.context;
  const scanTime = Date.now();
  await tx(
    ctx.db,
    async () =>
      await changeTraffic(ctx.db, {
        userId: alice.user.id,
        type: "buy",
        desc: "月付",
        vipExpireTime: scanTime + 2 * DAY_MS,
        now: scanTime,
        timeZone: TIME_ZONE,
      }),
  );
  expect(await scanAlerts(ctx, scanTime)).toBe(1);
  await until("the alert sent", () =>
    fake.messagesTo(aliceChat.id).some((m) => m.text.includes("时间套餐将于")),
  );

  // The API fails (500): Alice's next message waits and is retried.
  fake.mode = "error500";
  await queueUserMessage(ctx, alice.user.id, "订单已支付：月付 100G");
  await until(
    "a failed try",
    async () => (await outboxRow("订单已支付：月付 100G"))?.last_error === "500: Internal Server Error",
  );

  const status = await cli.json<TelegramStatus>(["telegram", "status"]);
  expect(status).toMatchObject({
    tokenSet: true,
    botId: "7000000001",
    receiving: "polling",
    boundAccounts: 2,
    // Sent: the two 绑定成功 answers and the alert.
    outbox: { pending: 1, sent: 3, failed: 1 },
  });
  // Latest first; the text cut to 40 characters on one line.
  expect(status.failures).toEqual([
    {
      id: expect.any(String),
      chatId: aliceChat.id,
      account: alice.email,
      status: "pending",
      attempts: expect.any(Number),
      lastError: "500: Internal Server Error",
      textStart: "订单已支付：月付 100G",
      createTime: expect.any(Number),
    },
    {
      id: expect.any(String),
      chatId: bobChat.id,
      account: bob.email,
      status: "failed",
      attempts: 1,
      lastError: "403: Forbidden: bot was blocked by the user",
      textStart: "您的工单「发票开具」有新回复： 请在个人信息页填写发票抬头后重新提交，我们会在三…",
      createTime: expect.any(Number),
    },
  ]);
  expect(status.failures[0]?.attempts).toBeGreaterThanOrEqual(1);
  expect(status.alerts).toEqual([
    { kind: "package-ending", subjectId: alice.user.id, subject: alice.email, toldTime: scanTime },
  ]);
  // The alert went out after the scan queued it, and nothing went out since (the API fails).
  expect(status.lastSentTime).toBeGreaterThanOrEqual(scanTime);

  const text = await cli.ok(["telegram", "status"]);
  const at = (ms: number) => formatInstant(ms, TIME_ZONE);
  expect(text).toContain("bot token    set (bot id 7000000001)");
  expect(text).toContain("receiving    long polling (getUpdates)");
  expect(text).toContain("bound        2 accounts");
  expect(text).toContain("outbox       1 pending, 3 sent, 1 failed");
  expect(text).toContain(`last sent    ${at(status.lastSentTime as number)}`);
  expect(text).toContain(`times in     ${TIME_ZONE}`);
  // Still being retried between the two runs: its count may have grown.
  expect(text).toMatch(
    new RegExp(
      `chat ${aliceChat.id} \\(${alice.email}\\)  retrying, \\d+ attempts? so far  500: Internal Server Error  "订单已支付：月付 100G"`,
    ),
  );
  expect(text).toContain(
    `${at(status.failures[1]?.createTime as number)}  chat ${bobChat.id} (${bob.email})  given up after 1 attempt  403: Forbidden: bot was blocked by the user  "您的工单「发票开具」有新回复： 请在`,
  );
  expect(text).toContain(`${at(scanTime)}  package-ending  ${alice.email}`);
  // Only the start of a message is shown.
  expect(text).not.toContain("三个工作日内处理完毕");

  // The token's secret part is printed nowhere.
  const secret = FAKE_BOT_TOKEN.split(":")[1] as string;
  expect(text).not.toContain(secret);
  expect(JSON.stringify(status)).not.toContain(secret);
});
