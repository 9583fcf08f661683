/**
 * The Telegram bot (issue 13 §5) driven end to end: a real ferry server whose settings point at a
 * fake Bot API on 127.0.0.1 (tests/fakes/telegram.ts), customers and admins talking to the bot in
 * private chats, orders paid through the sandbox gateway, and the fake failing (500) or hanging
 * while the panel keeps answering. Nothing here measures time: conditions are polled for.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, makeCombo, payWithSandbox } from "../../../tests/commerce.ts";
import {
  FAKE_BOT_TOKEN,
  FAKE_BOT_USERNAME,
  FAST_BOT_TIMINGS,
  type FakeChat,
  type FakeTelegram,
  startFakeTelegram,
} from "../../../tests/fakes/telegram.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { admitDevice, setDeviceLimit } from "../device/service.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { UserRow } from "../user/row.ts";
import { scanAlerts } from "./alerts.ts";
import { webhookSecrets } from "./bot-state.ts";
import { parseCommand } from "./commands.ts";
import { queueAdminMessage, queueUserMessage } from "./outbox.ts";
import type { BindInfo } from "./schema.ts";

let fake: FakeTelegram;
let server: TestServer;
let chatCounter = 9_000_000;

/** Polls until `check` returns a value other than undefined/false; fails with `what` after a generous deadline. */
async function until<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await Bun.sleep(25);
  }
}

const newChat = (name = "客户"): FakeChat => {
  chatCounter += 1;
  return { id: chatCounter, first_name: name, username: `u${chatCounter}` };
};

/** The chat's messages after the first `skip`, once there are at least `count` of them. */
const nextMessages = (chat: FakeChat, skip: number, count = 1) =>
  until(`${count} message(s) to chat ${chat.id} after ${skip}`, () => {
    const messages = fake.messagesTo(chat.id).slice(skip);
    return messages.length >= count ? messages.map((m) => m.text) : undefined;
  });

/** Sends `text` from the chat and returns the bot's answer. */
async function ask(chat: FakeChat, text: string): Promise<string> {
  const before = fake.messagesTo(chat.id).length;
  fake.userSays(chat, text);
  const [answer] = await nextMessages(chat, before);
  return answer as string;
}

async function bindInfoOf(client: ApiClient): Promise<BindInfo> {
  const answer = await client.call<BindInfo>("/api/user/bind_info");
  expect(answer.code).toBe(0);
  return answer.data;
}

/** A customer account with a chat bound to it through the bot, as a customer would do it. */
async function boundCustomer(role: "normal" | "admin" = "normal") {
  const account = await loggedInClient(server, { role });
  const chat = newChat(role === "admin" ? "管理员" : "客户");
  const info = await bindInfoOf(account.client);
  expect(await ask(chat, info.command)).toContain("绑定成功");
  return { ...account, chat };
}

const bindingOf = async (userId: string) =>
  await server.context.db.get<{ chat_id: number; username: string }>(
    "SELECT chat_id, username FROM telegram_bindings WHERE user_id = ?",
    userId,
  );

beforeAll(async () => {
  fake = startFakeTelegram();
  server = await startTestServer({ rateLimitScale: 1, telegram: FAST_BOT_TIMINGS });
  await server.context.settings.update({
    site_url: server.url,
    sandbox_pay: true,
    alipay: "sandbox",
    wxpay: "sandbox",
    telegram_api_base: fake.url,
    telegram_bot_token: FAKE_BOT_TOKEN,
  });
});

afterAll(async () => {
  await server?.close();
  await fake?.close();
});

describe("binding", () => {
  test("the profile gets a fresh short-lived code for its own account only, with the bot's name from getMe", async () => {
    const { client, user } = await loggedInClient(server);
    await until("getMe", () => fake.calls.some((call) => call.method === "getMe"));
    const info = await until("the bot's username", async () => {
      const answer = await bindInfoOf(client);
      return answer.botUsername ? answer : undefined;
    });
    expect(info).toMatchObject({
      enabled: true,
      bound: false,
      botUsername: FAKE_BOT_USERNAME,
      chatName: "",
      bindTime: 0,
    });
    expect(info.command).toMatch(new RegExp(`^/bind ${user.id} \\d{8}$`));
    expect(info.link).toBe(
      `https://t.me/${FAKE_BOT_USERNAME}?start=${user.id}_${info.command.split(" ")[2]}`,
    );
    expect(info.expireTime).toBeGreaterThan(Date.now());
    // Only the hash is stored.
    const stored = await server.context.db.get<{ code_hash: string }>(
      "SELECT code_hash FROM telegram_bind_codes WHERE user_id = ?",
      user.id,
    );
    expect(stored?.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.code_hash).not.toContain(info.command.split(" ")[2] as string);
  });

  test("a wrong code is refused with the same answer whether or not the id exists, and binds nothing", async () => {
    const { client, user } = await loggedInClient(server);
    const info = await bindInfoOf(client);
    const code = info.command.split(" ")[2] as string;
    const wrong = code === "00000000" ? "00000001" : "00000000";
    const chat = newChat();
    const refusedForReal = await ask(chat, `/bind ${user.id} ${wrong}`);
    const refusedForNobody = await ask(chat, `/bind ${"f".repeat(24)} ${wrong}`);
    expect(refusedForReal).toContain("绑定码错误或已过期");
    expect(refusedForNobody).toBe(refusedForReal);
    expect(await bindingOf(user.id)).toBeNull();
    expect((await bindInfoOf(client)).bound).toBe(false);
  });

  test("the right code binds the chat (绑定成功), once; the profile then shows it bound, to which chat and since when", async () => {
    const { client, user, email } = await loggedInClient(server);
    const info = await bindInfoOf(client);
    const chat = newChat();
    const sentAfter = Date.now();
    const answer = await ask(chat, info.command);
    expect(answer).toContain("绑定成功");
    expect(answer).toContain(email);
    expect(await bindingOf(user.id)).toEqual({ chat_id: chat.id, username: chat.username as string });
    const bound = await bindInfoOf(client);
    expect(bound).toMatchObject({
      enabled: true,
      bound: true,
      command: "",
      expireTime: 0,
      chatName: `@${chat.username}`,
    });
    // Bound when the bot handled the command: after it was sent, before the profile asked.
    expect(bound.bindTime).toBeGreaterThanOrEqual(sentAfter);
    expect(bound.bindTime).toBeLessThanOrEqual(Date.now());
    // Single use: the same command from another chat does not take the account.
    const thief = newChat("别人");
    expect(await ask(thief, info.command)).toContain("绑定码错误或已过期");
    expect((await bindingOf(user.id))?.chat_id).toBe(chat.id);
  });

  test("a chat without a @username is shown by its name", async () => {
    const { client } = await loggedInClient(server);
    chatCounter += 1;
    const chat: FakeChat = { id: chatCounter, first_name: "王小明" };
    expect(await ask(chat, (await bindInfoOf(client)).command)).toContain("绑定成功");
    expect(await bindInfoOf(client)).toMatchObject({ bound: true, chatName: "王小明" });
  });

  test("the deep link's /start <userId>_<code> binds like /bind", async () => {
    const { client, user } = await loggedInClient(server);
    const info = await bindInfoOf(client);
    const start = new URL(info.link).searchParams.get("start");
    const chat = newChat();
    expect(await ask(chat, `/start ${start}`)).toContain("绑定成功");
    expect((await bindingOf(user.id))?.chat_id).toBe(chat.id);
  });

  test("five wrong codes void the account's code: even the right one is refused until the profile shows a new one", async () => {
    const { client, user } = await loggedInClient(server);
    const info = await bindInfoOf(client);
    const code = info.command.split(" ")[2] as string;
    const attacker = newChat("攻击者");
    for (let i = 0; i < 5; i += 1) {
      const guess = String((Number(code) + 1 + i) % 10 ** 8).padStart(8, "0");
      expect(await ask(attacker, `/bind ${user.id} ${guess}`)).toContain("绑定码错误或已过期");
    }
    const owner = newChat();
    expect(await ask(owner, info.command)).toContain("绑定码错误或已过期");
    expect(await bindingOf(user.id)).toBeNull();
    const fresh = await bindInfoOf(client);
    expect(await ask(owner, fresh.command)).toContain("绑定成功");
  });

  test("one chat that keeps guessing is locked out for a while, whatever account it names", async () => {
    const chat = newChat("扫号");
    for (let i = 0; i < 10; i += 1) {
      expect(await ask(chat, `/bind ${i.toString(16).padStart(24, "a")} 12345678`)).toContain(
        "绑定码错误或已过期",
      );
    }
    const { client, user } = await loggedInClient(server);
    const info = await bindInfoOf(client);
    expect(await ask(chat, info.command)).toContain("尝试次数过多");
    expect(await bindingOf(user.id)).toBeNull();
  });

  test("one account per chat: a chat binding another account lets the first one go", async () => {
    const first = await boundCustomer();
    const second = await loggedInClient(server);
    const answer = await ask(first.chat, (await bindInfoOf(second.client)).command);
    expect(answer).toContain("之前绑定的账号已解除绑定");
    expect((await bindingOf(second.user.id))?.chat_id).toBe(first.chat.id);
    expect(await bindingOf(first.user.id)).toBeNull();
    expect((await bindInfoOf(first.client)).bound).toBe(false);
  });

  test("one chat per account: a bound account shows no code; to move it to a new phone it unbinds first", async () => {
    const { client, user, chat } = await boundCustomer();
    expect(await bindInfoOf(client)).toMatchObject({ bound: true, command: "", link: "" });
    expect((await client.call("/api/user/unbind")).code).toBe(0);
    const newPhone = newChat("新手机");
    expect(await ask(newPhone, (await bindInfoOf(client)).command)).toContain("绑定成功");
    expect((await bindingOf(user.id))?.chat_id).toBe(newPhone.id);
    expect(await ask(chat, "/traffic")).toContain("绑定账号");
  });

  test("group chats, bots and over-long texts get nothing; a bind command in a group binds nothing", async () => {
    const { client, user } = await loggedInClient(server);
    const info = await bindInfoOf(client);
    const chat = newChat();
    fake.groupSays(-100123, chat, info.command);
    fake.userSays(chat, `/help ${"x".repeat(300)}`);
    // Updates are handled in order: this answer comes after the two above were handled.
    expect(await ask(chat, "/help")).toContain("绑定账号");
    expect(fake.messagesTo(chat.id)).toHaveLength(1);
    expect(fake.messagesTo(-100123)).toHaveLength(0);
    expect(await bindingOf(user.id)).toBeNull();
  });

  test("agency accounts have no bind section (1003)", async () => {
    const { client, user } = await loggedInClient(server);
    await server.context.db.run("UPDATE users SET is_agency = 1 WHERE id = ?", user.id);
    const answer = await client.call("/api/user/bind_info");
    expect(answer.code).toBe(1003);
    expect(answer.msg).toBe("代理账号不能绑定 Telegram");
  });

  test("unbind: the binding is gone, the chat is told and can no longer act for the account; again is still ok", async () => {
    const { client, user, chat } = await boundCustomer();
    const before = fake.messagesTo(chat.id).length;
    const answer = await client.call("/api/user/unbind");
    expect(answer.code).toBe(0);
    expect(await bindingOf(user.id)).toBeNull();
    expect((await nextMessages(chat, before))[0]).toContain("已解除与网站账号的绑定");
    expect(await ask(chat, "/traffic")).toContain("绑定账号");
    expect((await client.call("/api/user/unbind")).code).toBe(0);
    expect(await bindInfoOf(client)).toMatchObject({ bound: false, chatName: "", bindTime: 0 });
  });

  test("unbind needs a session (1002)", async () => {
    const { ApiClient } = await import("../../../tests/harness.ts");
    expect((await new ApiClient(server.url).call("/api/user/unbind")).code).toBe(1002);
    expect((await new ApiClient(server.url).call("/api/user/bind_info")).code).toBe(1002);
  });
});

describe("commands", () => {
  test("an unbound chat is told how to bind", async () => {
    expect(await ask(newChat(), "/traffic")).toContain("个人信息");
  });

  test("/traffic tells the time package and the permanent traffic left", async () => {
    const { user, chat } = await boundCustomer();
    const now = Date.now();
    const db = server.context.db;
    await tx(
      db,
      async () =>
        await changeTraffic(db, {
          userId: user.id,
          type: "buy",
          desc: "test",
          traffic: 12 * GB,
          vipExpireTime: now + 10 * DAY_MS,
          dailyLimit: 50 * GB,
          now,
          timeZone: "Asia/Shanghai",
        }),
    );
    const answer = await ask(chat, "/traffic");
    expect(answer).toContain("永久流量：剩余 12.00 G");
    expect(answer).toContain("时间套餐：今日剩余 50.00 G，有效期至");
    expect(answer).not.toContain("限时流量");

    // 2 G of the 12 G become running trial traffic: told apart, never counted as permanent.
    await db.run(
      `INSERT INTO trial_grants (user_id, coupon_use_id, amount, remaining, expire_time, create_time)
       VALUES (?, 'test', ?, ?, ?, ?)`,
      user.id,
      2 * GB,
      2 * GB,
      now + DAY_MS,
      now,
    );
    const withTrial = await ask(chat, "/traffic");
    expect(withTrial).toContain("永久流量：剩余 10.00 G");
    expect(withTrial).toContain("限时流量：剩余 2.00 G，最早于");
  });

  test("/sub gives the subscription link on the configured site, and says so when no site is configured", async () => {
    const { user, chat } = await boundCustomer();
    const row = (await server.context.db.get<UserRow>(
      "SELECT * FROM users WHERE id = ?",
      user.id,
    )) as UserRow;
    const sub = await ask(chat, "/sub");
    expect(sub).toContain(`${server.url}/api/subscript/auto/${user.id}/${row.userkey}`);
    expect(sub).toContain("设备：已记录 0 台，不限设备数");
    // Devices used and allowed (issue 29).
    await setDeviceLimit(server.context, user.id, 3);
    const details = { platform: null, osVersion: null, model: null, userAgent: null, ip: "" };
    await admitDevice(server.context, user.id, "tg-phone", () => details);
    expect(await ask(chat, "/sub")).toContain("设备：已用 1 台，上限 3 台");
    // A Host header an attacker sends never makes the link: without a configured origin there is none.
    await server.context.settings.update({ site_url: "" });
    try {
      expect(await ask(chat, "/sub@ferry_test_bot")).toContain("站点地址尚未配置");
    } finally {
      await server.context.settings.update({ site_url: server.url });
    }
  });

  test("/notices lists the account's unread notices with links on the site", async () => {
    const { user, chat } = await boundCustomer();
    const { createNotice } = await import("../notice/service.ts");
    await createNotice(server.context, { userId: user.id, desc: "工单有新回复", href: "/#/feedback" });
    const answer = await ask(chat, "/notices");
    expect(answer).toContain("工单有新回复");
    expect(answer).toContain(`${server.url}/#/feedback`);
  });

  test("/unbind from the chat lets the account go", async () => {
    const { user, chat } = await boundCustomer();
    expect(await ask(chat, "/unbind")).toContain("已解除与网站账号的绑定");
    expect(await bindingOf(user.id)).toBeNull();
  });

  test("commands are matched whole, with or without the bot's name", () => {
    expect(parseCommand("/traffic@ferry_test_bot")).toEqual({ name: "traffic", args: [] });
    expect(parseCommand("  /BIND abc 123 ")).toEqual({ name: "bind", args: ["abc", "123"] });
    expect(parseCommand("traffic")).toBeNull();
    expect(parseCommand("/traffic/../x")).toBeNull();
  });
});

describe("messages", () => {
  test("a paid order reaches the buyer and every bound admin", async () => {
    const customer = await boundCustomer();
    const admin = await boundCustomer("admin");
    const customerBefore = fake.messagesTo(customer.chat.id).length;
    const adminBefore = fake.messagesTo(admin.chat.id).length;
    const combo = await makeCombo(server, { name: "月付 100G", price: 15, traffic: 100 });
    const order = await createOrder(customer.client, combo._id);
    await payWithSandbox(server, customer.client, order._id);
    const [toCustomer] = await nextMessages(customer.chat, customerBefore);
    expect(toCustomer).toContain("订单已支付：");
    expect(toCustomer).toContain("15.00 元");
    const toAdmin = await until("the admin's order message", () =>
      fake
        .messagesTo(admin.chat.id)
        .slice(adminBefore)
        .map((m) => m.text)
        .find((text) => text.includes(customer.email)),
    );
    expect(toAdmin).toContain("新订单已支付");
    expect(toAdmin).toContain("15.00 元");
    // Plain text: nothing is parsed as markup, link previews are off.
    const sent = fake.messagesTo(customer.chat.id).at(-1);
    expect(sent?.parse_mode).toBeUndefined();
    expect(sent?.link_preview_options).toEqual({ is_disabled: true });
  });

  test("a dedupe key makes a second queueing of the same event a no-op; an unbound account gets nothing", async () => {
    const { user, chat } = await boundCustomer();
    const before = fake.messagesTo(chat.id).length;
    const ctx = server.context;
    await tx(ctx.db, async () => {
      await queueUserMessage(ctx, user.id, "工单已回复 #1", "ticket-reply:t1");
      await queueUserMessage(ctx, user.id, "工单已回复 #1", "ticket-reply:t1");
      await queueAdminMessage(ctx, "管理员消息", "admin-once");
      await queueAdminMessage(ctx, "管理员消息", "admin-once");
    });
    const unbound = await loggedInClient(server);
    await queueUserMessage(ctx, unbound.user.id, "nobody hears this");
    expect(await nextMessages(chat, before)).toEqual(["工单已回复 #1"]);
    await ask(chat, "/help");
    expect(fake.messagesTo(chat.id).filter((m) => m.text === "工单已回复 #1")).toHaveLength(1);
    const queuedForNobody = await ctx.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM telegram_outbox WHERE text = ?",
      "nobody hears this",
    );
    expect(queuedForNobody?.n).toBe(0);
  });

  test("alerts: traffic below 10 %, used up, a time package ending within 3 days, a node turning 异常 — each told once", async () => {
    const { user, chat } = await boundCustomer();
    const admin = await boundCustomer("admin");
    const adminBefore = fake.messagesTo(admin.chat.id).length;
    const before = fake.messagesTo(chat.id).length;
    const ctx = server.context;
    const db = ctx.db;
    const now = Date.now();
    const change = async (traffic: number, type: "buy" | "prize_spend", vipExpireTime?: number) =>
      await tx(
        db,
        async () =>
          await changeTraffic(db, {
            userId: user.id,
            type,
            desc: "test",
            traffic,
            vipExpireTime,
            now,
            timeZone: "Asia/Shanghai",
          }),
      );
    await change(10 * GB, "buy", now + 2 * DAY_MS);
    await change(-9.5 * GB, "prize_spend");
    await db.run(
      `INSERT INTO agents (id, name, type, ip, ctrl_port, zz_port, port, public_port, server_type, ws_path, api_token,
         reality_private_key, reality_public_key, reality_short_id, hy2_obfs_password, ss_server_key, create_time, last_seen_time)
       VALUES ('aaaaaaaaaaaaaaaaaaaaaaaa', '东京 1', 'v2ray', '203.0.113.9', 1, 2, 3, 4, 'ubuntu_x86', '/', 'tok-tg', '', '', '', '', '', 1, ?)`,
      now - DAY_MS,
    );
    expect(await scanAlerts(ctx, now)).toBeGreaterThanOrEqual(3);
    const texts = await nextMessages(chat, before, 2);
    expect(texts.some((text) => text.includes("不到上次充值后 10.00 G 的 10%"))).toBe(true);
    expect(texts.some((text) => text.includes("时间套餐将于"))).toBe(true);
    await until("the node alert", () =>
      fake
        .messagesTo(admin.chat.id)
        .slice(adminBefore)
        .some((m) => m.text.includes("节点异常：东京 1")),
    );
    // The same states are not told again.
    expect(await scanAlerts(ctx, now + 1000)).toBe(0);
    // Used up: told once more.
    await change(-0.5 * GB, "prize_spend");
    expect(await scanAlerts(ctx, now + 2000)).toBe(1);
    expect((await nextMessages(chat, before, 3))[2]).toContain("永久流量已用完");
    expect(await scanAlerts(ctx, now + 3000)).toBe(0);
    // A new top-up starts a new round.
    await change(20 * GB, "buy");
    await change(-19 * GB, "prize_spend");
    expect(await scanAlerts(ctx, now + 4000)).toBe(1);
  });

  test("a chat that blocked the bot: the message is given up (403) and kept with the reason, not retried", async () => {
    const { user, chat } = await boundCustomer();
    fake.blocked.add(chat.id);
    await queueUserMessage(server.context, user.id, "你被拉黑了吗");
    const row = await until(
      "the failed row",
      async () =>
        (await server.context.db.get<{ status: string; attempts: number; last_error: string }>(
          "SELECT status, attempts, last_error FROM telegram_outbox WHERE text = ? AND status = 'failed'",
          "你被拉黑了吗",
        )) ?? undefined,
    );
    expect(row).toEqual({
      status: "failed",
      attempts: 1,
      last_error: "403: Forbidden: bot was blocked by the user",
    });
  });

  test("flood control (429): the message waits retry_after and then goes", async () => {
    const { user, chat } = await boundCustomer();
    const before = fake.messagesTo(chat.id).length;
    fake.floodNext(1);
    await queueUserMessage(server.context, user.id, "慢一点");
    expect(await nextMessages(chat, before)).toEqual(["慢一点"]);
    const row = await server.context.db.get<{ attempts: number; status: string }>(
      "SELECT attempts, status FROM telegram_outbox WHERE text = ?",
      "慢一点",
    );
    expect(row).toEqual({ attempts: 2, status: "sent" });
  });
});

describe("a failing or hanging Bot API", () => {
  test("while it answers 500 the panel works, paying an order included; the messages go out once it recovers", async () => {
    const customer = await boundCustomer();
    const before = fake.messagesTo(customer.chat.id).length;
    fake.mode = "error500";
    try {
      const info = await customer.client.call("/api/user/userinfo");
      expect(info.code).toBe(0);
      const combo = await makeCombo(server, { name: "故障时购买", price: 9, traffic: 10 });
      const order = await createOrder(customer.client, combo._id);
      await payWithSandbox(server, customer.client, order._id);
      const failed = await until(
        "a failed send attempt",
        async () =>
          (await server.context.db.get<{ last_error: string; status: string }>(
            "SELECT last_error, status FROM telegram_outbox WHERE text LIKE '订单已支付：故障时购买%' AND last_error <> ''",
          )) ?? undefined,
      );
      expect(failed).toMatchObject({ status: "pending", last_error: "500: Internal Server Error" });
      expect(fake.messagesTo(customer.chat.id)).toHaveLength(before);
    } finally {
      fake.mode = "normal";
    }
    const [message] = await nextMessages(customer.chat, before);
    expect(message).toContain("订单已支付：故障时购买");
  });

  test("while it hangs, calls answer even as the bot's request is held; the queued message arrives after", async () => {
    const customer = await boundCustomer();
    const before = fake.messagesTo(customer.chat.id).length;
    fake.mode = "hang";
    try {
      await queueUserMessage(server.context, customer.user.id, "卡住时排队的消息");
      await until("a request held by the hanging API", () => fake.held > 0);
      const info = await customer.client.call("/api/user/userinfo");
      expect(info.code).toBe(0);
      const combo = await makeCombo(server, { name: "卡住时购买", price: 5, traffic: 5 });
      const order = await createOrder(customer.client, combo._id);
      await payWithSandbox(server, customer.client, order._id);
      // These answers came while the bot was still waiting on the API.
      expect(fake.held).toBeGreaterThan(0);
      expect(fake.messagesTo(customer.chat.id)).toHaveLength(before);
      // The bot does not wait forever: its request times out and it tries again later.
      const sendsSoFar = fake.calls.filter((call) => call.method === "sendMessage").length;
      await until("a second try after the timeout", () =>
        fake.calls.filter((call) => call.method === "sendMessage").length > sendsSoFar ? true : undefined,
      );
      const waiting = await server.context.db.get<{ status: string; last_error: string }>(
        "SELECT status, last_error FROM telegram_outbox WHERE text = ?",
        "卡住时排队的消息",
      );
      expect(waiting).toEqual({ status: "pending", last_error: "网络: 请求超时" });
    } finally {
      fake.mode = "normal";
    }
    const texts = await nextMessages(customer.chat, before, 2);
    expect(texts).toContain("卡住时排队的消息");
    expect(texts.some((text) => text.includes("订单已支付：卡住时购买"))).toBe(true);
  });
});

describe("settings", () => {
  test("the token never leaves the server: the config page shows a mask", async () => {
    const { client } = await loggedInClient(server, { role: "admin" });
    const answer = await client.call<Record<string, unknown>>("/api/admin/config/get");
    expect(answer.code).toBe(0);
    expect(JSON.stringify(answer.data)).not.toContain(FAKE_BOT_TOKEN);
    expect(answer.data.telegram_bot_token).toBe("********");
    const bad = await client.call("/api/admin/config/set_config", { telegram_bot_token: "not a token" });
    expect(bad.code).toBe(1000);
    const badBase = await client.call("/api/admin/config/set_config", { telegram_api_base: "ftp://x" });
    expect(badBase.code).toBe(1000);
  });

  test("clearing the token stops the bot (messages wait); setting it again sends them without a restart", async () => {
    const { user, chat, client } = await boundCustomer();
    const before = fake.messagesTo(chat.id).length;
    await server.context.settings.update({ telegram_bot_token: "" });
    try {
      expect((await bindInfoOf(client)).enabled).toBe(false);
      await queueUserMessage(server.context, user.id, "令牌清空时排队");
      const sends = fake.calls.filter((call) => call.method === "sendMessage").length;
      // Ten sender rounds (20 ms each) in which a running sender would have sent it.
      await Bun.sleep(200);
      expect(fake.calls.filter((call) => call.method === "sendMessage").length).toBe(sends);
    } finally {
      await server.context.settings.update({ telegram_bot_token: FAKE_BOT_TOKEN });
    }
    expect(await nextMessages(chat, before)).toEqual(["令牌清空时排队"]);
  });

  test("webhook mode: setWebhook with a secret; updates posted with the secret are handled, others are 404", async () => {
    const chat = newChat();
    await server.context.settings.update({ telegram_webhook: true });
    try {
      const hook = await until("setWebhook", () => fake.webhook ?? undefined);
      const secrets = webhookSecrets(FAKE_BOT_TOKEN);
      expect(hook).toEqual({
        url: `${server.url}/api/telegram/webhook/${secrets.path}`,
        secret_token: secrets.header,
      });
      const post = (body: string, secret: string) =>
        fetch(hook.url, {
          method: "POST",
          headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
          body,
        });
      expect((await post(JSON.stringify(fake.webhookUpdate(chat, "/help")), "wrong")).status).toBe(404);
      expect(
        (await fetch(`${server.url}/api/telegram/webhook/nope`, { method: "POST", body: "{}" })).status,
      ).toBe(404);
      const before = fake.messagesTo(chat.id).length;
      const help = JSON.stringify(fake.webhookUpdate(chat, "/help"));
      expect((await post(help, secrets.header)).status).toBe(200);
      expect((await nextMessages(chat, before))[0]).toContain("绑定账号");
      // Telegram redelivering the same update does not get a second answer; the next update does.
      expect((await post(help, secrets.header)).status).toBe(200);
      expect((await post(JSON.stringify(fake.webhookUpdate(chat, "/traffic")), secrets.header)).status).toBe(
        200,
      );
      const [, next] = await nextMessages(chat, before, 2);
      expect(next).toContain("绑定账号");
      expect(fake.messagesTo(chat.id)).toHaveLength(before + 2);
    } finally {
      await server.context.settings.update({ telegram_webhook: false });
    }
    await until("deleteWebhook before polling again", () => fake.webhook === null);
  });
});
