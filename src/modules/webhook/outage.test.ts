/**
 * Issue 30 §3, "a receiver down for a minute gets every event once it is back", as it says: the
 * receiver's port is closed for a real 60 s while events happen, the deliveries keep failing and
 * being tried again (first retry after 2 s, doubling to 10 s: the default 30 s → 1 h scaled down,
 * and the default give-up of 24 h), then it comes back and gets each event id.
 * The sender does the same on both engines; this minute runs in the PostgreSQL pass only (the
 * engine of several replicas), which is the shorter one. webhook.test.ts has the faster version.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type FakeWebhookReceiver, startWebhookReceiver } from "../../../tests/fakes/webhook-receiver.ts";
import {
  ApiClient,
  startTestServer,
  startWithAdmin,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import type { Settings } from "../settings/schema.ts";
import { transformPassword } from "../user/password.ts";

const onPostgres = Boolean(process.env.FERRY_TEST_DATABASE_URL);
const SECRET = "whsec-outage-0123456789";
const DOWN_MS = 60_000;

let server: TestServer;
let admin: ApiClient;
let receiver: FakeWebhookReceiver;

beforeAll(async () => {
  if (!onPostgres) return;
  ({ server, admin } = await startWithAdmin(() =>
    startTestServer({ webhooks: { pollMs: 100, firstRetryMs: 2_000, maxRetryMs: 10_000 } }),
  ));
  receiver = startWebhookReceiver(SECRET);
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

test.skipIf(!onPostgres)(
  "a receiver down for a minute gets every event once it is back",
  async () => {
    await receiver.down();
    await admin.ok<Settings>("/api/admin/config/set_config", {
      webhooks: [{ url: receiver.url, secret: SECRET, events: ["user.registered"] }],
    });
    const downSince = Date.now();
    const emails: string[] = [];
    // Customers sign up all through the outage: the first and the last event of the minute.
    while (Date.now() - downSince < DOWN_MS) {
      const email = uniqueEmail("outage");
      await new ApiClient(server.url).ok("/api/user/signup", {
        email,
        password: transformPassword("correct-horse-1"),
      });
      emails.push(email);
      await Bun.sleep(10_000);
    }
    const failing = await server.context.db.get<{ n: number; tries: number }>(
      "SELECT COUNT(*) AS n, MAX(attempts) AS tries FROM webhook_deliveries WHERE delivered_time = 0",
    );
    expect(Number(failing?.n)).toBe(emails.length);
    expect(Number(failing?.tries)).toBeGreaterThanOrEqual(5);
    expect(receiver.received).toEqual([]);

    receiver.up();
    const ids = (
      await server.context.db.all<{ event_id: string }>("SELECT event_id FROM webhook_deliveries")
    ).map((row) => row.event_id);
    await receiver.waitFor((delivered) => ids.every((id) => delivered.some((d) => d.id === id)), 30_000);
    expect(receiver.delivered.every((d) => d.verified)).toBe(true);
    // At least once: a repeat would be allowed, a missing event not.
    expect([...new Set(receiver.delivered.map((d) => d.data.email))].sort()).toEqual([...emails].sort());
  },
  120_000,
);
