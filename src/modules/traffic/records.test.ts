/**
 * `/api/traffic/my_traffic_records` over real HTTP, with records made by real purchases (sandbox
 * gateway) and real charging (applyNodeReport): the fields in bytes, newest first, the type
 * filter, the 10-business-day window at its boundary, one user's records only, visitors refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, makeCombo, payWithSandbox, startShopServer } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, type TestServer } from "../../../tests/harness.ts";
import { chargeNode, makeChargingNode, noonOfDay, startOfBusinessDay } from "../../../tests/traffic.ts";
import { tx } from "../../db/db.ts";
import { addDays, businessDay } from "../../lib/time.ts";
import { GB, MB } from "../../lib/traffic.ts";
import type { Answer } from "../../rpc/envelope.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { UserRow } from "../user/row.ts";
import { findUserById } from "../user/service.ts";
import type { TrafficRecord } from "./schema.ts";
import { listTrafficRecords } from "./service.ts";

const ZONE = "Asia/Shanghai";
const PATH = "/api/traffic/my_traffic_records";

let server: TestServer;
let agentId = "";

beforeAll(async () => {
  server = await startShopServer();
  agentId = await makeChargingNode(server, ZONE);
});
afterAll(async () => {
  await server?.close();
});

const records = (client: ApiClient, payload: Record<string, unknown> = {}) =>
  client.call<TrafficRecord[]>(PATH, payload);

function ok<T>(answer: Answer<T>): T {
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data;
}

/** Buys a combo through the shop and the sandbox gateway. */
async function buy(client: ApiClient, fields: Record<string, unknown>) {
  const combo = await makeCombo(server, { price: 10, ...fields });
  const order = await createOrder(client, combo._id);
  await payWithSandbox(server, client, order._id);
}

const reload = async (user: UserRow) => (await findUserById(server.context, user.id)) as UserRow;

describe("my_traffic_records", () => {
  let customer: { client: ApiClient; user: UserRow };
  let other: { client: ApiClient; user: UserRow };
  const now = Date.now();
  const threeDaysAgo = noonOfDay(now, -3, ZONE);

  beforeAll(async () => {
    customer = await loggedInClient(server);
    other = await loggedInClient(server);
    // 10 G of permanent traffic and a 30-day time package with a 1 G daily quota.
    await buy(customer.client, { name: "10G 流量包", traffic: 10 * GB });
    await buy(customer.client, { name: "30 天时间套餐", vipDuration: 30, limit: GB });
    await buy(other.client, { name: "20G 流量包", traffic: 20 * GB });
    const uid = (await reload(customer.user)).node_uid;
    const otherUid = (await reload(other.user)).node_uid;
    // Twenty days ago (outside the window): 1 G, all from that day's quota.
    await chargeNode(server, agentId, { [uid]: [0, GB] }, noonOfDay(now, -20, ZONE));
    // Three days ago: 1.5 G (1 G from the quota, 0.5 G permanent), then 0.25 G more the same day.
    await chargeNode(server, agentId, { [uid]: [0, 1.5 * GB], [otherUid]: [0, 2 * GB] }, threeDaysAgo);
    await chargeNode(server, agentId, { [uid]: [MB, 0.25 * GB - MB] }, threeDaysAgo + 60_000);
  });

  test("the day's spend record and the purchases, newest first, in bytes and ms", async () => {
    const list = ok(await records(customer.client));
    expect(list.map((r) => [r.type, r.desc])).toEqual([
      ["buy", "购买 30 天时间套餐"],
      ["buy", "购买 10G 流量包"],
      ["spend", "节点流量"],
    ]);
    const spend = list[2] as TrafficRecord;
    // One record for the day, updated in place by the second report.
    expect(spend).toEqual({
      type: "spend",
      desc: "节点流量",
      trafficChange: -0.75 * GB,
      exemptionTraffic: GB,
      allTraffic: 9.25 * GB,
      allSpend: 2.75 * GB,
      updateTime: threeDaysAgo + 60_000,
      day: businessDay(threeDaysAgo, ZONE),
    });
    const [timePack, trafficPack] = list as [TrafficRecord, TrafficRecord];
    expect(trafficPack).toMatchObject({ trafficChange: 10 * GB, exemptionTraffic: 0, allTraffic: 10 * GB });
    expect(timePack).toMatchObject({ trafficChange: 0, allTraffic: 10 * GB });
    expect(timePack.updateTime).toBeGreaterThanOrEqual(trafficPack.updateTime);
    // The balance the records end on is the user's.
    expect((await reload(customer.user)).traffic).toBe(spend.allTraffic);
  });

  test("filters by type; absent and all mean every type", async () => {
    const spend = ok(await records(customer.client, { type: "spend" }));
    expect(spend.map((r) => r.type)).toEqual(["spend"]);
    const buys = ok(await records(customer.client, { type: "buy" }));
    expect(buys.map((r) => r.desc)).toEqual(["购买 30 天时间套餐", "购买 10G 流量包"]);
    expect(ok(await records(customer.client, { type: "push_receive" }))).toEqual([]);
    const all = ok(await records(customer.client, { type: "all" }));
    expect(all).toEqual(ok(await records(customer.client)));
    expect(all).toHaveLength(3);
  });

  test("an unknown type is refused with 1000", async () => {
    const answer = await records(customer.client, { type: "refund" });
    expect(answer.code).toBe(1000);
    expect(answer.msg).toContain("流量记录类型错误");
  });

  test("another user's records never appear", async () => {
    const mine = ok(await records(other.client));
    expect(mine.map((r) => [r.type, r.desc, r.trafficChange])).toEqual([
      ["buy", "购买 20G 流量包", 20 * GB],
      ["spend", "节点流量", -2 * GB],
    ]);
    const theirs = ok(await records(customer.client, { type: "spend" }));
    expect(theirs.map((r) => r.trafficChange)).toEqual([-0.75 * GB]);
  });

  test("visitors get 1002", async () => {
    const answer = await records(new ApiClient(server.url));
    expect(answer.code).toBe(1002);
  });
});

describe("the 10-business-day window", () => {
  const TODAY = "2026-11-21";
  const startOf = (day: string) => startOfBusinessDay(day, ZONE);
  let user: UserRow;

  beforeAll(async () => {
    user = (await loggedInClient(server)).user;
    const db = server.context.db;
    await tx(
      db,
      async () =>
        await changeTraffic(db, {
          userId: user.id,
          type: "coupon",
          desc: "兑换券",
          traffic: 100 * GB,
          now: startOf(addDays(TODAY, -30)),
          timeZone: ZONE,
        }),
    );
    const uid = (await reload(user)).node_uid;
    // The last millisecond of the 11th day back, and the first of the 10th (today counts).
    await chargeNode(server, agentId, { [uid]: [0, GB] }, startOf(addDays(TODAY, -9)) - 1);
    await chargeNode(server, agentId, { [uid]: [0, 2 * GB] }, startOf(addDays(TODAY, -9)));
    await chargeNode(server, agentId, { [uid]: [0, 3 * GB] }, startOf(TODAY) + 1000);
  });

  const days = async (now: number, type?: "spend") =>
    (await listTrafficRecords(server.context, user.id, { now, type })).map((r) => r.day);

  test("covers today and the nine business days before it", async () => {
    expect(await days(startOf(addDays(TODAY, 1)) - 1)).toEqual([TODAY, "2026-11-12"]);
    expect(await days(startOf(TODAY))).toEqual([TODAY, "2026-11-12"]);
  });

  test("a day drops out when the next business day starts in the setting's timezone", async () => {
    expect(await days(startOf(addDays(TODAY, 1)))).toEqual([TODAY]);
    // In UTC the same instant is still 2026-11-21 (16:00), but the window follows `timezone`.
    expect(businessDay(startOf(addDays(TODAY, 1)), "UTC")).toBe(TODAY);
  });

  test("the window is as long as asked (the CLI's --days)", async () => {
    const now = startOf(TODAY);
    const longer = await listTrafficRecords(server.context, user.id, { now, days: 11, type: "spend" });
    expect(longer.map((r) => [r.day, r.trafficChange])).toEqual([
      [TODAY, -3 * GB],
      ["2026-11-12", -2 * GB],
      ["2026-11-11", -GB],
    ]);
    expect((await listTrafficRecords(server.context, user.id, { now, days: 1 })).map((r) => r.day)).toEqual([
      TODAY,
    ]);
  });
});
