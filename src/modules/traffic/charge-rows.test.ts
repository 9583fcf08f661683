/**
 * Issue 18 §3: a report updates the day's spend record and usage_days row it found by their row
 * ids and inserts only the ones the day does not have yet. These reports mix users whose rows of
 * the day exist with users who have none, cross a business day, and charge a user whose first
 * report of the day was all overdraft (a usage row but no spend record): each day keeps its own
 * rows with its own sums, and the ledger still sums to the balance.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../../tests/harness.ts";
import { tx } from "../../db/db.ts";
import { businessDay } from "../../lib/time.ts";
import { GB, MB } from "../../lib/traffic.ts";
import { newId } from "../../rpc/ids.ts";
import { changeTraffic } from "../ledger/service.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { checkPush } from "../node-api/report.ts";
import { servedUserList } from "../node-api/service.ts";
import { agentInput } from "../node-record/schema.ts";
import { type AgentRow, findAgentRow, saveAgent } from "../node-record/service.ts";
import { transformPassword } from "../user/password.ts";
import type { UserRow } from "../user/row.ts";
import { createUser, findUserById } from "../user/service.ts";
import { applyNodeReport } from "./charge.ts";

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
  ctx.settings.update({
    timezone: ZONE,
    traffic_spend_scale: 1,
    upload_traffic_spend_scale: 1,
    minestTrafficSpend: 0,
  });
  agentId = saveAgent(
    ctx,
    agentInput.parse({
      name: "东京 01",
      type: "v2ray",
      ip: "203.0.113.9",
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
    }),
  )._id;
  saveLine(
    ctx,
    lineInput.parse({ name: "TCP", agentID: agentId, protocol: "vmesh_tcp", bridge: "none", scale: 1 }),
  );
});
afterAll(async () => {
  await server?.close();
});

async function customer(traffic: number): Promise<UserRow> {
  const ctx = server.context;
  const user = await createUser(ctx, {
    email: `${newId()}@example.com`,
    passwordDigest: transformPassword("correct-horse-1"),
  });
  changeBalance(user, "buy", traffic, NOON - 60_000);
  return findUserById(ctx, user.id) as UserRow;
}

function changeBalance(user: UserRow, type: "buy" | "push_spend", traffic: number, now: number) {
  const ctx = server.context;
  tx(ctx.db, () =>
    changeTraffic(ctx.db, { userId: user.id, type, desc: "测试", traffic, now, timeZone: ZONE }),
  );
}

/** A push; first the node pulls its user list, unless `pull` is false (it still holds the last one). */
function report(usage: Record<string, [number, number]>, now: number, pull = true) {
  const ctx = server.context;
  if (pull) servedUserList(ctx, findAgentRow(ctx, agentId) as AgentRow, now);
  const checked = checkPush(JSON.stringify(usage));
  if (!checked.ok) throw new Error(checked.message);
  return applyNodeReport(ctx, {
    agentId,
    reportId: newId(),
    inbound: "vmesh_tcp",
    usage: checked.value,
    now,
  });
}

const spendRecords = (user: UserRow) =>
  server.context.db
    .query(
      "SELECT day, traffic_change, all_traffic, all_spend FROM traffic_records WHERE user_id = ? AND type = 'spend' ORDER BY day",
    )
    .all(user.id);
const usageDays = (user: UserRow) =>
  server.context.db
    .query("SELECT day, download, permanent, overdraft FROM usage_days WHERE user_id = ? ORDER BY day")
    .all(user.id);
const ledgerSum = (user: UserRow) =>
  (
    server.context.db
      .query("SELECT COALESCE(SUM(traffic_change), 0) AS total FROM traffic_records WHERE user_id = ?")
      .get(user.id) as { total: number }
  ).total;
const reload = (user: UserRow) => findUserById(server.context, user.id) as UserRow;

test("one report charges users with and without rows of the day; the next day gets rows of its own", async () => {
  const regular = await customer(GB);
  report({ [regular.node_uid]: [0, MB] }, NOON);
  const newcomer = await customer(GB);

  const result = report({ [regular.node_uid]: [0, 2 * MB], [newcomer.node_uid]: [0, 4 * MB] }, NOON + 1000);
  expect(result).toMatchObject({ users: 2, charged: 6 * MB });
  expect(spendRecords(regular)).toEqual([
    { day: TODAY, traffic_change: -3 * MB, all_traffic: GB - 3 * MB, all_spend: 3 * MB },
  ]);
  expect(spendRecords(newcomer)).toEqual([
    { day: TODAY, traffic_change: -4 * MB, all_traffic: GB - 4 * MB, all_spend: 4 * MB },
  ]);

  report({ [regular.node_uid]: [0, 5 * MB] }, NEXT_NOON);
  expect(spendRecords(regular)).toEqual([
    { day: TODAY, traffic_change: -3 * MB, all_traffic: GB - 3 * MB, all_spend: 3 * MB },
    { day: TOMORROW, traffic_change: -5 * MB, all_traffic: GB - 8 * MB, all_spend: 8 * MB },
  ]);
  expect(usageDays(regular)).toEqual([
    { day: TODAY, download: 3 * MB, permanent: 3 * MB, overdraft: 0 },
    { day: TOMORROW, download: 5 * MB, permanent: 5 * MB, overdraft: 0 },
  ]);
  for (const user of [regular, newcomer]) expect(ledgerSum(user)).toBe(reload(user).traffic);
});

test("a day that began in overdraft gets its spend record at the first report that pays", async () => {
  const giver = await customer(MB);
  report({}, NOON - 1000); // the node pulls a list with the customer on it
  changeBalance(giver, "push_spend", -MB, NOON - 500); // who gives all of it away before the push
  report({ [giver.node_uid]: [0, 2 * MB] }, NOON, false);
  expect(spendRecords(giver)).toEqual([]);
  expect(usageDays(giver)).toEqual([{ day: TODAY, download: 2 * MB, permanent: 0, overdraft: 2 * MB }]);

  changeBalance(giver, "buy", GB, NOON + 1000);
  report({ [giver.node_uid]: [0, 3 * MB] }, NOON + 2000);
  expect(spendRecords(giver)).toEqual([
    { day: TODAY, traffic_change: -3 * MB, all_traffic: GB - 3 * MB, all_spend: 3 * MB },
  ]);
  expect(usageDays(giver)).toEqual([{ day: TODAY, download: 5 * MB, permanent: 3 * MB, overdraft: 2 * MB }]);
  expect(ledgerSum(giver)).toBe(reload(giver).traffic);
});
