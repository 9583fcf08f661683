/**
 * Agencies (issue 16 §5): an admin makes a user an agency owner and attaches customers; the owner
 * allocates its own permanent traffic (never trial traffic) to its customers, agency_spend on the
 * owner and agency_allocate on the customer in one transaction.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  loggedInClient,
  startTestServer,
  startWithAdmin,
  type TestServer,
} from "../../../tests/harness.ts";
import { tx } from "../../db/db.ts";
import { GB } from "../../lib/traffic.ts";
import { changeTraffic } from "../ledger/service.ts";
import type { TrafficRecordType } from "../traffic/schema.ts";
import { addTrialGrant } from "../trial/service.ts";
import type { Role, UserInfo } from "../user/schema.ts";
import { type Agency, type AgencyCustomers, ALLOCATIONS_PER_HOUR, type AllocateResult } from "./schema.ts";

let server: TestServer;
let admin: ApiClient;

// Real rate limits (the per-owner allocation limit is tested here).
beforeAll(
  async () => ({ server, admin } = await startWithAdmin(() => startTestServer({ rateLimitScale: 1 }))),
);
afterAll(() => server?.close());
// Allocations share the transfer minimum (default 20 G); most tests here move a few G.
beforeAll(async () => await server.context.settings.update({ minPushNum: 1 }));
afterEach(async () => await server.context.settings.update({ minPushNum: 1 }));

const db = () => server.context.db;

async function giveTraffic(userId: string, bytes: number, trial = false) {
  const now = Date.now();
  await tx(db(), async () => {
    await changeTraffic(db(), {
      userId,
      type: "buy",
      desc: "测试",
      traffic: bytes,
      now,
      timeZone: "Asia/Shanghai",
    });
    if (trial)
      await addTrialGrant(db(), {
        userId,
        couponUseId: "t",
        amount: bytes,
        expireTime: now + 86_400_000,
        now,
      });
  });
}

const userRow = async (id: string) =>
  await db().get<{ traffic: number; is_agency: number; agency_id: string | null }>(
    "SELECT traffic, is_agency, agency_id FROM users JOIN balances ON user_id = id WHERE id = ?",
    id,
  );

const records = async (userId: string, type: TrafficRecordType) =>
  await db().all<{ traffic_change: number; all_traffic: number }>(
    "SELECT traffic_change, all_traffic FROM traffic_records WHERE user_id = ? AND type = ? ORDER BY id",
    userId,
    type,
  );

/** `client.ok(path, payload)`: the data of a call that must succeed. */
const ok = <T>(client: ApiClient, path: string, payload: unknown = {}) => client.ok<T>(path, payload);

/** An agency owner with `trafficG` of permanent traffic and one attached customer, both logged in. */
async function agencyWithCustomer(trafficG = 10) {
  const owner = await loggedInClient(server);
  const customer = await loggedInClient(server);
  await ok<Agency>(admin, "/api/admin/agency/set", { email: owner.email, name: "华东代理" });
  await ok<Agency>(admin, "/api/admin/agency/attach", {
    agency_email: owner.email,
    customer_email: customer.email,
  });
  if (trafficG > 0) await giveTraffic(owner.user.id, trafficG * GB);
  return { owner, customer };
}

describe("roles", () => {
  const adminCalls: [string, unknown][] = [
    ["/api/admin/agency/list", {}],
    ["/api/admin/agency/set", { email: "a@example.com", name: "x" }],
    ["/api/admin/agency/unset", { email: "a@example.com" }],
    ["/api/admin/agency/attach", { agency_email: "a@example.com", customer_email: "b@example.com" }],
    ["/api/admin/agency/detach", { agency_email: "a@example.com", customer_email: "b@example.com" }],
  ];

  test("the admin calls refuse visitors (1002) and normal, channel and yunying users (1003)", async () => {
    expect((await admin.call("/api/admin/agency/list")).code).toBe(0);
    const visitor = new ApiClient(server.url);
    for (const [path, payload] of adminCalls) {
      expect({ path, code: (await visitor.call(path, payload)).code }).toEqual({ path, code: 1002 });
    }
    for (const role of ["normal", "channel", "yunying"] as Role[]) {
      const { client } = await loggedInClient(server, { role });
      for (const [path, payload] of adminCalls) {
        expect({ path, role, code: (await client.call(path, payload)).code }).toEqual({
          path,
          role,
          code: 1003,
        });
      }
    }
  });

  test("the owner's calls refuse visitors (1002)", async () => {
    const visitor = new ApiClient(server.url);
    expect((await visitor.call("/api/agency/customers")).code).toBe(1002);
    expect((await visitor.call("/api/agency/allocate", { email: "x@example.com", trafficG: 1 })).code).toBe(
      1002,
    );
  });
});

describe("admin: set, attach, detach, unset", () => {
  test("set makes an owner (userinfo agencyOwner), set again renames, list shows it", async () => {
    const owner = await loggedInClient(server);
    expect((await ok<UserInfo>(owner.client, "/api/user/userinfo")).agencyOwner).toBe(false);
    const made = await ok<Agency>(admin, "/api/admin/agency/set", { email: owner.email, name: "甲" });
    expect(made).toMatchObject({ ownerId: owner.user.id, email: owner.email, name: "甲", customerCount: 0 });
    expect((await ok<UserInfo>(owner.client, "/api/user/userinfo")).agencyOwner).toBe(true);
    const renamed = await ok<Agency>(admin, "/api/admin/agency/set", { email: owner.email, name: "乙" });
    expect(renamed.name).toBe("乙");
    const list = await ok<Agency[]>(admin, "/api/admin/agency/list");
    expect(list.filter((a) => a.email === owner.email).map((a) => a.name)).toEqual(["乙"]);
  });

  test("set refuses an unknown e-mail (1004), an empty one (1000) and an agency's customer (1003)", async () => {
    const unknown = await admin.call("/api/admin/agency/set", { email: "nobody@example.com", name: "" });
    expect({ code: unknown.code, msg: unknown.msg }).toEqual({
      code: 1004,
      msg: "用户不存在: nobody@example.com",
    });
    expect((await admin.call("/api/admin/agency/set", { email: " ", name: "" })).code).toBe(1000);
    const { customer } = await agencyWithCustomer(0);
    const refused = await admin.call("/api/admin/agency/set", { email: customer.email, name: "" });
    expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1003, msg: "代理客户不能成为代理" });
    expect(await ok<Agency[]>(admin, "/api/admin/agency/list")).not.toContainEqual(
      expect.objectContaining({ email: customer.email }),
    );
  });

  test("attach gives the customer the agency menu (is_agency_user) and its agency_id", async () => {
    const { owner, customer } = await agencyWithCustomer(0);
    expect(await userRow(customer.user.id)).toMatchObject({ is_agency: 1, agency_id: owner.user.id });
    expect((await ok<UserInfo>(customer.client, "/api/user/userinfo")).is_agency_user).toBe(true);
    // attaching again is a no-op
    const again = await ok<Agency>(admin, "/api/admin/agency/attach", {
      agency_email: owner.email,
      customer_email: customer.email,
    });
    expect(again.customerCount).toBe(1);
  });

  test("attach refuses: no such agency, no such customer, itself, an owner, a non-normal user, another agency's customer", async () => {
    const { owner, customer } = await agencyWithCustomer(0);
    const other = await agencyWithCustomer(0);
    const plain = await loggedInClient(server);
    const yunying = await loggedInClient(server, { role: "yunying" });
    const cases: [unknown, number, string][] = [
      [{ agency_email: plain.email, customer_email: customer.email }, 1004, `该用户不是代理: ${plain.email}`],
      [
        { agency_email: owner.email, customer_email: "nobody@example.com" },
        1004,
        "用户不存在: nobody@example.com",
      ],
      [{ agency_email: owner.email, customer_email: owner.email }, 1000, "代理不能成为自己的客户"],
      [{ agency_email: owner.email, customer_email: other.owner.email }, 1003, "代理不能成为其他代理的客户"],
      [{ agency_email: owner.email, customer_email: yunying.email }, 1003, "只有普通用户可以成为代理客户"],
      [
        { agency_email: owner.email, customer_email: other.customer.email },
        1003,
        "该用户已是其他代理的客户，请先解除",
      ],
    ];
    for (const [payload, code, msg] of cases) {
      const answer = await admin.call("/api/admin/agency/attach", payload);
      expect({ code: answer.code, msg: answer.msg }).toEqual({ code, msg });
    }
    expect((await userRow(other.customer.user.id))?.agency_id).toBe(other.owner.user.id);
    expect(await userRow(yunying.user.id)).toMatchObject({ is_agency: 0, agency_id: null });
  });

  test("detach clears the menu and agency_id; the allocated traffic stays with the customer", async () => {
    const { owner, customer } = await agencyWithCustomer(5);
    await ok(owner.client, "/api/agency/allocate", { email: customer.email, trafficG: 2 });
    const payload = { agency_email: owner.email, customer_email: customer.email };
    expect((await ok<Agency>(admin, "/api/admin/agency/detach", payload)).customerCount).toBe(0);
    expect(await userRow(customer.user.id)).toEqual({ traffic: 2 * GB, is_agency: 0, agency_id: null });
    expect((await ok<UserInfo>(customer.client, "/api/user/userinfo")).is_agency_user).toBe(false);
    const again = await admin.call("/api/admin/agency/detach", payload);
    expect({ code: again.code, msg: again.msg }).toEqual({ code: 1004, msg: "该用户不是此代理的客户" });
    // and the former owner can no longer allocate to it
    const refused = await owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 1 });
    expect(refused.code).toBe(1004);
  });

  test("unset ends the agency and detaches its customers; unknown agency is 1004", async () => {
    const { owner, customer } = await agencyWithCustomer(0);
    expect(await ok(admin, "/api/admin/agency/unset", { email: owner.email })).toEqual({ detached: 1 });
    expect(await userRow(customer.user.id)).toMatchObject({ is_agency: 0, agency_id: null });
    expect((await ok<UserInfo>(owner.client, "/api/user/userinfo")).agencyOwner).toBe(false);
    const again = await admin.call("/api/admin/agency/unset", { email: owner.email });
    expect({ code: again.code, msg: again.msg }).toEqual({
      code: 1004,
      msg: `该用户不是代理: ${owner.email}`,
    });
  });
});

describe("the owner allocates its permanent traffic", () => {
  test("by e-mail or id: agency_spend on the owner, agency_allocate on the customer, balances after", async () => {
    const { owner, customer } = await agencyWithCustomer(10);
    const byEmail = await ok<AllocateResult>(owner.client, "/api/agency/allocate", {
      email: customer.email,
      trafficG: 3,
    });
    expect(byEmail).toEqual({
      customerEmail: customer.email,
      allocated: 3 * GB,
      ownerTraffic: 7 * GB,
      customerTraffic: 3 * GB,
    });
    await ok(owner.client, "/api/agency/allocate", { customer_id: customer.user.id, trafficG: 1.5 });
    expect(await records(owner.user.id, "agency_spend")).toEqual([
      { traffic_change: -3 * GB, all_traffic: 7 * GB },
      { traffic_change: -1.5 * GB, all_traffic: 5.5 * GB },
    ]);
    expect(await records(customer.user.id, "agency_allocate")).toEqual([
      { traffic_change: 3 * GB, all_traffic: 3 * GB },
      { traffic_change: 1.5 * GB, all_traffic: 4.5 * GB },
    ]);
    // the customer sees the record in its own traffic records
    const mine = await ok<{ type: string }[]>(customer.client, "/api/traffic/my_traffic_records", {
      type: "agency_allocate",
    });
    expect(mine.length).toBe(2);
    const list = await ok<AgencyCustomers>(owner.client, "/api/agency/customers");
    expect(list).toEqual({
      name: "华东代理",
      available: 5.5 * GB,
      minAllocateG: 1,
      customers: [
        {
          _id: customer.user.id,
          email: customer.email,
          traffic: 4.5 * GB,
          spendTraffic: 0,
          vipExpireTime: 0,
          allocated: 4.5 * GB,
        },
      ],
    });
  });

  test("a user who owns no agency is refused (1003) for both calls; nothing moves", async () => {
    const { customer } = await agencyWithCustomer(0);
    const stranger = await loggedInClient(server);
    await giveTraffic(stranger.user.id, 5 * GB);
    const answer = await stranger.client.call("/api/agency/allocate", { email: customer.email, trafficG: 1 });
    expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 1003, msg: "您不是代理，不能分配流量" });
    expect((await stranger.client.call("/api/agency/customers")).code).toBe(1003);
    // an agency's customer is no owner either
    expect(
      (await customer.client.call("/api/agency/allocate", { email: customer.email, trafficG: 1 })).code,
    ).toBe(1003);
    expect((await userRow(stranger.user.id))?.traffic).toBe(5 * GB);
    expect((await userRow(customer.user.id))?.traffic).toBe(0);
  });

  test("an owner cannot allocate to a customer not theirs, nor to an unknown one (1004); nothing moves", async () => {
    const { owner } = await agencyWithCustomer(10);
    const other = await agencyWithCustomer(0);
    const plain = await loggedInClient(server);
    for (const payload of [
      { email: other.customer.email, trafficG: 1 },
      { customer_id: other.customer.user.id, trafficG: 1 },
      { email: plain.email, trafficG: 1 },
      { email: "nobody@example.com", trafficG: 1 },
      { email: owner.email, trafficG: 1 },
    ]) {
      const answer = await owner.client.call("/api/agency/allocate", payload);
      expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 1004, msg: "该用户不是您的代理客户" });
    }
    expect((await userRow(owner.user.id))?.traffic).toBe(10 * GB);
    expect((await userRow(other.customer.user.id))?.traffic).toBe(0);
    expect(await records(owner.user.id, "agency_spend")).toEqual([]);
  });

  test("not more than the permanent traffic, and never trial traffic (1038); nothing moves", async () => {
    const { owner, customer } = await agencyWithCustomer(2);
    await giveTraffic(owner.user.id, 5 * GB, true); // trial: in balances.traffic, not allocatable
    const answer = await owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 3 });
    expect({ code: answer.code, msg: answer.msg }).toEqual({
      code: 1038,
      msg: "可分配的永久流量不足（当前 2G，体验流量不可分配）",
    });
    expect((await userRow(owner.user.id))?.traffic).toBe(7 * GB);
    expect((await userRow(customer.user.id))?.traffic).toBe(0);
    expect((await ok<AgencyCustomers>(owner.client, "/api/agency/customers")).available).toBe(2 * GB);
    await ok(owner.client, "/api/agency/allocate", { email: customer.email, trafficG: 2 });
    expect((await userRow(owner.user.id))?.traffic).toBe(5 * GB);
  });

  test("bad amounts and a missing customer are 1000", async () => {
    const { owner, customer } = await agencyWithCustomer(10);
    for (const payload of [
      { email: customer.email, trafficG: 0 },
      { email: customer.email, trafficG: -1 },
      { email: customer.email, trafficG: "1" },
      { email: customer.email, trafficG: 100_001 },
      { email: customer.email },
      { trafficG: 1 },
    ]) {
      expect({ payload, code: (await owner.client.call("/api/agency/allocate", payload)).code }).toEqual({
        payload,
        code: 1000,
      });
    }
    expect((await userRow(owner.user.id))?.traffic).toBe(10 * GB);
  });

  test("10 simultaneous allocations of 1 G by an owner with 3 G allocate exactly 3", async () => {
    const { owner, customer } = await agencyWithCustomer(3);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 1 }),
      ),
    );
    expect(answers.filter((a) => a.code === 0).length).toBe(3);
    expect(answers.filter((a) => a.code === 1038).length).toBe(7);
    expect((await userRow(owner.user.id))?.traffic).toBe(0);
    expect((await userRow(customer.user.id))?.traffic).toBe(3 * GB);
    expect((await records(owner.user.id, "agency_spend")).length).toBe(3);
    expect((await records(customer.user.id, "agency_allocate")).length).toBe(3);
  });

  test("below the transfer minimum is 1037 and writes nothing: 200 calls of 1e-10 G leave no ledger row", async () => {
    const { owner, customer } = await agencyWithCustomer(50);
    await server.context.settings.update({ minPushNum: 20 });
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 1e-10 }),
      ),
    );
    expect(new Set(answers.map((a) => `${a.code} ${a.msg}`))).toEqual(new Set(["1037 最低分配20G"]));
    for (const trafficG of [19.99, 1, 0.4]) {
      const answer = await owner.client.call("/api/agency/allocate", { email: customer.email, trafficG });
      expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 1037, msg: "最低分配20G" });
    }
    expect(await records(owner.user.id, "agency_spend")).toEqual([]);
    expect(await records(customer.user.id, "agency_allocate")).toEqual([]);
    // The owner's page states the minimum; the minimum itself is allowed.
    expect((await ok<AgencyCustomers>(owner.client, "/api/agency/customers")).minAllocateG).toBe(20);
    await ok(owner.client, "/api/agency/allocate", { email: customer.email, trafficG: 20 });
    expect((await userRow(customer.user.id))?.traffic).toBe(20 * GB);
    // One setting for both: lowered, transfers and allocations follow.
    await server.context.settings.update({ minPushNum: 5 });
    const low = await owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 4 });
    expect({ code: low.code, msg: low.msg }).toEqual({ code: 1037, msg: "最低分配5G" });
    expect((await owner.client.call("/api/push/create", { pushNumber: 4 })).msg).toBe("最低转赠5G");
  });

  test(`1005 after ${ALLOCATIONS_PER_HOUR} allocations in an hour by one owner; refusals do not count, other owners are not limited`, async () => {
    const { owner, customer } = await agencyWithCustomer(ALLOCATIONS_PER_HOUR + 10);
    // refused attempts first: they cost nothing
    for (let i = 0; i < 5; i += 1) {
      expect(
        (await owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 1e6 })).code,
      ).toBe(1000);
      expect(
        (await owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 99_999 })).code,
      ).toBe(1038);
    }
    for (let i = 0; i < ALLOCATIONS_PER_HOUR; i += 1) {
      await ok(owner.client, "/api/agency/allocate", { email: customer.email, trafficG: 1 });
    }
    const refused = await owner.client.call("/api/agency/allocate", { email: customer.email, trafficG: 1 });
    expect({ code: refused.code, msg: refused.msg }).toEqual({ code: 1005, msg: "分配过于频繁，请稍后再试" });
    expect((await records(customer.user.id, "agency_allocate")).length).toBe(ALLOCATIONS_PER_HOUR);
    expect((await userRow(owner.user.id))?.traffic).toBe(10 * GB);
    const other = await agencyWithCustomer(2);
    await ok(other.owner.client, "/api/agency/allocate", { email: other.customer.email, trafficG: 1 });
  });
});
