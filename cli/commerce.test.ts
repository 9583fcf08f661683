/**
 * `ferry combo list|create` and `ferry order list|mark-paid`, run as real processes against a data
 * directory while a real server uses it, checked through the customer API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GB } from "../src/lib/traffic.ts";
import type { Combo } from "../src/modules/combo/schema.ts";
import type { Order, Trade } from "../src/modules/order/schema.ts";
import type { UserInfo } from "../src/modules/user/schema.ts";
import { newId } from "../src/rpc/ids.ts";
import { createOrder, giveWallet, paymentEvents, startShopServer } from "../tests/commerce.ts";
import { type ApiClient, loggedInClient, type TestServer } from "../tests/harness.ts";
import { expectHelp, expectRefused, type FerryIn, ferry, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli(startShopServer)));
afterAll(() => server?.close());

const withData = (args: string[]) => cli.withData(args);
const ferryJson = <T>(args: string[]) => cli.json<T>(args);

async function userInfo(client: ApiClient): Promise<UserInfo> {
  return (await client.call<UserInfo>("/api/user/userinfo")).data;
}

test("every commerce command has --help", async () => {
  const commands: [string[], string[]][] = [
    [[], ["combo", "order"]],
    [["combo"], ["list", "create"]],
    [
      ["combo", "list"],
      ["--data", "--json"],
    ],
    [
      ["combo", "create"],
      [
        "--name",
        "--price",
        "--traffic-g",
        "--days",
        "--bonus",
        "--permission",
        "--permission-days",
        "--json",
      ],
    ],
    [["order"], ["list", "mark-paid"]],
    [
      ["order", "list"],
      ["--user", "--status", "--limit", "--data", "--json"],
    ],
    [
      ["order", "mark-paid"],
      ["<orderId>", "--reason", "--data", "--json"],
    ],
  ];
  await expectHelp(commands);
});

describe("combo", () => {
  test("create adds combos the shop shows and list prints them", async () => {
    const permission = newId();
    await server.context.db.run(
      "INSERT INTO permissions (id, name, \"desc\", create_time) VALUES (?, 'netflix', '奈飞', ?)",
      permission,
      Date.now(),
    );

    const traffic = await ferryJson<Combo>([
      "combo",
      "create",
      "--name",
      "100G 流量包",
      "--price",
      "15",
      "--traffic-g",
      "100",
      "--bonus",
      "20",
    ]);
    expect(traffic).toMatchObject({
      name: "100G 流量包",
      price: 15,
      traffic: 100 * GB,
      vipDuration: 0,
      duration: 0,
      additionPersend: 20,
    });
    // The seed's duration: the traffic lasts 30 days after payment.
    const expiring = await ferryJson<Combo>([
      "combo",
      "create",
      "--name",
      "30天流量包",
      "--price",
      "9",
      "--traffic-g",
      "10",
      "--traffic-days",
      "30",
    ]);
    expect(expiring).toMatchObject({ traffic: 10 * GB, vipDuration: 0, duration: 30 });
    const month = await ferryJson<Combo>([
      "combo",
      "create",
      "--name",
      "月卡",
      "--price",
      "25.5",
      "--days",
      "30",
      "--limit-g",
      "80",
      "--permission",
      "netflix",
      "--permission-days",
      "30",
      "--speed",
      "150Mbps",
    ]);
    expect(month).toMatchObject({
      price: 25.5,
      vipDuration: 30,
      limit: 80 * GB,
      permissionsGain: [permission],
      permissionDuration: 30,
      speed: "150Mbps",
    });

    const listed = await ferryJson<Combo[]>(["combo", "list"]);
    expect(listed.map((c) => c._id)).toEqual(expect.arrayContaining([traffic._id, month._id]));
    const text = await ferry(withData(["combo", "list"]));
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("100G 流量包");
    expect(text.stdout).toContain("¥25.50");
    expect(text.stdout).toContain("100.00 G");
    expect(text.stdout).toContain("30天流量包  ¥9.00  10.00 G  traffic lasts 30 days");

    // The running server's shop shows them at once.
    const { client } = await loggedInClient(server);
    const shop = await client.call<Combo[]>("/api/shop/list");
    expect(shop.data.find((c) => c._id === traffic._id)).toEqual(traffic);
    expect(shop.data.find((c) => c._id === month._id)).toEqual(month);
    expect(shop.data.find((c) => c._id === expiring._id)).toEqual(expiring);
  });

  test("bad input: one-line errors and nothing created", async () => {
    const before = (await ferryJson<Combo[]>(["combo", "list"])).length;
    const bad: [string[], RegExp][] = [
      [["combo", "create", "--price", "15", "--traffic-g", "1"], /--name/],
      [["combo", "create", "--name", "x", "--traffic-g", "1"], /--price/],
      [["combo", "create", "--name", "x", "--price", "abc", "--traffic-g", "1"], /--price/],
      [["combo", "create", "--name", "x", "--price", "-1", "--traffic-g", "1"], /price/],
      [["combo", "create", "--name", "x", "--price", "1.005", "--traffic-g", "1"], /两位小数/],
      [["combo", "create", "--name", "x", "--price", "1", "--traffic-g", "-5"], /traffic/],
      [["combo", "create", "--name", "x", "--price", "1", "--days", "1.5"], /vipDuration/],
      [
        ["combo", "create", "--name", "x", "--price", "1", "--traffic-g", "1", "--traffic-days", "-1"],
        /流量有效期不能为负/,
      ],
      [["combo", "create", "--name", "x", "--price", "1"], /sells nothing/],
      [
        ["combo", "create", "--name", "x", "--price", "1", "--permission", "nope", "--permission-days", "3"],
        /nope/,
      ],
      [["combo", "create", "--name", "x", "--price", "1", "--permission", "netflix"], /--permission-days/],
      [["combo", "create", "--name", "  ", "--price", "1", "--traffic-g", "1"], /名称不能为空/],
    ];
    await expectRefused(bad.map(([args, mentions]) => [withData(args), mentions]));
    expect((await ferryJson<Combo[]>(["combo", "list"])).length).toBe(before);
  });
});

describe("order", () => {
  test("list filters by account and status; mark-paid credits once through the crediting function", async () => {
    const combo = await ferryJson<Combo>([
      "combo",
      "create",
      "--name",
      "10G",
      "--price",
      "9.9",
      "--traffic-g",
      "10",
    ]);
    const alice = await loggedInClient(server);
    const bob = await loggedInClient(server);
    // A second look at the same combo hands back the open order (issue 26), so Alice cancels her
    // first order before she makes the second.
    const aliceCancelled = await createOrder(alice.client, combo._id);
    await alice.client.call("/api/order/cancel_order", { order_id: aliceCancelled._id });
    const aliceOpen = await createOrder(alice.client, combo._id);
    const bobOrder = await createOrder(bob.client, combo._id);
    await giveWallet(server, bob.user.id, 400);
    await bob.client.call("/api/shop/wallet_check", { order_id: bobOrder._id });

    const aliceOrders = await ferryJson<Trade[]>(["order", "list", "--user", alice.email.toUpperCase()]);
    expect(aliceOrders.map((t) => [t.order_id, t.status]).sort()).toEqual(
      [
        [aliceOpen._id, "topay"],
        [aliceCancelled._id, "cancled"],
      ].sort(),
    );
    expect(aliceOrders.every((t) => t.username === alice.email)).toBe(true);
    const cancelled = await ferryJson<Trade[]>([
      "order",
      "list",
      "--user",
      alice.email,
      "--status",
      "cancled",
    ]);
    expect(cancelled.map((t) => t.order_id)).toEqual([aliceCancelled._id]);
    const deducted = await ferryJson<Trade[]>(["order", "list", "--status", "wallet_spend"]);
    expect(deducted.map((t) => t.order_id)).toEqual([bobOrder._id]);
    expect(deducted[0]?.request_pay_amound).toBe(5.9);
    const text = await ferry(withData(["order", "list", "--user", bob.email]));
    expect(text.stdout).toContain(bobOrder._id);
    expect(text.stdout).toContain("wallet_spend");
    expect(text.stdout).not.toContain(aliceOpen._id);
    expect((await ferryJson<Trade[]>(["order", "list", "--limit", "1"])).length).toBe(1);

    // Bob paid the remaining 5.90 by bank transfer.
    const paid = await ferryJson<Order>(["order", "mark-paid", bobOrder._id, "--reason", "bank transfer 42"]);
    expect(paid).toMatchObject({ _id: bobOrder._id, status: "paied", wallet_spend: 4, pay_money: 5.9 });
    const info = await userInfo(bob.client);
    expect({ traffic: info.traffic, paidUser: info.paidUser }).toEqual({ traffic: 10 * GB, paidUser: true });
    const trade = await server.context.db.get<{
      trade_no: string;
      provider: string;
      amount_fen: number;
      status: string;
    }>("SELECT trade_no, provider, amount_fen, status FROM payments WHERE order_id = ?", bobOrder._id);
    expect(trade).toMatchObject({ provider: "manual", amount_fen: 590, status: "paid" });
    expect(await paymentEvents(server, trade?.trade_no as string)).toEqual([
      {
        provider: "manual",
        trade_no: trade?.trade_no as string,
        result: "credited",
        reason: "manual: bank transfer 42",
      },
    ]);
    const status = await bob.client.call<{ status: string }>("/api/shop/trade_status", {
      trade_id: bobOrder._id,
    });
    expect(status.data.status).toBe("paied");

    // Text output names the order; a paid or cancelled order is refused, and nothing is credited twice.
    const aliceRun = await ferry(withData(["order", "mark-paid", aliceOpen._id, "--reason", "cash"]));
    expect(aliceRun.code).toBe(0);
    expect(aliceRun.stdout).toContain(aliceOpen._id);
    expect((await userInfo(alice.client)).traffic).toBe(10 * GB);

    const refused: [string[], RegExp][] = [
      [["order", "mark-paid", bobOrder._id, "--reason", "again"], /paied/],
      [["order", "mark-paid", aliceCancelled._id, "--reason", "late"], /cancled/],
      [["order", "mark-paid", bobOrder._id], /--reason/],
      [["order", "mark-paid", aliceOpen._id, "--reason", "   "], /--reason/],
      [["order", "mark-paid", newId(), "--reason", "x"], /no order/],
      [["order", "mark-paid", "12345", "--reason", "x"], /not an order id/],
      [["order", "mark-paid", "--reason", "x"], /orderId/],
      [["order", "list", "--status", "paid"], /--status/],
      [["order", "list", "--user", "nobody@example.com"], /nobody@example\.com/],
      [["order", "list", "--limit", "0"], /--limit/],
    ];
    await expectRefused(refused.map(([args, mentions]) => [withData(args), mentions]));
    expect((await userInfo(bob.client)).traffic).toBe(10 * GB);
    expect((await userInfo(alice.client)).traffic).toBe(10 * GB);
    const manualEvents = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM payment_events WHERE provider = 'manual'",
    );
    expect(manualEvents?.n).toBe(2);
  });
});
