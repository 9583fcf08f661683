/**
 * Node-traffic test helpers: a node with one line at scale 1 whose reports are charged through
 * applyNodeReport (the push route's function), and instants of business days, so tests pick the
 * day a charge lands on instead of depending on the wall clock.
 */

import { tx } from "../src/db/db.ts";
import { addDays, businessDay, endOfBusinessDay, HOUR_MS } from "../src/lib/time.ts";
import { changeTraffic, type TrafficChange } from "../src/modules/ledger/service.ts";
import { lineInput } from "../src/modules/line/schema.ts";
import { saveLine } from "../src/modules/line/service.ts";
import { checkPush } from "../src/modules/node-api/report.ts";
import { servedUserList } from "../src/modules/node-api/service.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import { applyNodeReport, type ReportResult } from "../src/modules/traffic/charge.ts";
import type { TrafficRecordType } from "../src/modules/traffic/schema.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import type { UserRow } from "../src/modules/user/row.ts";
import { createUser } from "../src/modules/user/service.ts";
import { newId } from "../src/rpc/ids.ts";
import type { TestServer } from "./harness.ts";
import { saveNode } from "./nodes.ts";

/** Charges at face value (all scales 1, no minimum) in the given business timezone. */
export async function chargeAtFaceValue(server: TestServer, timezone: string) {
  await server.context.settings.update({
    timezone,
    traffic_spend_scale: 1,
    upload_traffic_spend_scale: 1,
    minestTrafficSpend: 0,
  });
}

/**
 * Charges at face value (chargeAtFaceValue) in the given business timezone, and adds a node with
 * one VMess TCP line; returns the node's id.
 */
export async function makeChargingNode(server: TestServer, timezone: string): Promise<string> {
  const ctx = server.context;
  await chargeAtFaceValue(server, timezone);
  const agent = await saveNode(server, { name: "香港 01", country: { code: "HK" }, ip: "203.0.113.9" });
  await saveLine(
    ctx,
    lineInput.parse({ name: "TCP", agentID: agent._id, protocol: "vmesh_tcp", bridge: "none", scale: 1 }),
  );
  return agent._id;
}

/** The node pulls its user list at `now`, as it does every pull interval (it charges only the users on it). */
export async function pullUserListOf(server: TestServer, agentId: string, now?: number) {
  const ctx = server.context;
  return await servedUserList(ctx, (await findAgentRow(ctx, agentId)) as AgentRow, now);
}

/**
 * A push of the node report `{node_uid: [upload, download]}`, checked as the push route checks
 * it and applied at `now` with a fresh report id on the VMess TCP inbound; no pull first.
 */
export async function applyPush(
  server: TestServer,
  agentId: string,
  usage: Record<number | string, [upload: number, download: number]>,
  now: number,
): Promise<ReportResult> {
  const checked = checkPush(JSON.stringify(usage));
  if (!checked.ok) throw new Error(checked.message);
  return await applyNodeReport(server.context, {
    agentId,
    reportId: newId(),
    inbound: "vmesh_tcp",
    usage: checked.value,
    now,
  });
}

/**
 * One node report `{node_uid: [upload, download]}` applied at `now`, as a push with a fresh report
 * id, after the node pulled its user list (a node charges only the users it was given).
 */
export async function chargeNode(
  server: TestServer,
  agentId: string,
  usage: Record<number, [upload: number, download: number]>,
  now: number,
): Promise<ReportResult> {
  await pullUserListOf(server, agentId);
  return await applyPush(server, agentId, usage, now);
}

/**
 * A customer made straight through the service (a fresh address) whose traffic and time package
 * come through the ledger in one "buy" row, as a purchase credits them.
 */
export async function customerWithPackage(
  server: TestServer,
  purchase: Omit<TrafficChange, "userId" | "type" | "desc"> & { desc?: string },
): Promise<UserRow> {
  const ctx = server.context;
  const user = await createUser(ctx, {
    email: `${newId()}@example.com`,
    passwordDigest: transformPassword("correct-horse-1"),
  });
  await tx(
    ctx.db,
    async () =>
      await changeTraffic(ctx.db, {
        ...purchase,
        userId: user.id,
        type: "buy",
        desc: purchase.desc ?? "测试套餐",
      }),
  );
  return user;
}

/** A ledger row of `type` moving `bytes` of the user's permanent traffic, made now (Asia/Shanghai). */
export async function recordTraffic(
  server: TestServer,
  userId: string,
  type: TrafficRecordType,
  bytes: number,
) {
  const db = server.context.db;
  await tx(
    db,
    async () =>
      await changeTraffic(db, {
        userId,
        type,
        desc: "测试",
        traffic: bytes,
        now: Date.now(),
        timeZone: "Asia/Shanghai",
      }),
  );
}

/** Σ traffic_change of the user's ledger rows: what balances.traffic must equal. */
export async function trafficLedgerSum(server: TestServer, userId: string): Promise<number> {
  return (
    (await server.context.db.get(
      "SELECT COALESCE(SUM(traffic_change), 0) AS total FROM traffic_records WHERE user_id = ?",
      userId,
    )) as { total: number }
  ).total;
}

/** The first millisecond of a business day (YYYY-MM-DD) in the timezone. */
export function startOfBusinessDay(day: string, timeZone: string): number {
  return endOfBusinessDay(addDays(day, -1), timeZone) + 1;
}

/** Noon of the business day `offset` days from the one `now` falls on. */
export function noonOfDay(now: number, offset: number, timeZone: string): number {
  return startOfBusinessDay(addDays(businessDay(now, timeZone), offset), timeZone) + 12 * HOUR_MS;
}

/**
 * A fixed-offset timezone in which `now` is between 11:00 and 13:00, so that "today" stays the
 * same business day for the rest of a test run however late the test is run.
 */
export function noonZone(now = Date.now()): string {
  const offset = 12 - new Date(now).getUTCHours(); // −11 … +12 hours from UTC
  // Etc/GMT names count the other way round: Etc/GMT-8 is UTC+8.
  return offset === 0 ? "Etc/GMT" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`;
}
