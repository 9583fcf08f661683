/**
 * Issue 18 §3: a report updates the day's spend record (since migration 020 also the day's usage,
 * read through the view usage_days) it found by its row id and inserts only the ones the day does
 * not have yet. These reports mix users whose rows of
 * the day exist with users who have none, cross a business day, and charge a user whose first
 * report of the day was all overdraft (before migration 020 a usage row but no spend record; now a
 * spend record that moved nothing, which the record lists leave out): each day keeps its own rows
 * with its own sums, and the ledger still sums to the balance.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import {
  applyPush,
  chargeAtFaceValue,
  customerWithPackage,
  pullUserListOf,
  trafficLedgerSum,
} from "../../../tests/traffic.ts";
import { tx } from "../../db/db.ts";
import { businessDay } from "../../lib/time.ts";
import { GB, MB } from "../../lib/traffic.ts";
import { changeTraffic } from "../ledger/service.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import type { UserRow } from "../user/row.ts";
import { findUserById } from "../user/service.ts";
import { listAllTrafficRecords } from "./admin.ts";
import { listTrafficRecords, movedSql } from "./service.ts";

const ZONE = "Asia/Shanghai";
/** 2026-11-21 12:00 in Shanghai, and the same time the next day. */
const NOON = Date.UTC(2026, 10, 21, 4, 0, 0);
const NEXT_NOON = NOON + 86_400_000;
const TODAY = businessDay(NOON, ZONE);
const TOMORROW = businessDay(NEXT_NOON, ZONE);

let server: TestServer;
let agentId = "";

beforeAll(async () => {
  server = await startTestServer();
  const ctx = server.context;
  await chargeAtFaceValue(server, ZONE);
  agentId = (await saveNode(server, { name: "东京 01", ip: "203.0.113.9" }))._id;
  await saveLine(
    ctx,
    lineInput.parse({ name: "TCP", agentID: agentId, protocol: "vmesh_tcp", bridge: "none", scale: 1 }),
  );
});
afterAll(async () => {
  await server?.close();
});

async function customer(traffic: number): Promise<UserRow> {
  const user = await customerWithPackage(server, {
    desc: "测试",
    traffic,
    now: NOON - 60_000,
    timeZone: ZONE,
  });
  return (await findUserById(server.context, user.id)) as UserRow;
}

async function changeBalance(user: UserRow, type: "buy" | "push_spend", traffic: number, now: number) {
  const ctx = server.context;
  await tx(
    ctx.db,
    async () =>
      await changeTraffic(ctx.db, { userId: user.id, type, desc: "测试", traffic, now, timeZone: ZONE }),
  );
}

/** A push; first the node pulls its user list, unless `pull` is false (it still holds the last one). */
async function report(usage: Record<string, [number, number]>, now: number, pull = true) {
  if (pull) await pullUserListOf(server, agentId, now);
  return await applyPush(server, agentId, usage, now);
}

/** The spend records the record lists show (migration 020: an overdraft-only day's record moved nothing and is not shown). */
const spendRecords = async (user: UserRow) =>
  await server.context.db.all(
    `SELECT day, traffic_change, all_traffic, all_spend FROM traffic_records WHERE user_id = ? AND type = 'spend' AND ${movedSql()}
     ORDER BY day`,
    user.id,
  );
const usageDays = async (user: UserRow) =>
  await server.context.db.all(
    "SELECT day, download, permanent, overdraft FROM usage_days WHERE user_id = ? ORDER BY day",
    user.id,
  );
const ledgerSum = async (user: UserRow) => await trafficLedgerSum(server, user.id);
const reload = async (user: UserRow) => (await findUserById(server.context, user.id)) as UserRow;

test("one report charges users with and without rows of the day; the next day gets rows of its own", async () => {
  const regular = await customer(GB);
  await report({ [regular.node_uid]: [0, MB] }, NOON);
  const newcomer = await customer(GB);

  const result = await report(
    { [regular.node_uid]: [0, 2 * MB], [newcomer.node_uid]: [0, 4 * MB] },
    NOON + 1000,
  );
  expect(result).toMatchObject({ users: 2, charged: 6 * MB });
  expect(await spendRecords(regular)).toEqual([
    { day: TODAY, traffic_change: -3 * MB, all_traffic: GB - 3 * MB, all_spend: 3 * MB },
  ]);
  expect(await spendRecords(newcomer)).toEqual([
    { day: TODAY, traffic_change: -4 * MB, all_traffic: GB - 4 * MB, all_spend: 4 * MB },
  ]);

  await report({ [regular.node_uid]: [0, 5 * MB] }, NEXT_NOON);
  expect(await spendRecords(regular)).toEqual([
    { day: TODAY, traffic_change: -3 * MB, all_traffic: GB - 3 * MB, all_spend: 3 * MB },
    { day: TOMORROW, traffic_change: -5 * MB, all_traffic: GB - 8 * MB, all_spend: 8 * MB },
  ]);
  expect(await usageDays(regular)).toEqual([
    { day: TODAY, download: 3 * MB, permanent: 3 * MB, overdraft: 0 },
    { day: TOMORROW, download: 5 * MB, permanent: 5 * MB, overdraft: 0 },
  ]);
  for (const user of [regular, newcomer]) expect(await ledgerSum(user)).toBe((await reload(user)).traffic);
});

test("a day that began in overdraft gets its spend record at the first report that pays", async () => {
  const giver = await customer(MB);
  await report({}, NOON - 1000); // the node pulls a list with the customer on it
  await changeBalance(giver, "push_spend", -MB, NOON - 500); // who gives all of it away before the push
  await report({ [giver.node_uid]: [0, 2 * MB] }, NOON, false);
  expect(await spendRecords(giver)).toEqual([]);
  expect(await usageDays(giver)).toEqual([{ day: TODAY, download: 2 * MB, permanent: 0, overdraft: 2 * MB }]);

  await changeBalance(giver, "buy", GB, NOON + 1000);
  await report({ [giver.node_uid]: [0, 3 * MB] }, NOON + 2000);
  expect(await spendRecords(giver)).toEqual([
    { day: TODAY, traffic_change: -3 * MB, all_traffic: GB - 3 * MB, all_spend: 3 * MB },
  ]);
  expect(await usageDays(giver)).toEqual([
    { day: TODAY, download: 5 * MB, permanent: 3 * MB, overdraft: 2 * MB },
  ]);
  expect(await ledgerSum(giver)).toBe((await reload(giver)).traffic);
});

test("流量记录 and 全部流量记录 show an overdraft-only day as before: no spend record until a report pays", async () => {
  const ctx = server.context;
  const giver = await customer(MB);
  await report({}, NOON - 1000);
  await changeBalance(giver, "push_spend", -MB, NOON - 500);
  await report({ [giver.node_uid]: [0, 2 * MB] }, NOON, false);
  const spendShown = async () => {
    const own = (await listTrafficRecords(ctx, giver.id, { now: NOON + 3000 })).filter(
      (r) => r.type === "spend",
    );
    const all = (
      await listAllTrafficRecords(ctx, { type: "spend", day_num: 10 }, NOON + 3000)
    ).records.filter((r) => r.uid === giver.id);
    return { own: own.map((r) => [r.trafficChange, r.allTraffic, r.updateTime]), all: all.length };
  };
  expect(await spendShown()).toEqual({ own: [], all: 0 });

  await changeBalance(giver, "buy", GB, NOON + 1000);
  await report({ [giver.node_uid]: [0, 3 * MB] }, NOON + 2000);
  expect(await spendShown()).toEqual({ own: [[-3 * MB, GB - 3 * MB, NOON + 2000]], all: 1 });
  // A report that pays nothing (the user ran dry again) only adds usage: the record stays as shown.
  await changeBalance(giver, "push_spend", -(GB - 3 * MB), NOON + 2500);
  await report({ [giver.node_uid]: [0, MB] }, NOON + 2600);
  expect(await spendShown()).toEqual({ own: [[-3 * MB, GB - 3 * MB, NOON + 2000]], all: 1 });
  expect(await usageDays(giver)).toEqual([
    { day: TODAY, download: 6 * MB, permanent: 3 * MB, overdraft: 3 * MB },
  ]);
});
