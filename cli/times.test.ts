/**
 * Issue 26 §23: the CLI prints every time in the business timezone (setting `timezone`, as the web
 * shows it) with its offset, "2026-11-27 20:15:03 +08:00", never UTC without saying so; `--json`
 * keeps the instants as the API answers them (epoch milliseconds, docs/decisions.md).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Trade } from "../src/modules/order/schema.ts";
import type { AdminUser } from "../src/modules/user/admin-schema.ts";
import type { Charge } from "../src/modules/wallet/schema.ts";
import { createOrder, giveWallet, makeCombo, startShopServer } from "../tests/commerce.ts";
import { loggedInClient, type TestServer, uniqueEmail } from "../tests/harness.ts";
import { type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;
let email: string;
let orderId: string;

/** 2026-11-27 12:15:03 UTC: 20:15:03 in Shanghai, 07:15:03 in New York. */
const SIGNED_UP = Date.UTC(2026, 10, 27, 12, 15, 3);
/** 2026-11-28 01:02:03 UTC: the next day in Shanghai, still the 27th in New York. */
const ACTIVE = Date.UTC(2026, 10, 28, 1, 2, 3);

beforeAll(async () => {
  ({ server, cli } = await startWithCli(startShopServer));
  email = uniqueEmail("clitime");
  const customer = await loggedInClient(server, { email, role: "channel" });
  const combo = await makeCombo(server, { name: "时区套餐", price: 12, traffic: 1 });
  orderId = (await createOrder(customer.client, combo._id))._id;
  await giveWallet(server, customer.user.id, 60_000);
  await customer.client.call("/api/wallet/change_reward_adress", {
    addressType: "USDT-TRC20",
    address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
  });
  expect((await customer.client.call("/api/wallet/make_charge")).code).toBe(0);
  const db = server.context.db;
  await db.run(
    "UPDATE users SET create_time = ?, last_active_time = ? WHERE id = ?",
    SIGNED_UP,
    ACTIVE,
    customer.user.id,
  );
  await db.run("UPDATE orders SET create_time = ? WHERE id = ?", SIGNED_UP, orderId);
  await db.run("UPDATE withdrawals SET request_time = ? WHERE user_id = ?", ACTIVE, customer.user.id);
});
afterAll(() => server?.close());

/** What user show, user list, order list and withdraw list print, together. */
async function printed(): Promise<string> {
  const runs = await Promise.all([
    cli.ok(["user", "show", email]),
    cli.ok(["user", "list", "--filter", "clitime"]),
    cli.ok(["order", "list", "--user", email]),
    cli.ok(["withdraw", "list"]),
  ]);
  return runs.join("\n");
}

test("user show, user list, order list and withdraw list print the business timezone with its offset", async () => {
  await server.context.settings.update({ timezone: "Asia/Shanghai" });
  const shanghai = await printed();
  expect(shanghai).toContain(`created: 2026-11-27 20:15:03 +08:00   last active: 2026-11-28 09:02:03 +08:00`);
  expect(shanghai).toContain(`${email}  active  x1`);
  expect(shanghai.split("\n").find((line) => line.startsWith(`${orderId}  `))).toContain(
    "2026-11-27 20:15:03 +08:00",
  );
  expect(
    shanghai.split("\n").find((line) => line.includes(`yuan  2026-11-28 09:02:03 +08:00  ${email}`)),
  ).toBeDefined();

  await server.context.settings.update({ timezone: "America/New_York" });
  const newYork = await printed();
  expect(newYork).toContain(`created: 2026-11-27 07:15:03 -05:00   last active: 2026-11-27 20:02:03 -05:00`);
  expect(newYork.split("\n").find((line) => line.startsWith(`${orderId}  `))).toContain(
    "2026-11-27 07:15:03 -05:00",
  );
  expect(newYork).toContain(`yuan  2026-11-27 20:02:03 -05:00  ${email}`);

  // No time is printed in UTC without its offset any more (ISO's "T…Z").
  for (const text of [shanghai, newYork]) expect(text).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);

  // migrate status too: when each migration was applied, with New York's offset of the day.
  const migrations = (await cli.ok(["migrate", "status"])).trim().split("\n");
  for (const line of migrations)
    expect(line).toMatch(/ {2}applied \d{4}-\d\d-\d\d \d\d:\d\d:\d\d -0[45]:00$/);
});

test("--json keeps the instants as the API answers them: epoch milliseconds", async () => {
  const [user] = await cli.json<AdminUser[]>(["user", "list", "--filter", "clitime"]);
  expect(user).toMatchObject({ createTime: SIGNED_UP, lastActiveTime: ACTIVE });
  const [order] = await cli.json<Trade[]>(["order", "list", "--user", email]);
  expect(order).toMatchObject({ order_id: orderId, create_time: SIGNED_UP });
  const charges = await cli.json<Charge[]>(["withdraw", "list"]);
  expect(charges.find((charge) => charge.email === email)?.requestTime).toBe(ACTIVE);
});
