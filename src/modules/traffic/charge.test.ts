/**
 * The charging rule at its boundaries (DESIGN §7, issue 5): scales, upload scale, minimum charge,
 * quota exactly used up, quota crossing into permanent traffic, expiry during a report, the daily
 * reset, and applyNodeReport's writes (balances, ledger, usage_days, heat, report ids). Issue 11:
 * only users the node was given are charged (with the grace after a list change), the others are
 * kept as bounded anomalies, and sums saturate instead of leaving the integers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setUserColumns, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import {
  chargeAtFaceValue,
  customerWithPackage,
  pullUserListOf,
  trafficLedgerSum,
} from "../../../tests/traffic.ts";
import { businessDay, endOfBusinessDay } from "../../lib/time.ts";
import { DEFAULT_DAILY_LIMIT, GB, MB } from "../../lib/traffic.ts";
import { newId } from "../../rpc/ids.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { admissionGraceMs } from "../node-api/admission.ts";
import { listAnomalies } from "../node-api/anomalies.ts";
import { checkPush, REPORT_MAX_BYTES } from "../node-api/report.ts";
import { servedUserList } from "../node-api/service.ts";
import { type AgentRow, findAgentRow } from "../node-record/service.ts";
import type { UserRow } from "../user/row.ts";
import { findUserById } from "../user/service.ts";
import { applyNodeReport, type ChargedUser, type ChargeScales, chargeFor, splitCharge } from "./charge.ts";

const ZONE = "Asia/Shanghai";
const UNIT: ChargeScales = { line: 1, download: 1, upload: 1, minimum: 0 };
/** 2026-11-21 12:00 in Shanghai. */
const NOON = Date.UTC(2026, 10, 21, 4, 0, 0);
const TODAY = businessDay(NOON, ZONE);

function balance(fields: Partial<ChargedUser> = {}): ChargedUser {
  return {
    traffic: 0,
    spend_traffic: 0,
    vip_expire_time: 0,
    daily_limit: null,
    special_daily_unlimit_traffic: 0,
    daily_unlimit_traffic: 0,
    daily_usage: 0,
    daily_usage_day: "",
    ...fields,
  };
}

describe("chargeFor", () => {
  test("multiplies downloads by the line, user and global scales", () => {
    expect(chargeFor(0, 1000, 1, UNIT)).toBe(1000);
    expect(chargeFor(0, 1000, 2, { ...UNIT, line: 1.5, download: 0.5 })).toBe(1500);
  });

  test("uploads use the upload scale instead of the global download scale", () => {
    const scales = { ...UNIT, line: 2, download: 3, upload: 0.5 };
    // (100 × 0.5 + 1000 × 3) × 2 × 1
    expect(chargeFor(100, 1000, 1, scales)).toBe(6100);
    expect(chargeFor(100, 0, 1, { ...scales, upload: 0 })).toBe(0);
  });

  test("rounds to whole bytes", () => {
    expect(chargeFor(0, 3, 1, { ...UNIT, line: 0.5 })).toBe(2);
    expect(chargeFor(0, 1, 1, { ...UNIT, download: 0.4 })).toBe(0);
  });

  test("a user who moved anything pays at least the minimum; no traffic pays nothing", () => {
    const scales = { ...UNIT, minimum: MB };
    expect(chargeFor(1, 1, 1, scales)).toBe(MB);
    expect(chargeFor(0, 2 * MB, 1, scales)).toBe(2 * MB);
    expect(chargeFor(0, 0, 1, scales)).toBe(0);
  });
});

describe("splitCharge", () => {
  const running = { vip_expire_time: NOON + 3_600_000, daily_limit: 10 * GB };

  test("takes today's quota first and leaves permanent traffic alone while it lasts", () => {
    const split = splitCharge(balance({ ...running, traffic: 5 * GB }), 3 * GB, NOON, TODAY);
    expect(split).toEqual({
      fromQuota: 3 * GB,
      fromTrial: 0,
      fromPermanent: 0,
      overdraft: 0,
      dailyUsage: 3 * GB,
    });
  });

  test("a charge that uses the quota up exactly takes nothing from permanent traffic", () => {
    const user = balance({ ...running, traffic: 5 * GB, daily_usage: 4 * GB, daily_usage_day: TODAY });
    expect(splitCharge(user, 6 * GB, NOON, TODAY)).toMatchObject({
      fromQuota: 6 * GB,
      fromPermanent: 0,
      dailyUsage: 10 * GB,
    });
    const usedUp = { ...user, daily_usage: 10 * GB };
    expect(splitCharge(usedUp, 1, NOON, TODAY)).toMatchObject({ fromQuota: 0, fromPermanent: 1 });
  });

  test("a charge crossing the quota takes the rest from permanent traffic", () => {
    const user = balance({ ...running, traffic: 5 * GB, daily_usage: 9 * GB, daily_usage_day: TODAY });
    expect(splitCharge(user, 3 * GB, NOON, TODAY)).toMatchObject({
      fromQuota: GB,
      fromPermanent: 2 * GB,
      overdraft: 0,
      dailyUsage: 10 * GB,
    });
  });

  test("what neither covers is overdraft, and permanent traffic stops at zero", () => {
    const split = splitCharge(balance({ traffic: GB }), 3 * GB, NOON, TODAY);
    expect(split).toMatchObject({ fromQuota: 0, fromPermanent: GB, overdraft: 2 * GB });
  });

  test("without a set limit the daily quota is 50 GB", () => {
    const user = balance({ vip_expire_time: NOON + 1, daily_usage: 49 * GB, daily_usage_day: TODAY });
    expect(splitCharge(user, 2 * GB, NOON, TODAY)).toMatchObject({ fromQuota: GB, overdraft: GB });
    expect(DEFAULT_DAILY_LIMIT).toBe(50 * GB);
  });

  test("the time package counts until its expiry, to the millisecond", () => {
    const user = balance({ traffic: GB, vip_expire_time: NOON, daily_limit: 10 * GB });
    expect(splitCharge(user, 100, NOON - 1, TODAY)).toMatchObject({ fromQuota: 100, fromPermanent: 0 });
    expect(splitCharge(user, 100, NOON, TODAY)).toMatchObject({ fromQuota: 0, fromPermanent: 100 });
  });

  test("issue 14: trial traffic pays after the quota and before permanent traffic, each only when the one before is used up", () => {
    // 5 GB of balances.traffic of which 2 GB are running trial traffic; 1 GB of today's quota left.
    const user = balance({ ...running, traffic: 5 * GB, daily_usage: 9 * GB, daily_usage_day: TODAY });
    expect(splitCharge(user, GB, NOON, TODAY, 2 * GB)).toMatchObject({
      fromQuota: GB,
      fromTrial: 0,
      fromPermanent: 0,
    });
    expect(splitCharge(user, 3 * GB, NOON, TODAY, 2 * GB)).toMatchObject({
      fromQuota: GB,
      fromTrial: 2 * GB,
      fromPermanent: 0,
    });
    expect(splitCharge(user, 4 * GB, NOON, TODAY, 2 * GB)).toEqual({
      fromQuota: GB,
      fromTrial: 2 * GB,
      fromPermanent: GB,
      overdraft: 0,
      dailyUsage: 10 * GB,
    });
    expect(splitCharge(user, 7 * GB, NOON, TODAY, 2 * GB)).toMatchObject({
      fromTrial: 2 * GB,
      fromPermanent: 3 * GB,
      overdraft: GB,
    });
  });

  test("issue 14: without a time package trial pays first; trial beyond the balance is capped by it", () => {
    expect(splitCharge(balance({ traffic: 3 * GB }), GB, NOON, TODAY, 2 * GB)).toMatchObject({
      fromQuota: 0,
      fromTrial: GB,
      fromPermanent: 0,
    });
    // balances.traffic below the trial remaining (an operator's adjustment): never below 0, no permanent.
    expect(splitCharge(balance({ traffic: GB }), 3 * GB, NOON, TODAY, 2 * GB)).toMatchObject({
      fromTrial: GB,
      fromPermanent: 0,
      overdraft: 2 * GB,
    });
  });

  test("the quota restarts at the business day's start", () => {
    const lastMs = endOfBusinessDay(TODAY, ZONE);
    const user = balance({
      vip_expire_time: lastMs + 86_400_000,
      daily_limit: 10 * GB,
      daily_usage: 10 * GB,
      daily_usage_day: TODAY,
      traffic: 5 * GB,
    });
    expect(businessDay(lastMs, ZONE)).toBe(TODAY);
    expect(splitCharge(user, GB, lastMs, TODAY)).toMatchObject({ fromQuota: 0, fromPermanent: GB });
    const tomorrow = businessDay(lastMs + 1, ZONE);
    expect(tomorrow).not.toBe(TODAY);
    expect(splitCharge(user, GB, lastMs + 1, tomorrow)).toMatchObject({
      fromQuota: GB,
      fromPermanent: 0,
      dailyUsage: GB,
    });
  });
});

describe("applyNodeReport", () => {
  let server: TestServer;
  let agentId = "";
  const lines: Record<string, string> = {};

  /** A v2ray node with the CLI's default ports and no lines yet. */
  const addNode = async (name: string, ip: string) => await saveNode(server, { name, ip });

  beforeAll(async () => {
    server = await startTestServer();
    const ctx = server.context;
    await chargeAtFaceValue(server, ZONE);
    agentId = (await addNode("香港 01", "203.0.113.7"))._id;
    const line = async (name: string, protocol: string, scale: number) =>
      (await saveLine(ctx, lineInput.parse({ name, agentID: agentId, protocol, bridge: "none", scale })))._id;
    lines.tcp = await line("TCP", "vmesh_tcp", 2);
    lines.ws = await line("WS", "vmesh_ws", 1.5);
    lines.wsPremium = await line("WS 专线", "vmesh_ws", 3);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A customer whose traffic and time package come through the ledger, as a purchase would. */
  async function customer({
    traffic,
    vip_expire_time,
    daily_limit,
    ...fields
  }: Partial<UserRow> = {}): Promise<UserRow> {
    const ctx = server.context;
    const user = await customerWithPackage(server, {
      traffic,
      vipExpireTime: vip_expire_time,
      dailyLimit: daily_limit,
      now: NOON - 60_000,
      timeZone: ZONE,
    });
    await setUserColumns(ctx.db, user.id, fields);
    return (await findUserById(ctx, user.id)) as UserRow;
  }

  const reload = async (user: UserRow) => (await findUserById(server.context, user.id)) as UserRow;
  const heat = async (lineId: string) =>
    ((await server.context.db.get("SELECT hot FROM agent_lines WHERE id = ?", lineId)) as { hot: number })
      .hot;
  const spendRecords = async (user: UserRow) =>
    await server.context.db.all<{
      traffic_change: number;
      exemption_traffic: number;
      all_traffic: number;
      all_spend: number;
      day: string;
    }>(
      "SELECT traffic_change, exemption_traffic, all_traffic, all_spend, day FROM traffic_records WHERE user_id = ? AND type = 'spend'",
      user.id,
    );
  const usageDay = async (user: UserRow) =>
    await server.context.db.get(
      "SELECT upload, download, quota, permanent, overdraft FROM usage_days WHERE user_id = ?",
      user.id,
    );
  const ledgerSum = async (user: UserRow) => await trafficLedgerSum(server, user.id);

  /** The node pulls its user list, as it does every pull interval (it holds the list from then on). */
  const pullUserList = async (now = Date.now()) => await pullUserListOf(server, agentId, now);

  function usageOf(body: Record<string, [number, number]>) {
    const checked = checkPush(JSON.stringify(body));
    if (!checked.ok) throw new Error(checked.message);
    return checked.value;
  }

  /** A push after the node pulled its list: the report's users are the node's unless a test says otherwise. */
  async function report(
    usage: Record<string, [number, number]>,
    fields: { inbound?: string | null; reportId?: string | null; now?: number; pull?: boolean } = {},
  ) {
    if (fields.pull !== false) await pullUserList();
    return await applyNodeReport(server.context, {
      agentId,
      reportId: fields.reportId === undefined ? newId() : fields.reportId,
      inbound: fields.inbound === undefined ? "vmesh_tcp" : fields.inbound,
      usage: usageOf(usage),
      now: fields.now ?? NOON,
    });
  }

  test("charges permanent traffic at line × user scale and writes ledger, usage and heat", async () => {
    const user = await customer({ traffic: 10 * GB, scale: 1.5 });
    const heatBefore = await heat(lines.tcp as string);
    const result = await report({ [user.node_uid]: [1000, 100 * MB] });
    const charge = Math.round((1000 + 100 * MB) * 2 * 1.5);
    expect(result).toEqual({ duplicate: false, users: 1, charged: charge, anomalies: 0 });
    const after = await reload(user);
    expect(after.traffic).toBe(10 * GB - charge);
    expect(after.spend_traffic).toBe(charge);
    expect(await spendRecords(user)).toEqual([
      {
        traffic_change: -charge,
        exemption_traffic: 0,
        all_traffic: 10 * GB - charge,
        all_spend: charge,
        day: TODAY,
      },
    ]);
    expect(await usageDay(user)).toEqual({
      upload: 1000,
      download: 100 * MB,
      quota: 0,
      permanent: charge,
      overdraft: 0,
    });
    expect(await heat(lines.tcp as string)).toBe(heatBefore + 1000 + 100 * MB);
    expect(await ledgerSum(after)).toBe(after.traffic);
  });

  test("the global scales apply: downloads by traffic_spend_scale, uploads by upload_traffic_spend_scale", async () => {
    const ctx = server.context;
    await ctx.settings.update({ traffic_spend_scale: 1.2, upload_traffic_spend_scale: 0.5 });
    try {
      const user = await customer({ traffic: 10 * GB });
      await report({ [user.node_uid]: [10 * MB, 100 * MB] });
      expect((await reload(user)).spend_traffic).toBe(Math.round((10 * MB * 0.5 + 100 * MB * 1.2) * 2));
    } finally {
      await ctx.settings.update({ traffic_spend_scale: 1, upload_traffic_spend_scale: 1 });
    }
  });

  test("minestTrafficSpend (MB) is the least a report charges a user who moved anything", async () => {
    const ctx = server.context;
    await ctx.settings.update({ minestTrafficSpend: 1 });
    try {
      const user = await customer({ traffic: 10 * GB });
      await report({ [user.node_uid]: [10, 20] });
      expect((await reload(user)).spend_traffic).toBe(MB);
    } finally {
      await ctx.settings.update({ minestTrafficSpend: 0 });
    }
  });

  test("an inbound shared by lines of different scales charges the lowest; heat goes to each of them", async () => {
    const user = await customer({ traffic: 10 * GB });
    const wsHeat = await heat(lines.ws as string);
    const premiumHeat = await heat(lines.wsPremium as string);
    const tcpHeat = await heat(lines.tcp as string);
    await report({ [user.node_uid]: [0, 10 * MB] }, { inbound: "vmesh_ws" });
    expect((await reload(user)).spend_traffic).toBe(15 * MB);
    expect(await heat(lines.ws as string)).toBe(wsHeat + 10 * MB);
    expect(await heat(lines.wsPremium as string)).toBe(premiumHeat + 10 * MB);
    expect(await heat(lines.tcp as string)).toBe(tcpHeat);
  });

  test("a report without an inbound charges at the node's lowest line scale", async () => {
    const user = await customer({ traffic: 10 * GB });
    await report({ [user.node_uid]: [0, 10 * MB] }, { inbound: null });
    expect((await reload(user)).spend_traffic).toBe(15 * MB);
  });

  test("a resent report id changes nothing", async () => {
    const user = await customer({ traffic: 10 * GB });
    const reportId = newId();
    expect((await report({ [user.node_uid]: [0, MB] }, { reportId })).duplicate).toBe(false);
    const once = await reload(user);
    expect(await report({ [user.node_uid]: [0, MB] }, { reportId })).toEqual({
      duplicate: true,
      users: 0,
      charged: 0,
      anomalies: 0,
    });
    expect(await reload(user)).toEqual(once);
    expect(await spendRecords(user)).toHaveLength(1);
  });

  test("reports of one day update that day's single spend record; the ledger still sums to the balance", async () => {
    const user = await customer({ traffic: 10 * GB });
    await report({ [user.node_uid]: [0, MB] });
    await report({ [user.node_uid]: [0, 2 * MB] });
    const after = await reload(user);
    expect(await spendRecords(user)).toEqual([
      {
        traffic_change: -6 * MB,
        exemption_traffic: 0,
        all_traffic: after.traffic,
        all_spend: 6 * MB,
        day: TODAY,
      },
    ]);
    expect(await ledgerSum(after)).toBe(after.traffic);
    expect(await usageDay(user)).toMatchObject({ download: 3 * MB, permanent: 6 * MB });
  });

  test("time-package traffic is exempt up to today's quota, then permanent traffic pays", async () => {
    const user = await customer({
      traffic: 10 * GB,
      vip_expire_time: NOON + 86_400_000,
      daily_limit: 100 * MB,
    });
    await report({ [user.node_uid]: [0, 30 * MB] }); // 60 MB of quota
    await report({ [user.node_uid]: [0, 30 * MB] }); // 40 MB of quota, 20 MB permanent
    const after = await reload(user);
    expect(after.daily_usage).toBe(100 * MB);
    expect(after.daily_usage_day).toBe(TODAY);
    expect(after.traffic).toBe(10 * GB - 20 * MB);
    expect(after.spend_traffic).toBe(120 * MB);
    expect(await spendRecords(user)).toEqual([
      {
        traffic_change: -20 * MB,
        exemption_traffic: 100 * MB,
        all_traffic: 10 * GB - 20 * MB,
        all_spend: 120 * MB,
        day: TODAY,
      },
    ]);
    expect(await usageDay(user)).toMatchObject({ quota: 100 * MB, permanent: 20 * MB });
  });

  test("a time package expiring between two reports: the later one pays from permanent traffic", async () => {
    const user = await customer({ traffic: GB, vip_expire_time: NOON + 1000, daily_limit: 10 * GB });
    await report({ [user.node_uid]: [0, MB] }, { now: NOON + 999 });
    await report({ [user.node_uid]: [0, MB] }, { now: NOON + 1000 });
    const after = await reload(user);
    expect(after.daily_usage).toBe(2 * MB);
    expect(after.traffic).toBe(GB - 2 * MB);
  });

  test("a user with nothing left is charged what is left and the rest is recorded as overdraft", async () => {
    const user = await customer({ traffic: MB });
    await report({ [user.node_uid]: [0, 3 * MB] });
    const after = await reload(user);
    expect(after.traffic).toBe(0);
    expect(after.spend_traffic).toBe(MB);
    expect(await usageDay(user)).toMatchObject({ permanent: MB, overdraft: 5 * MB });
  });

  test("users the node was not given are not charged but kept as anomalies; its own users are charged", async () => {
    const user = await customer({ traffic: GB });
    const disabled = await customer({ traffic: GB });
    await server.context.db.run("UPDATE users SET disabled = 1 WHERE id = ?", disabled.id);
    const result = await report({
      [user.node_uid]: [0, MB],
      [disabled.node_uid]: [0, MB],
      99999999: [3, 4],
      7: [0, 0],
    });
    expect(result).toEqual({ duplicate: false, users: 1, charged: 2 * MB, anomalies: 2 });
    expect((await reload(user)).traffic).toBe(GB - 2 * MB);
    expect(await reload(disabled)).toMatchObject({ traffic: GB, spend_traffic: 0 });
    expect(await spendRecords(disabled)).toEqual([]);
    expect(await usageDay(disabled)).toBeNull();
    const anomalies = await listAnomalies(server.context, agentId, NOON);
    expect(anomalies.filter((row) => [disabled.node_uid, 99999999].includes(row.userNo))).toEqual([
      {
        day: TODAY,
        userNo: disabled.node_uid,
        email: disabled.email,
        reason: "not_admitted",
        upload: 0,
        download: MB,
        reports: 1,
        firstTime: NOON,
        lastTime: NOON,
      },
      {
        day: TODAY,
        userNo: 99999999,
        email: "",
        reason: "unknown_user",
        upload: 3,
        download: 4,
        reports: 1,
        firstTime: NOON,
        lastTime: NOON,
      },
    ]);
  });

  test("a user taken off the node's list is charged for the grace after that pull, then not", async () => {
    const user = await customer({ traffic: GB });
    const pulledAt = Date.now();
    await pullUserList(pulledAt);
    await server.context.db.run("UPDATE users SET disabled = 1 WHERE id = ?", user.id);
    await pullUserList(pulledAt); // the node is given a list without the user
    const grace = await admissionGraceMs(server.context);
    expect(grace).toBe(2 * (60 + 60) * 1000); // 2 × (push + pull interval), the settings' defaults
    const late = { pull: false, now: pulledAt + grace };
    expect(await report({ [user.node_uid]: [0, MB] }, late)).toMatchObject({ users: 1, charged: 2 * MB });
    const after = { pull: false, now: pulledAt + grace + 1 };
    expect(await report({ [user.node_uid]: [0, MB] }, after)).toMatchObject({
      users: 0,
      charged: 0,
      anomalies: 1,
    });
    expect((await reload(user)).traffic).toBe(GB - 2 * MB);
  });

  test("a node that never pulled a user list charges nobody", async () => {
    const ctx = server.context;
    const user = await customer({ traffic: GB });
    const silent = await addNode("从未拉取", "203.0.113.8");
    await saveLine(
      ctx,
      lineInput.parse({ name: "TCP", agentID: silent._id, protocol: "vmesh_tcp", bridge: "none" }),
    );
    const result = await applyNodeReport(ctx, {
      agentId: silent._id,
      reportId: newId(),
      inbound: "vmesh_tcp",
      usage: usageOf({ [user.node_uid]: [0, MB] }),
      now: NOON,
    });
    expect(result).toMatchObject({ users: 0, charged: 0, anomalies: 1 });
    expect(await reload(user)).toEqual(user);
  });

  test("a node running when the panel was upgraded charges as before until its first pull, at most 15 minutes", async () => {
    const ctx = server.context;
    const user = await customer({ traffic: GB });
    const upgraded = await addNode("升级前的节点", "203.0.113.9");
    // What migration 006 gives every node that existed before it.
    const windowEnd = NOON + 15 * 60_000;
    await ctx.db.run("UPDATE agents SET admit_all_until = ? WHERE id = ?", windowEnd, upgraded._id);
    const push = async (now: number) =>
      await applyNodeReport(ctx, {
        agentId: upgraded._id,
        reportId: newId(),
        inbound: null,
        usage: usageOf({ [user.node_uid]: [0, MB] }),
        now,
      });
    expect(await push(NOON)).toMatchObject({ users: 1, charged: MB, anomalies: 0 });
    expect(await push(windowEnd)).toMatchObject({ users: 0, charged: 0, anomalies: 1 });
    // Its first pull (no line serves the user) ends the window at once.
    await ctx.db.run("UPDATE agents SET admit_all_until = ? WHERE id = ?", windowEnd, upgraded._id);
    await servedUserList(ctx, (await findAgentRow(ctx, upgraded._id)) as AgentRow, NOON);
    expect(await push(NOON + 1)).toMatchObject({ users: 0, charged: 0, anomalies: 1 });
    expect((await reload(user)).traffic).toBe(GB - MB);
  });

  test("anomalies are bounded: past 1 000 users a day they sum into one row; after 30 days they go", async () => {
    const ctx = server.context;
    const strays = Object.fromEntries(
      Array.from({ length: 1003 }, (_, i) => [String(900_000_000 + i), [1, 2] as [number, number]]),
    );
    const day = NOON + 3 * 86_400_000;
    await report(strays, { now: day, pull: false });
    const rows = await ctx.db.all<{
      user_no: number;
      reason: string;
      upload: number;
      download: number;
      reports: number;
    }>(
      "SELECT user_no, reason, upload, download, reports FROM node_anomalies WHERE agent_id = ? AND day = ?",
      agentId,
      businessDay(day, ZONE),
    );
    expect(rows).toHaveLength(1001);
    expect(rows.find((row) => row.user_no === 0)).toEqual({
      user_no: 0,
      reason: "others",
      upload: 3,
      download: 6,
      reports: 1,
    });
    // Past the 30 days of every anomaly in this file, those at the wall clock's time included.
    const later = Math.max(day, Date.now()) + 31 * 86_400_000;
    await report({ 123456789: [0, 1] }, { now: later, pull: false });
    const kept = await ctx.db.all("SELECT DISTINCT day FROM node_anomalies WHERE agent_id = ?", agentId);
    expect(kept).toEqual([{ day: businessDay(later, ZONE) }]);
  });

  test("sums saturate at 2^53 − 1: heat and usage stay integers however many bound-sized reports arrive", async () => {
    const ctx = server.context;
    const user = await customer({ traffic: GB });
    await report({ [user.node_uid]: [0, 1] });
    await ctx.db.run(
      "UPDATE agent_lines SET hot = ? WHERE id = ?",
      Number.MAX_SAFE_INTEGER - 5,
      lines.tcp as string,
    );
    await ctx.db.run(
      "UPDATE usage_days SET download = ?, overdraft = ? WHERE user_id = ?",
      Number.MAX_SAFE_INTEGER - 5,
      Number.MAX_SAFE_INTEGER - 5,
      user.id,
    );
    await report({ [user.node_uid]: [0, REPORT_MAX_BYTES] });
    await report({ [user.node_uid]: [0, REPORT_MAX_BYTES] });
    // The storage type of each value: SQLite's typeof; PostgreSQL's columns are BIGINT, so pg_typeof.
    const [typeOf, integer] = ctx.db.engine === "postgres" ? ["pg_typeof", "bigint"] : ["typeof", "integer"];
    const typed = (value: string) => `CAST(${typeOf}(${value}) AS TEXT)`;
    const types = await ctx.db.get(
      `SELECT ${typed("l.hot")} AS hot, l.hot AS heat, ${typed("d.download")} AS download, ${typed("d.overdraft")} AS overdraft,
           d.overdraft AS "overdraftValue"
         FROM agent_lines l, usage_days d WHERE l.id = ? AND d.user_id = ?`,
      lines.tcp as string,
      user.id,
    );
    expect(types).toEqual({
      hot: integer,
      heat: Number.MAX_SAFE_INTEGER,
      download: integer,
      overdraft: integer,
      overdraftValue: Number.MAX_SAFE_INTEGER,
    });
    expect(
      chargeFor(REPORT_MAX_BYTES, REPORT_MAX_BYTES, 100, {
        line: 100,
        download: 100,
        upload: 100,
        minimum: 0,
      }),
    ).toBe(Number.MAX_SAFE_INTEGER);
  });

  test("the node's last push and online user count are recorded", async () => {
    const user = await customer({ traffic: GB });
    await report({ [user.node_uid]: [0, 1] }, { now: NOON + 5 });
    const row = await server.context.db.get(
      "SELECT last_push_time, last_seen_time, online_users FROM agents WHERE id = ?",
      agentId,
    );
    expect(row).toEqual({ last_push_time: NOON + 5, last_seen_time: NOON + 5, online_users: 1 });
  });
});
