/**
 * /api/admin/users/* (issue 16 §1): the list with every column and its filters, one user, editing
 * the flags, admin adjustments (one ledger row and one audit row in one transaction; a refused one
 * writes nothing), disabling (sessions end at once, node lists and the subscription follow),
 * changing a password, and the roles that may not do any of it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  loggedInClient,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { makeChargingNode } from "../../../tests/traffic.ts";
import { tx } from "../../db/db.ts";
import { GB } from "../../lib/traffic.ts";
import { Code } from "../../rpc/codes.ts";
import { Notice } from "../../subscription/service.ts";
import { changeTraffic } from "../ledger/service.ts";
import { nodeUsers } from "../node-api/service.ts";
import type { TrafficRecord } from "../traffic/schema.ts";
import { addTrialGrant } from "../trial/service.ts";
import { listAdminUsers } from "./admin.ts";
import { type AdminUser, AdminUserMsg } from "./admin-schema.ts";
import { transformPassword } from "./password.ts";

let server: TestServer;
let admin: Awaited<ReturnType<typeof loggedInClient>>;
const db = () => server.context.db;

beforeAll(async () => {
  server = await startTestServer();
  admin = await loggedInClient(server, { role: "admin" });
});
afterAll(async () => {
  await server?.close();
});

const call = <T = AdminUser>(path: string, payload: unknown = {}) =>
  admin.client.call<T>(`/api/admin/users/${path}`, payload);

const ledgerCounts = async (userId: string) => ({
  traffic: (
    (await db().get("SELECT COUNT(*) AS n FROM traffic_records WHERE user_id = ?", userId)) as { n: number }
  ).n,
  wallet: (
    (await db().get("SELECT COUNT(*) AS n FROM wallet_entries WHERE user_id = ?", userId)) as { n: number }
  ).n,
  audit: (
    (await db().get("SELECT COUNT(*) AS n FROM admin_adjustments WHERE user_id = ?", userId)) as { n: number }
  ).n,
});

describe("userlist", () => {
  test("every §2.5 column, newest first, never the password hash or proxy secret", async () => {
    const owner = await loggedInClient(server);
    const customer = await loggedInClient(server);
    await db().run(
      "UPDATE users SET agency_id = ?, channel_code = 'ABC123', wallet_fen = 1234 WHERE id = ?",
      owner.user.id,
      customer.user.id,
    );
    const answer = await call<AdminUser[]>("userlist", {});
    expect(answer.code).toBe(0);
    const [first, second] = answer.data;
    expect(first?.email).toBe(customer.email);
    expect(second?.email).toBe(owner.email);
    expect(first).toMatchObject({
      _id: customer.user.id,
      disable: false,
      scale: 1,
      channel_code: "ABC123",
      paidUser: false,
      agency: owner.email,
      wallet_money: 12.34,
      traffic: 0,
      spendTraffic: 0,
      vipExpireTime: 0,
      userkey: customer.user.userkey,
      type: "normal",
      canChangeDescribeKey: true,
      canChangePassword: true,
      specialDailyUnlimitTraffic: false,
      dailyUnlimitTraffic: 0,
    });
    expect(second?.agency).toBe("");
    const text = JSON.stringify(answer.data);
    expect(text).not.toContain(customer.user.password_hash);
    expect(text).not.toContain(customer.user.proxy_secret);
  });

  test("filterStr matches e-mail, channel code or id, case-insensitively, with % and _ literal", async () => {
    const marked = await loggedInClient(server, { email: uniqueEmail("Findme_") });
    await db().run("UPDATE users SET channel_code = 'ZQ9XY1' WHERE id = ?", marked.user.id);
    const emails = async (filterStr: string) =>
      (await call<AdminUser[]>("userlist", { filterStr })).data.map((u) => u.email);
    expect(await emails("FINDME_")).toEqual([marked.email]);
    expect(await emails("zq9xy")).toEqual([marked.email]);
    expect(await emails(marked.user.id.slice(-10))).toEqual([marked.email]);
    expect(await emails("findme%")).toEqual([]);
    expect(await emails("f_ndme")).toEqual([]);
  });

  test("number caps the rows (default 100) and from / to bound the sign-up time", async () => {
    const old = await loggedInClient(server);
    await db().run("UPDATE users SET create_time = 1000 WHERE id = ?", old.user.id);
    expect((await call<AdminUser[]>("userlist", { number: 1 })).data).toHaveLength(1);
    const window = (await call<AdminUser[]>("userlist", { fromTimestamp: 500, toTimestamp: 1500 })).data;
    expect(window.map((u) => u.email)).toEqual([old.email]);
    const after = (await call<AdminUser[]>("userlist", { fromTimestamp: 1001 })).data;
    expect(after.map((u) => u.email)).not.toContain(old.email);
  });

  test("bad input gets 1000 with a message", async () => {
    for (const payload of [{ number: 0 }, { number: 1.5 }, { number: 100_000 }, { fromTimestamp: -1 }]) {
      const answer = await call("userlist", payload);
      expect(answer.code).toBe(Code.badInput);
      expect(answer.msg).not.toBe("");
    }
  });

  test("the service reads 100 rows by default", async () => {
    for (let i = 0; i < 3; i++) await loggedInClient(server);
    expect(await listAdminUsers(server.context, { number: 2 })).toHaveLength(2);
    expect((await listAdminUsers(server.context)).length).toBeLessThanOrEqual(100);
  });
});

describe("user and update_user", () => {
  test("user answers one user; an unknown id 1004, a malformed one 1000", async () => {
    const customer = await loggedInClient(server);
    expect((await call("user", { uid: customer.user.id })).data.email).toBe(customer.email);
    expect((await call("user", { uid: "0".repeat(24) })).code).toBe(Code.notFound);
    expect((await call("user", { uid: "nope" })).code).toBe(Code.badInput);
  });

  test("the flags, scale and daily unlimited amount are stored and shown", async () => {
    const customer = await loggedInClient(server);
    const answer = await call("update_user", {
      _id: customer.user.id,
      scale: 2.5,
      canChangeDescribeKey: false,
      canChangePassword: false,
      normalPermission: true,
      specialDailyUnlimitTraffic: true,
      dailyUnlimitTraffic: 20,
      forceReward: true,
    });
    expect(answer.code).toBe(0);
    expect((await call("user", { uid: customer.user.id })).data).toMatchObject({
      scale: 2.5,
      canChangeDescribeKey: false,
      canChangePassword: false,
      normalPermission: true,
      specialDailyUnlimitTraffic: true,
      dailyUnlimitTraffic: 20,
      forceReward: true,
      disable: false,
    });
    const row = (await db().get(
      "SELECT daily_unlimit_traffic FROM users WHERE id = ?",
      customer.user.id,
    )) as {
      daily_unlimit_traffic: number;
    };
    expect(row.daily_unlimit_traffic).toBe(20 * GB);
    // Fields not given are kept.
    await call("update_user", { _id: customer.user.id, forceReward: false });
    expect((await call("user", { uid: customer.user.id })).data).toMatchObject({
      scale: 2.5,
      forceReward: false,
    });
  });

  test("out-of-range fields are refused and change nothing", async () => {
    const customer = await loggedInClient(server);
    for (const fields of [{ scale: -1 }, { scale: 101 }, { dailyUnlimitTraffic: -1 }, { disable: "yes" }]) {
      const answer = await call("update_user", { _id: customer.user.id, forceReward: true, ...fields });
      expect(answer.code).toBe(Code.badInput);
    }
    expect((await call("update_user", { _id: "0".repeat(24), scale: 1 })).code).toBe(Code.notFound);
    expect((await call("user", { uid: customer.user.id })).data).toMatchObject({
      scale: 1,
      forceReward: false,
    });
  });
});

describe("adjustments", () => {
  test("+10 G with a reason: one admin_adjust record with the reason, one audit row; the customer sees 管理员调整", async () => {
    const customer = await loggedInClient(server);
    const before = await ledgerCounts(customer.user.id);
    const answer = await call("update_user", {
      _id: customer.user.id,
      adjust: { trafficG: 10, reason: "补偿故障" },
    });
    expect(answer.code).toBe(0);
    expect(answer.data.traffic).toBe(10 * GB);
    expect(await ledgerCounts(customer.user.id)).toEqual({
      ...before,
      traffic: before.traffic + 1,
      audit: 1,
    });
    const audit = await db().get(
      "SELECT admin_id, traffic_change, vip_change, wallet_change_fen, reason FROM admin_adjustments WHERE user_id = ?",
      customer.user.id,
    );
    expect(audit).toEqual({
      admin_id: admin.user.id,
      traffic_change: 10 * GB,
      vip_change: 0,
      wallet_change_fen: 0,
      reason: "补偿故障",
    });
    const records = await customer.client.call<TrafficRecord[]>("/api/traffic/my_traffic_records", {});
    const shown = records.data.find((r) => r.type === "admin_adjust");
    expect(shown).toMatchObject({ trafficChange: 10 * GB, allTraffic: 10 * GB });
    expect(shown?.desc).toContain("补偿故障");
  });

  test("days and wallet: the time package grows from now, the wallet gets an adjust entry", async () => {
    const customer = await loggedInClient(server);
    const answer = await call("update_user", {
      _id: customer.user.id,
      adjust: { days: 3, walletYuan: 5.5, reason: "活动奖励" },
    });
    expect(answer.code).toBe(0);
    expect(answer.data.wallet_money).toBe(5.5);
    expect(answer.data.vipExpireTime).toBeGreaterThan(Date.now() + 2 * 86_400_000);
    expect(await ledgerCounts(customer.user.id)).toEqual({ traffic: 1, wallet: 1, audit: 1 });
    const entry = await db().get(
      "SELECT type, change_fen FROM wallet_entries WHERE user_id = ?",
      customer.user.id,
    );
    expect(entry).toEqual({ type: "adjust", change_fen: 550 });
    // Taking the 3 days back again is allowed; a fourth day is not.
    expect(
      (await call("update_user", { _id: customer.user.id, adjust: { days: -4, reason: "x" } })).code,
    ).toBe(Code.badInput);
  });

  test("refused adjustments write nothing, not even the other fields of the same update", async () => {
    const customer = await loggedInClient(server);
    const before = await ledgerCounts(customer.user.id);
    const cases: [Record<string, unknown>, string][] = [
      [{ trafficG: -1, reason: "扣减" }, AdminUserMsg.trafficBelowZero],
      [{ walletYuan: -0.01, reason: "扣减" }, AdminUserMsg.walletBelowZero],
      [{ days: -1, reason: "扣减" }, AdminUserMsg.daysBelowZero],
      [{ trafficG: 10 }, AdminUserMsg.reasonRequired],
      [{ trafficG: 10, reason: "   " }, AdminUserMsg.reasonRequired],
      [{ days: 1.5, reason: "x" }, "天数须为整数"],
      [{ walletYuan: 0.001, reason: "x" }, "余额最多两位小数"],
    ];
    for (const [adjust, message] of cases) {
      const answer = await call("update_user", { _id: customer.user.id, scale: 3, adjust });
      expect(answer.code).toBe(Code.badInput);
      expect(answer.msg).toContain(message);
    }
    expect(await ledgerCounts(customer.user.id)).toEqual(before);
    expect((await call("user", { uid: customer.user.id })).data).toMatchObject({ scale: 1, traffic: 0 });
  });

  test("trial traffic is not taken: only permanent traffic may be deducted", async () => {
    const customer = await loggedInClient(server);
    const now = Date.now();
    await tx(db(), async () => {
      await changeTraffic(db(), {
        userId: customer.user.id,
        type: "coupon",
        desc: "体验券",
        traffic: 5 * GB,
        now,
        timeZone: "UTC",
      });
      await addTrialGrant(db(), {
        userId: customer.user.id,
        couponUseId: "trial",
        amount: 3 * GB,
        expireTime: now + 86_400_000,
        now,
      });
    });
    const tooMuch = await call("update_user", {
      _id: customer.user.id,
      adjust: { trafficG: -3, reason: "扣减" },
    });
    expect(tooMuch.code).toBe(Code.badInput);
    expect(tooMuch.msg).toContain(AdminUserMsg.trafficBelowZero);
    const allowed = await call("update_user", {
      _id: customer.user.id,
      adjust: { trafficG: -2, reason: "扣减" },
    });
    expect(allowed.data.traffic).toBe(3 * GB);
  });

  test("a refusal inside the transaction rolls back the field changes made before it", async () => {
    const customer = await loggedInClient(server);
    await db().run("UPDATE users SET force_reward = 0 WHERE id = ?", customer.user.id);
    const answer = await call("update_user", {
      _id: customer.user.id,
      forceReward: true,
      disable: true,
      adjust: { trafficG: -5, reason: "扣减" },
    });
    expect(answer.code).toBe(Code.badInput);
    expect((await call("user", { uid: customer.user.id })).data).toMatchObject({
      forceReward: false,
      disable: false,
    });
    // The session survives: the disabling was rolled back with the rest.
    expect((await customer.client.call("/api/user/userinfo")).code).toBe(0);
  });
});

describe("disabling", () => {
  test("the session answers 1002 at once, node lists drop them, the subscription is the notice; enabling lets them in again", async () => {
    const agentId = await makeChargingNode(server, "Asia/Shanghai");
    const customer = await loggedInClient(server);
    await call("update_user", { _id: customer.user.id, adjust: { trafficG: 10, reason: "测试" } });
    const listed = async () => (await nodeUsers(server.context, agentId)).map((u) => u.uuid);
    expect(await listed()).toContain(customer.user.proxy_secret);
    expect((await customer.client.call("/api/user/userinfo")).code).toBe(0);

    expect((await call("update_user", { _id: customer.user.id, disable: true })).data.disable).toBe(true);
    expect((await customer.client.call("/api/user/userinfo")).code).toBe(Code.notLoggedIn);
    expect(await listed()).not.toContain(customer.user.proxy_secret);
    const response = await fetch(
      `${server.url}/api/subscript/v2ray/${customer.user.id}/${customer.user.userkey}`,
    );
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.text(), "base64").toString()).toContain(
      encodeURIComponent(Notice.disabled).slice(0, 20),
    );
    expect((await customer.client.login(customer.email, customer.password)).code).toBe(Code.forbidden);

    await call("update_user", { _id: customer.user.id, disable: false });
    expect((await customer.client.login(customer.email, customer.password)).code).toBe(0);
    expect(await listed()).toContain(customer.user.proxy_secret);
  });

  test("an admin cannot disable their own account", async () => {
    const answer = await call("update_user", { _id: admin.user.id, disable: true });
    expect(answer.code).toBe(Code.badInput);
    expect((await call("user", { uid: admin.user.id })).code).toBe(0);
  });
});

describe("change_password", () => {
  test("sets the password and signs the account out; the old password stops working", async () => {
    const customer = await loggedInClient(server);
    const answer = await call("change_password", {
      email: customer.email.toUpperCase(),
      password: transformPassword("new-password-9"),
    });
    expect(answer.code).toBe(0);
    expect((await customer.client.call("/api/user/userinfo")).code).toBe(Code.notLoggedIn);
    const fresh = new ApiClient(server.url);
    expect((await fresh.login(customer.email, customer.password)).code).not.toBe(0);
    expect((await fresh.login(customer.email, "new-password-9")).code).toBe(0);
  });

  test("an unknown e-mail 1004, a plain (untransformed) password 1000", async () => {
    const missing = await call("change_password", {
      email: "nobody@example.com",
      password: transformPassword("whatever-1"),
    });
    expect(missing.code).toBe(Code.notFound);
    const plain = await call("change_password", { email: admin.email, password: "plain-password" });
    expect(plain.code).toBe(Code.badInput);
  });
});

describe("roles", () => {
  test("visitor 1002; normal, channel and yunying 1003; nothing changes", async () => {
    const victim = await loggedInClient(server);
    const calls: [string, unknown][] = [
      ["userlist", {}],
      ["user", { uid: victim.user.id }],
      ["update_user", { _id: victim.user.id, disable: true, adjust: { trafficG: 100, reason: "x" } }],
      ["change_password", { email: victim.email, password: transformPassword("hijacked-1") }],
    ];
    const visitor = new ApiClient(server.url);
    for (const [path, payload] of calls) {
      expect((await visitor.call(`/api/admin/users/${path}`, payload)).code).toBe(Code.notLoggedIn);
    }
    for (const role of ["normal", "channel", "yunying"] as const) {
      const who = await loggedInClient(server, { role });
      for (const [path, payload] of calls) {
        const answer = await who.client.call(`/api/admin/users/${path}`, payload);
        expect(answer.code).toBe(Code.forbidden);
        expect(answer.data).toBeNull();
      }
    }
    expect(await ledgerCounts(victim.user.id)).toEqual({ traffic: 0, wallet: 0, audit: 0 });
    expect((await victim.client.call("/api/user/userinfo")).code).toBe(0);
  });
});
