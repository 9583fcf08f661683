/**
 * Node-traffic test helpers: a node with one line at scale 1 whose reports are charged through
 * applyNodeReport (the push route's function), and instants of business days, so tests pick the
 * day a charge lands on instead of depending on the wall clock.
 */
import { addDays, businessDay, endOfBusinessDay, HOUR_MS } from "../src/lib/time.ts";
import { lineInput } from "../src/modules/line/schema.ts";
import { saveLine } from "../src/modules/line/service.ts";
import { checkPush } from "../src/modules/node-api/report.ts";
import { servedUserList } from "../src/modules/node-api/service.ts";
import { agentInput } from "../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow, saveAgent } from "../src/modules/node-record/service.ts";
import { applyNodeReport, type ReportResult } from "../src/modules/traffic/charge.ts";
import { newId } from "../src/rpc/ids.ts";
import type { TestServer } from "./harness.ts";

/**
 * Charges at face value (all scales 1, no minimum) in the given business timezone, and adds a
 * node with one VMess TCP line; returns the node's id.
 */
export function makeChargingNode(server: TestServer, timezone: string): string {
  const ctx = server.context;
  ctx.settings.update({
    timezone,
    traffic_spend_scale: 1,
    upload_traffic_spend_scale: 1,
    minestTrafficSpend: 0,
  });
  const agent = saveAgent(
    ctx,
    agentInput.parse({
      name: "香港 01",
      country: { code: "HK" },
      type: "v2ray",
      ip: "203.0.113.9",
      ctrl_port: 888,
      zz_port: 20000,
      port: 10000,
      public_port: 10000,
      serverType: "ubuntu_x86",
    }),
  );
  saveLine(
    ctx,
    lineInput.parse({ name: "TCP", agentID: agent._id, protocol: "vmesh_tcp", bridge: "none", scale: 1 }),
  );
  return agent._id;
}

/**
 * One node report `{node_uid: [upload, download]}` applied at `now`, as a push with a fresh report
 * id, after the node pulled its user list (a node charges only the users it was given).
 */
export function chargeNode(
  server: TestServer,
  agentId: string,
  usage: Record<number, [upload: number, download: number]>,
  now: number,
): ReportResult {
  const ctx = server.context;
  servedUserList(ctx, findAgentRow(ctx, agentId) as AgentRow);
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
