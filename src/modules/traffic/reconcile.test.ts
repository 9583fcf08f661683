/**
 * Reconciliation per node and business day (issue 32), over the real push route, the real CLI,
 * the admin API, /metrics and the bot's outbox: after a known sequence the figures are exactly the
 * expected ones, and a hand-made divergence is flagged everywhere. Then the day boundary: a report
 * is attributed by the panel's receive time, whatever the node's clock says.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ferryIn } from "../../../cli/test-helpers.ts";
import { loggedInClient, setUserColumns, startTestServer, type TestServer } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { chargeAtFaceValue, customerWithPackage, noonZone, pullUserListOf } from "../../../tests/traffic.ts";
import { businessDay, endOfBusinessDay } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { newId } from "../../rpc/ids.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";
import { checkPush } from "../node-api/report.ts";
import { type AgentRow, deleteAgent, findAgentRow } from "../node-record/service.ts";
import { applyNodeReport } from "./charge.ts";
import { reconcileDays } from "./reconcile.ts";
import type { ReconcileDay } from "./reconcile-schema.ts";

let server: TestServer;
let zone: string;

beforeAll(async () => {
  server = await startTestServer({ reconcileScanMs: 100 });
  zone = noonZone();
  await chargeAtFaceValue(server, zone);
});
afterAll(async () => {
  await server?.close();
});

/** A node with one VMess TCP line at `scale`. */
async function nodeWithLine(name: string, scale: number): Promise<AgentRow> {
  const agent = await saveNode(server, { name, ip: "203.0.113.9" });
  await saveLine(
    server.context,
    lineInput.parse({
      name: `${name} TCP`,
      agentID: agent._id,
      protocol: "vmesh_tcp",
      bridge: "none",
      scale,
    }),
  );
  return (await findAgentRow(server.context, agent._id)) as AgentRow;
}

/** A push as the node program sends it: over HTTP, with its report id. */
async function push(
  node: AgentRow,
  usage: Record<number, [number, number]>,
  reportId: string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(
    `${server.url}/api/v1/server/UniProxy/push?node_type=ferry&node_id=${node.node_no}&token=${node.api_token}&inbound=vmesh_tcp`,
    {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": reportId, ...headers },
      body: JSON.stringify(usage),
    },
  );
  expect(response.status).toBe(200);
  return (await response.json()) as { duplicate: boolean; charged: number };
}

const customer = () => customerWithPackage(server, { traffic: 10 * GB, now: Date.now(), timeZone: zone });

function divergenceOf(metrics: string, nodeId: string): number | undefined {
  const line = metrics
    .split("\n")
    .find((l) => l.startsWith(`ferry_reconcile_divergence_ratio{node="${nodeId}"}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("ferry node reconcile after a known sequence", () => {
  test("exact figures on both nodes; a hand-made divergence is flagged in the CLI, the API, /metrics and the bot outbox", async () => {
    const cli = ferryIn(server.dataDir);
    const admin = await loggedInClient(server, { role: "admin" });
    await server.context.db.run(
      "INSERT INTO telegram_bindings (user_id, chat_id, bind_time) VALUES (?, 4343, ?)",
      admin.user.id,
      Date.now(),
    );
    const serving = await nodeWithLine("对账 A", 1.5);
    const stranger = await nodeWithLine("对账 B", 1);
    const one = await customer();
    const two = await customer();
    await setUserColumns(server.context.db, two.id, { scale: 2 });
    // Only the serving node pulls its user list: the other was never given these customers.
    await pullUserListOf(server, serving.id);

    const first = newId();
    expect(
      (await push(serving, { [one.node_uid]: [1000, 3000], [two.node_uid]: [100, 100] }, first)).charged,
    ).toBe(4000 * 1.5 + 200 * 1.5 * 2);
    // The same report again (the node did not hear the answer): charged and counted once.
    expect(
      await push(serving, { [one.node_uid]: [1000, 3000], [two.node_uid]: [100, 100] }, first),
    ).toMatchObject({
      duplicate: true,
      charged: 0,
    });
    expect((await push(serving, { [one.node_uid]: [200, 600] }, newId())).charged).toBe(1200);
    expect((await push(stranger, { [one.node_uid]: [500, 700] }, newId())).charged).toBe(0);

    const day = businessDay(Date.now(), zone);
    const expected = [
      {
        nodeId: serving.id,
        day,
        reports: 2,
        rawBytes: 1000 + 3000 + 100 + 100 + 200 + 600,
        anomalyBytes: 0,
        chargedBytes: 6000 + 600 + 1200,
        expectedChargedBytes: 7800,
        flagged: false,
      },
      {
        nodeId: stranger.id,
        day,
        reports: 1,
        rawBytes: 0,
        anomalyBytes: 1200,
        chargedBytes: 0,
        expectedChargedBytes: 0,
        flagged: false,
      },
    ].sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
    expect(await cli.json<unknown[]>(["node", "reconcile"])).toEqual(expected);
    expect(await cli.json<unknown[]>(["node", "reconcile", "--node", serving.id, "--day", day])).toEqual(
      expected.filter((row) => row.nodeId === serving.id),
    );
    expect(await cli.json<unknown[]>(["node", "reconcile", "--day", "2001-01-01"])).toEqual([]);
    const text = await cli.ok(["node", "reconcile", "--node", serving.id]);
    expect(text.split("\n")[1]?.split(/\s{2,}/)).toEqual([
      day,
      serving.id,
      "2",
      "5000",
      "0",
      "7800",
      "7800",
      "0.000%",
    ]);
    // The charges match: the scan tells nobody.
    await Bun.sleep(400);
    expect(await outboxFor(serving.id)).toEqual([]);

    // A divergence made by hand: 100 bytes more charged than the raw bytes and the multipliers give.
    await server.context.db.run(
      "UPDATE node_reconcile_days SET charged_bytes = charged_bytes + 100 WHERE agent_id = ?",
      serving.id,
    );
    const flagged = await cli.json<{ nodeId: string; flagged: boolean; chargedBytes: number }[]>([
      "node",
      "reconcile",
    ]);
    expect(flagged.find((row) => row.nodeId === serving.id)).toMatchObject({
      chargedBytes: 7900,
      flagged: true,
    });
    expect(flagged.find((row) => row.nodeId === stranger.id)?.flagged).toBe(false);
    expect(await cli.ok(["node", "reconcile", "--node", serving.id])).toContain("FLAGGED");

    const api = await admin.client.call<ReconcileDay[]>("/api/admin/agents/reconcile", { id: serving.id });
    expect(api.code).toBe(0);
    expect(api.data?.[0]).toMatchObject({
      day,
      chargedBytes: 7900,
      expectedChargedBytes: 7800,
      flagged: true,
    });

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(divergenceOf(metrics, serving.id)).toBeCloseTo((100 - (3 + 2) / 2) / 7800, 9);
    expect(divergenceOf(metrics, stranger.id)).toBe(0);

    // Told once per node and day, however many scans pass.
    for (let i = 0; i < 100 && (await outboxFor(serving.id)).length === 0; i++) await Bun.sleep(50);
    await Bun.sleep(400);
    const told = await outboxFor(serving.id);
    expect(told).toHaveLength(1);
    expect(told[0]?.chat_id).toBe(4343);
    expect(told[0]?.text).toContain("对账不符");
    expect(told[0]?.text).toContain(day);
    expect(await outboxFor(stranger.id)).toEqual([]);
  });

  test("only admins may read a node's reconciliation", async () => {
    const node = await nodeWithLine("对账 C", 1);
    const customerClient = (await loggedInClient(server)).client;
    expect((await customerClient.call("/api/admin/agents/reconcile", { id: node.id })).code).not.toBe(0);
    const admin = (await loggedInClient(server, { role: "admin" })).client;
    const answer = await admin.call<ReconcileDay[]>("/api/admin/agents/reconcile", { id: node.id });
    expect(answer).toMatchObject({ code: 0, data: [] });
  });
});

describe("the expected figure", () => {
  /** Applies one report at now through the push route's function; answers what it charged. */
  async function report(node: AgentRow, usage: Record<number, [number, number]>) {
    const checked = checkPush(JSON.stringify(usage));
    if (!checked.ok) throw new Error(checked.message);
    return (
      await applyNodeReport(server.context, {
        agentId: node.id,
        reportId: newId(),
        inbound: "vmesh_tcp",
        usage: checked.value,
        now: Date.now(),
      })
    ).charged;
  }

  test("the per-report minimum and the customer's own scale are recomputed exactly", async () => {
    const node = await nodeWithLine("对账 最低", 1.5);
    const small = await customer();
    const scaled = await customer();
    await setUserColumns(server.context.db, scaled.id, { scale: 1.3 });
    await pullUserListOf(server, node.id);
    await server.context.settings.update({ minestTrafficSpend: 0.01 });
    try {
      const minimum = Math.round(0.01 * 1024 * 1024);
      const charged = await report(node, {
        [small.node_uid]: [10, 20],
        [scaled.node_uid]: [1_000_001, 333_333],
      });
      // 30 bytes × 1.5 is below the minimum; (1 333 334 × 1.5 × 1.3) is not.
      expect(charged).toBe(minimum + Math.round(1_333_334 * 1.5 * 1.3));
      const [day] = await reconcileDays(server.context, { nodeId: node.id });
      expect(day).toMatchObject({
        reports: 1,
        chargedBytes: charged,
        expectedChargedBytes: charged,
        flagged: false,
      });
    } finally {
      await server.context.settings.update({ minestTrafficSpend: 0 });
    }
  });

  test("each charge rounded to a byte is no divergence: many one-byte reports at scale 1.5 are not flagged", async () => {
    const node = await nodeWithLine("对账 舍入", 1.5);
    const one = await customer();
    await pullUserListOf(server, node.id);
    let charged = 0;
    for (let i = 0; i < 10; i++) charged += await report(node, { [one.node_uid]: [1, 0] });
    // Each report charges round(1.5) = 2 bytes; the raw bytes give 15.
    expect(charged).toBe(20);
    const [day] = await reconcileDays(server.context, { nodeId: node.id });
    expect(day).toMatchObject({ reports: 10, chargedBytes: 20, expectedChargedBytes: 15, flagged: false });
    // One byte more than rounding explains is flagged.
    await server.context.db.run(
      "UPDATE node_reconcile_days SET charged_bytes = 21 WHERE agent_id = ?",
      node.id,
    );
    expect((await reconcileDays(server.context, { nodeId: node.id }))[0]?.flagged).toBe(true);
  });
});

test("deleting a node deletes its reconciliation rows", async () => {
  const node = await nodeWithLine("对账 删除", 1);
  const one = await customer();
  await pullUserListOf(server, node.id);
  await push(node, { [one.node_uid]: [10, 10] }, newId());
  const count = async (table: string) =>
    (
      (await server.context.db.get(`SELECT COUNT(*) AS n FROM ${table} WHERE agent_id = ?`, node.id)) as {
        n: number;
      }
    ).n;
  expect([await count("node_reconcile_days"), await count("node_reconcile_scales")]).toEqual([1, 1]);
  await deleteAgent(server.context, node.id);
  expect([await count("node_reconcile_days"), await count("node_reconcile_scales")]).toEqual([0, 0]);
});

describe("the day boundary", () => {
  test("a report is counted on the business day the panel received it, to the millisecond", async () => {
    const node = await nodeWithLine("对账 午夜", 1);
    const one = await customer();
    await pullUserListOf(server, node.id);
    const today = businessDay(Date.now(), zone);
    const midnight = endOfBusinessDay(today, zone);
    const report = (usage: [number, number], now: number) =>
      applyNodeReport(server.context, {
        agentId: node.id,
        reportId: newId(),
        inbound: "vmesh_tcp",
        usage: (checkPush(JSON.stringify({ [one.node_uid]: usage })) as { ok: true; value: never }).value,
        now,
      });
    // Received in the last millisecond of the day, and in the first of the next.
    await report([10, 20], midnight);
    await report([30, 40], midnight + 1);
    const days = await server.context.db.all<{ day: string; raw_upload: number; raw_download: number }>(
      "SELECT day, raw_upload, raw_download FROM node_reconcile_days WHERE agent_id = ? ORDER BY day",
      node.id,
    );
    expect(days).toEqual([
      { day: today, raw_upload: 10, raw_download: 20 },
      { day: businessDay(midnight + 1, zone), raw_upload: 30, raw_download: 40 },
    ]);
  });

  test("a node whose clock is minutes off changes nothing: the panel's receive time decides the day", async () => {
    const node = await nodeWithLine("对账 时钟", 1);
    const one = await customer();
    await pullUserListOf(server, node.id);
    // What a node could claim: a Date header 20 minutes ahead, another 20 minutes behind. The push
    // body has no time at all ({user: [upload, download]}); any other field is refused.
    for (const offset of [20, -20]) {
      const claimed = new Date(Date.now() + offset * 60_000).toUTCString();
      await push(node, { [one.node_uid]: [1000, 1000] }, newId(), { date: claimed });
    }
    const received = businessDay(Date.now(), zone);
    const rows = await ferryIn(server.dataDir).json<unknown[]>(["node", "reconcile", "--node", node.id]);
    expect(rows).toEqual([
      {
        nodeId: node.id,
        day: received,
        reports: 2,
        rawBytes: 4000,
        anomalyBytes: 0,
        chargedBytes: 4000,
        expectedChargedBytes: 4000,
        flagged: false,
      },
    ]);
  });
});

async function outboxFor(nodeId: string) {
  return await server.context.db.all<{ chat_id: number; text: string }>(
    "SELECT chat_id, text FROM telegram_outbox WHERE dedupe_key LIKE ?",
    `admin:reconcile:${nodeId}:%`,
  );
}
