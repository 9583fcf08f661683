/**
 * `ferry traffic show`, run as a real process against the data directory of a running server
 * whose customer bought packages and was charged for node traffic: the balances and records it
 * prints are the ones the customer's dashboard and 流量记录 page get.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { formatInstant } from "../src/lib/time.ts";
import { GB } from "../src/lib/traffic.ts";
import type { TrafficRecord } from "../src/modules/traffic/schema.ts";
import type { TrafficBalance } from "../src/modules/traffic/service.ts";
import type { UserRow } from "../src/modules/user/row.ts";
import type { UserInfo } from "../src/modules/user/schema.ts";
import { findUserById } from "../src/modules/user/service.ts";
import { createOrder, makeCombo, payWithSandbox, startShopServer } from "../tests/commerce.ts";
import { type ApiClient, loggedInClient, type TestServer } from "../tests/harness.ts";
import { chargeNode, makeChargingNode, noonOfDay, noonZone } from "../tests/traffic.ts";
import { expectHelp, expectRefused, type FerryIn, startWithCli } from "./test-helpers.ts";

interface TrafficReport {
  balance: TrafficBalance;
  days: number;
  type: string;
  records: TrafficRecord[];
}

let server: TestServer;
let cli: FerryIn;
let client: ApiClient;
let user: UserRow;
let email = "";
const zone = noonZone();

async function buy(fields: Record<string, unknown>) {
  const combo = await makeCombo(server, { price: 10, ...fields });
  await payWithSandbox(server, client, (await createOrder(client, combo._id))._id);
}

beforeAll(async () => {
  ({ server, cli } = await startWithCli(startShopServer));
  const agentId = await makeChargingNode(server, zone);
  ({ client, user, email } = await loggedInClient(server));
  await buy({ name: "10G 流量包", traffic: 10 * GB });
  await buy({ name: "30 天时间套餐", vipDuration: 30, limit: 2 * GB });
  const uid = ((await findUserById(server.context, user.id)) as UserRow).node_uid;
  const now = Date.now();
  // Two days ago 3 G: 2 G from that day's quota, 1 G permanent. Today 0.5 G from today's quota.
  await chargeNode(server, agentId, { [uid]: [0, 3 * GB] }, noonOfDay(now, -2, zone));
  await chargeNode(server, agentId, { [uid]: [0, 0.5 * GB] }, now);
});
afterAll(async () => {
  await server?.close();
});

test("traffic show has --help", async () => {
  await expectHelp([
    [[], ["traffic"]],
    [["traffic"], ["show"]],
    [
      ["traffic", "show"],
      ["<email>", "--days", "--type", "--data", "--json"],
    ],
  ]);
});

describe("traffic show", () => {
  test("--json gives the dashboard's balances and the 流量记录 page's records", async () => {
    const report = await cli.json<TrafficReport>(["traffic", "show", email]);
    const info = (await client.call<UserInfo>("/api/user/userinfo")).data;
    expect(report.balance).toEqual({
      email,
      traffic: info.traffic,
      spendTraffic: info.spendTraffic,
      vipExpireTime: info.vipExpireTime,
      dailyTimePackageUsage: info.dailyTimePackageUsage,
      limit: info.limit,
    });
    expect(report.balance).toMatchObject({
      traffic: 9 * GB,
      spendTraffic: 3.5 * GB,
      dailyTimePackageUsage: 0.5 * GB,
      limit: 2 * GB,
    });
    const page = (await client.call<TrafficRecord[]>("/api/traffic/my_traffic_records")).data;
    expect(report).toMatchObject({ days: 10, type: "all", records: page });
    expect(page.map((r) => [r.type, r.trafficChange, r.exemptionTraffic])).toEqual([
      ["spend", 0, 0.5 * GB],
      ["buy", 0, 0],
      ["buy", 10 * GB, 0],
      ["spend", -GB, 2 * GB],
    ]);
  });

  test("prints the balances and one line per record", async () => {
    const text = await cli.ok(["traffic", "show", email]);
    const { vipExpireTime } = (await client.call<UserInfo>("/api/user/userinfo")).data;
    const lines = text.trim().split("\n");
    expect(lines[0]).toBe(email);
    expect(lines[1]).toBe("permanent traffic  9.00 G left, 3.50 G spent in all");
    // In the business timezone with its offset, as every time the CLI prints.
    const until = formatInstant(vipExpireTime, await server.context.settings.get("timezone"));
    expect(lines[2]).toBe(`time package       until ${until}, today 0.50 / 2.00 G used`);
    expect(lines[3]).toBe("records of the last 10 days (all):");
    expect(lines.slice(4).map((line) => line.split("  ").slice(1, 7))).toEqual([
      ["spend", "流量消耗", "change 0.00 G", "package 0.50 G", "left 9.00 G", "spent 3.50 G"],
      ["buy", "购买套餐", "change 0.00 G", "package 0.00 G", "left 10.00 G", "spent 0.00 G"],
      ["buy", "购买套餐", "change +10.00 G", "package 0.00 G", "left 10.00 G", "spent 0.00 G"],
      ["spend", "流量消耗", "change -1.00 G", "package 2.00 G", "left 9.00 G", "spent 3.00 G"],
    ]);
    expect(lines[4]).toEndWith("节点流量");
    expect(lines[5]).toEndWith("购买 30 天时间套餐");
  });

  test("--type and --days narrow the records", async () => {
    const buys = await cli.json<TrafficReport>(["traffic", "show", email, "--type", "buy"]);
    expect(buys.type).toBe("buy");
    expect(buys.records.map((r) => r.desc)).toEqual(["购买 30 天时间套餐", "购买 10G 流量包"]);
    const today = await cli.json<TrafficReport>(["traffic", "show", email, "--days", "1", "--type", "spend"]);
    expect(today.records.map((r) => r.exemptionTraffic)).toEqual([0.5 * GB]);
    const threeDays = await cli.json<TrafficReport>([
      "traffic",
      "show",
      email,
      "--days",
      "3",
      "--type",
      "spend",
    ]);
    expect(threeDays.records.map((r) => r.exemptionTraffic)).toEqual([0.5 * GB, 2 * GB]);
    const none = await cli.ok(["traffic", "show", email, "--type", "push_spend"]);
    expect(none.trim().split("\n").slice(3)).toEqual([
      "records of the last 10 days (push_spend):",
      "no records",
    ]);
  });

  test("a user without a time package shows none", async () => {
    const fresh = await loggedInClient(server);
    const text = await cli.ok(["traffic", "show", fresh.email]);
    expect(text.trim().split("\n")).toEqual([
      fresh.email,
      "permanent traffic  0.00 G left, 0.00 G spent in all",
      "time package       none",
      "records of the last 10 days (all):",
      "no records",
    ]);
  });

  test("refuses an unknown user, an unknown type and a bad day count", async () => {
    await expectRefused([
      [cli.withData(["traffic", "show", "nobody@example.com"]), /no user with e-mail nobody@example.com/],
      [cli.withData(["traffic", "show", email, "--type", "refund"]), /--type: 流量记录类型错误/],
      [cli.withData(["traffic", "show", email, "--days", "0"]), /--days must be a whole number/],
      [cli.withData(["traffic", "show", email, "--days", "2.5"]), /--days must be a whole number/],
      [cli.withData(["traffic", "show", email, "--days", "ten"]), /--days must be a number/],
    ]);
  });
});
