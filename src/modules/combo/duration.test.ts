/**
 * A combo's `duration` (seed 001 §3 Combo; issue 26 item 24) over real HTTP: the days the traffic it
 * sells stays usable after payment. Stored and edited by 商品管理's call, shown in the shop, fixed on
 * the order when it is made, and read when the order is paid: the traffic is credited with its expiry,
 * is spent after today's quota and before permanent traffic, cannot be transferred, and what is left
 * at the expiry goes with a buy_expire record naming the order. 0 (the default) is permanent traffic,
 * as seed 000 sells traffic packages.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, payWithSandbox, startShopServer } from "../../../tests/commerce.ts";
import { ApiClient, loggedInClient, type TestServer } from "../../../tests/harness.ts";
import { chargeNode, makeChargingNode, trafficLedgerSum } from "../../../tests/traffic.ts";
import { DAY_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { Code } from "../../rpc/codes.ts";
import { expireDueTrials, trialExpiringText, warnExpiringTrials } from "../trial/service.ts";
import type { UserInfo } from "../user/schema.ts";
import type { Combo } from "./schema.ts";

let server: TestServer;
let admin: ApiClient;
let agentId: string;

beforeAll(async () => {
  server = await startShopServer();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  agentId = await makeChargingNode(server, "Asia/Shanghai");
  await server.context.settings.update({ minPushNum: 2 });
});
afterAll(async () => {
  await server?.close();
});

const db = () => server.context.db;

async function saveCombo(fields: Record<string, unknown>): Promise<Combo> {
  const answer = await admin.call<Combo>("/api/admin/combo/update_combo", {
    price: 10,
    vipDuration: 0,
    ...fields,
  });
  expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 0, msg: "ok" });
  return answer.data;
}

async function shopCombo(id: string): Promise<Combo | undefined> {
  return (await new ApiClient(server.url).call<Combo[]>("/api/shop/list")).data.find((c) => c._id === id);
}

/** A paid customer who bought `combo` through the sandbox gateway; the order's id. */
async function buyer(combo: Combo) {
  const account = await loggedInClient(server);
  const order = await createOrder(account.client, combo._id);
  await payWithSandbox(server, account.client, order._id);
  return { ...account, order };
}

const userInfo = async (client: ApiClient) => (await client.call<UserInfo>("/api/user/userinfo")).data;
const records = async (userId: string, type: string) =>
  await db().all<{ traffic_change: number; desc: string; order_id: string | null }>(
    'SELECT traffic_change, "desc", order_id FROM traffic_records WHERE user_id = ? AND type = ? ORDER BY id',
    userId,
    type,
  );

describe("the field", () => {
  test("stored, listed and edited through update_combo; 0 when not given; whole days only", async () => {
    const pack = await saveCombo({ name: "30天有效 10G", traffic: 10 * GB, duration: 30 });
    expect(pack.duration).toBe(30);
    expect((await shopCombo(pack._id))?.duration).toBe(30);
    const edited = await saveCombo({ ...pack, duration: 7 });
    expect(edited).toEqual({ ...pack, duration: 7 });
    expect((await admin.call<Combo[]>("/api/admin/combo/list")).data).toContainEqual(edited);
    expect((await saveCombo({ name: "永久 10G", traffic: 10 * GB })).duration).toBe(0);
    for (const [duration, message] of [
      [-1, "流量有效期不能为负"],
      [1.5, "流量有效期须为整数天"],
    ] as const) {
      const answer = await admin.call("/api/admin/combo/update_combo", {
        name: "坏",
        price: 1,
        traffic: GB,
        vipDuration: 0,
        duration,
      });
      expect({ code: answer.code, msg: answer.msg }).toEqual({
        code: Code.badInput,
        msg: `参数错误 duration: ${message}`,
      });
    }
  });
});

describe("a bought package with a duration", () => {
  test("its traffic expires: shown running, spent before permanent traffic, not transferable, the rest removed when due", async () => {
    const pack = await saveCombo({ name: "月抛 10G", traffic: 10 * GB, additionPersend: 20, duration: 30 });
    const before = Date.now();
    const { client, user, order } = await buyer(pack);
    const after = Date.now();
    const bought = 12 * GB; // 10 G + 20 %
    // The order keeps the duration it was sold with, whatever the combo says later.
    await saveCombo({ ...pack, duration: 0 });
    const grant = await db().get<{
      amount: number;
      remaining: number;
      expire_time: number;
      order_id: string;
    }>("SELECT amount, remaining, expire_time, order_id FROM trial_grants WHERE user_id = ?", user.id);
    expect(grant).toMatchObject({ amount: bought, remaining: bought, order_id: order._id });
    expect(grant?.expire_time).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(grant?.expire_time).toBeLessThanOrEqual(after + 30 * DAY_MS);
    const info = await userInfo(client);
    expect(info).toMatchObject({
      traffic: bought,
      trialTraffic: bought,
      trialExpireTime: grant?.expire_time,
    });

    // None of it is permanent: a transfer of 5 G out of the 12 G is refused.
    const push = await client.call("/api/push/create", { pushNumber: 5 });
    expect(push.code).toBe(Code.pushNotEnoughTraffic);

    // Permanent traffic from another purchase stays untouched while the package pays for use.
    const permanent = await saveCombo({ name: "永久 5G", traffic: 5 * GB });
    const second = await createOrder(client, permanent._id);
    await payWithSandbox(server, client, second._id);
    await chargeNode(server, agentId, { [user.node_uid]: [0, 2 * GB] }, Date.now());
    expect(await db().get("SELECT remaining FROM trial_grants WHERE user_id = ?", user.id)).toEqual({
      remaining: 10 * GB,
    });

    // A day before the end the customer is told; at the end the 10 G left go, the 5 G stay.
    const expiry = grant?.expire_time as number;
    expect(await warnExpiringTrials(server.context, expiry - DAY_MS + 1000)).toBe(1);
    const notices = (await client.call<{ desc: string }[]>("/api/user_notive/list")).data;
    expect(notices.map((n) => n.desc)).toEqual([
      trialExpiringText(10 * GB, expiry, await server.context.settings.get("timezone"), true),
    ]);
    expect(notices[0]?.desc).toStartWith("您购买的流量包还有 10.00 G 将于 ");
    expect(await expireDueTrials(server.context, expiry)).toBe(1);
    expect(await records(user.id, "buy_expire")).toEqual([
      { traffic_change: -10 * GB, desc: "流量包到期", order_id: order._id },
    ]);
    const end = await userInfo(client);
    expect(end).toMatchObject({ traffic: 5 * GB, trialTraffic: 0 });
    expect(await trafficLedgerSum(server, user.id)).toBe(5 * GB);
    const shown = await client.call<{ type: string; desc: string }[]>("/api/traffic/my_traffic_records", {});
    expect(shown.data.some((r) => r.type === "buy_expire" && r.desc === "流量包到期")).toBe(true);
  });

  test("without a duration the traffic is permanent, as before", async () => {
    const pack = await saveCombo({ name: "永久 8G", traffic: 8 * GB });
    const { client, user, order } = await buyer(pack);
    const row = "SELECT traffic_days FROM orders WHERE id = ?";
    expect(await db().get<{ traffic_days: number }>(row, order._id)).toEqual({ traffic_days: 0 });
    expect(await userInfo(client)).toMatchObject({ traffic: 8 * GB, trialTraffic: 0 });
    expect(await db().get("SELECT COUNT(*) AS n FROM trial_grants WHERE user_id = ?", user.id)).toEqual({
      n: 0,
    });
  });

  test("a time pack with a duration: the days run as bought, only its traffic expires", async () => {
    const pack = await saveCombo({ name: "七天+3G", traffic: 3 * GB, vipDuration: 7, duration: 14 });
    const { client, user } = await buyer(pack);
    const info = await userInfo(client);
    expect(info.trialTraffic).toBe(3 * GB);
    expect(info.vipExpireTime).toBeGreaterThan(Date.now() + 6 * DAY_MS);
    const grant = (await db().get<{ expire_time: number }>(
      "SELECT expire_time FROM trial_grants WHERE user_id = ?",
      user.id,
    )) as { expire_time: number };
    expect(grant.expire_time).toBeGreaterThan(info.vipExpireTime);
  });
});
