/**
 * Issue 28: the bot runs under the `telegram-bot` lease. When another replica takes the lease, the
 * bot stops at once, its long poll (30 s here) aborted rather than waited out; while the other
 * holds it this replica sends nothing; when the lease comes back the bot starts again and sends.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  FAKE_BOT_TOKEN,
  FAST_BOT_TIMINGS,
  type FakeTelegram,
  startFakeTelegram,
} from "../../../tests/fakes/telegram.ts";
import { startTestServer, type TestServer } from "../../../tests/harness.ts";
import { runsJob } from "../../cluster/leases.ts";

let fake: FakeTelegram;
let server: TestServer;

beforeAll(async () => {
  fake = startFakeTelegram();
  server = await startTestServer({
    telegram: { ...FAST_BOT_TIMINGS, pollTimeoutSeconds: 30 },
    leases: { ttlMs: 2_000, renewMs: 100, tryMs: 100, marginMs: 500 },
  });
  await server.context.settings.update({ telegram_api_base: fake.url, telegram_bot_token: FAKE_BOT_TOKEN });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const polls = () => fake.calls.filter((call) => call.method === "getUpdates").length;

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

test("a lost lease aborts the bot's long poll at once; the lease back, it polls and sends again", async () => {
  // The chat writes first (Telegram sends only to chats that did); the bot answers it.
  fake.userSays({ id: 4242, first_name: "租约" }, "hello");
  await until(() => fake.messagesTo(4242).length === 1);
  // The poll after the one that brought "hello" is waiting (up to 30 s) when the lease goes.
  await until(() => polls() >= 2);
  const db = server.context.db;
  const taken = performance.now();
  await db.run(
    "UPDATE leases SET holder = 'another-replica', expire_time = ? WHERE job = 'telegram-bot'",
    Date.now() + 600_000,
  );
  await until(() => !runsJob(server.context, "telegram-bot"));
  // Queued while the other replica holds the bot: this one does not send it.
  await db.run(
    `INSERT INTO telegram_outbox (id, chat_id, text, status, attempts, next_try_time, create_time, dedupe_key, last_error)
       VALUES ('lease-test-1', 4242, '租约测试', 'pending', 0, 0, ?, 'lease-test-1', '')`,
    Date.now(),
  );
  const pollsWhileAway = polls();
  await Bun.sleep(300);
  expect(fake.messagesTo(4242)).toHaveLength(1);
  expect(polls()).toBe(pollsWhileAway);

  // Given back: the new bot starts only once the old one has stopped, which waited for no 30 s poll.
  await db.run("DELETE FROM leases WHERE job = 'telegram-bot'");
  await until(() => runsJob(server.context, "telegram-bot"));
  await until(() => polls() > pollsWhileAway);
  expect(performance.now() - taken).toBeLessThan(10_000);
  await until(() => fake.messagesTo(4242).length === 2);
  expect(fake.messagesTo(4242)[1]?.text).toBe("租约测试");
});
