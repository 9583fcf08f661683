/**
 * Issue 31 (found by `bun run bench:field`): on PostgreSQL, node reports of several nodes landing
 * on three replicas at once. Each reads a thousand or more customers under SERIALIZABLE, so its
 * predicate locks soon cover whole tables, and two reports at once fail each other (40001); retried,
 * they failed again until the attempts ran out and the node got a 500. Reports now take turns
 * (inTurn: one at a time per process, and across replicas under an advisory lock): every report
 * is applied at its first attempt, and every byte is charged once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../../tests/harness.ts";
import { saveNode } from "../../../tests/nodes.ts";
import { testClusterUrl } from "../../../tests/pg.ts";
import { applyPush, chargeAtFaceValue, pullUserListOf } from "../../../tests/traffic.ts";
import type { PostgresDb } from "../../db/db.ts";
import { GB } from "../../lib/traffic.ts";
import { newId, randomHex } from "../../rpc/ids.ts";
import { lineInput } from "../line/schema.ts";
import { saveLine } from "../line/service.ts";

const ZONE = "Asia/Shanghai";
const NODES = 6;
const NODE_USERS = 1_500;
const ROUNDS = 2;

let replicas: TestServer[] = [];
const nodeIds: string[] = [];
let nodeUids: number[] = [];

/** Customers with 100 GB each, inserted in bulk as the product stores them (balances by the trigger). */
async function seedCustomers(server: TestServer, count: number) {
  const db = server.context.db;
  const now = Date.now();
  await db.tx(async () => {
    for (let start = 0; start < count; start += 500) {
      const rows = Math.min(500, count - start);
      const params: (string | number)[] = [];
      for (let i = 0; i < rows; i++) {
        params.push(
          newId(now),
          `turns-${start + i}@example.com`,
          "x",
          randomHex(16),
          crypto.randomUUID(),
          now,
        );
      }
      await db.run(
        `INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time) VALUES ${Array(rows)
          .fill("(?, ?, ?, ?, ?, ?)")
          .join(", ")}`,
        ...params,
      );
    }
    await db.run("UPDATE balances SET traffic = ?", 100 * GB);
  });
  await db.exec("ANALYZE");
  return (await db.all<{ node_uid: number }>("SELECT node_uid FROM users ORDER BY node_uid")).map(
    (row) => row.node_uid,
  );
}

const retried = () =>
  replicas.reduce((sum, replica) => sum + (replica.context.db as PostgresDb).retriedTransactions, 0);

const spent = async () =>
  Number(
    (await replicas[0]?.context.db.get<{ spent: number }>("SELECT SUM(spend_traffic) AS spent FROM balances"))
      ?.spent ?? 0,
  );

describe.skipIf(!testClusterUrl())("node reports on three PostgreSQL replicas at once", () => {
  beforeAll(async () => {
    const first = await startTestServer();
    replicas = [
      first,
      await startTestServer({ replicaOf: first }),
      await startTestServer({ replicaOf: first }),
    ];
    await chargeAtFaceValue(first, ZONE);
    for (let i = 0; i < NODES; i++) {
      const agent = await saveNode(first, { name: `节点 ${i}`, ip: `203.0.113.${10 + i}` });
      await saveLine(
        first.context,
        lineInput.parse({ name: "TCP", agentID: agent._id, protocol: "vmesh_tcp", bridge: "none", scale: 1 }),
      );
      nodeIds.push(agent._id);
    }
    nodeUids = await seedCustomers(first, NODES * NODE_USERS);
    for (const [i, agentId] of nodeIds.entries()) {
      await pullUserListOf(replicas[i % replicas.length] as TestServer, agentId);
    }
  }, 120_000);
  afterAll(async () => {
    for (const replica of replicas.slice(1)) await replica.close();
    await replicas[0]?.close();
  });

  test("every report is applied at its first attempt and charged exactly once", async () => {
    const before = { retried: retried(), spent: await spent() };
    let expected = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const reports = nodeIds.map((agentId, node) => {
        const usage: Record<number, [number, number]> = {};
        for (const uid of nodeUids.slice(node * NODE_USERS, (node + 1) * NODE_USERS)) {
          usage[uid] = [1_000 + round, 2_000 + node];
          expected += 3_000 + round + node;
        }
        return applyPush(replicas[node % replicas.length] as TestServer, agentId, usage, Date.now());
      });
      const results = await Promise.all(reports);
      expect(results.map((result) => result.users)).toEqual(nodeIds.map(() => NODE_USERS));
    }
    expect(await spent()).toBe(before.spent + expected);
    expect(retried() - before.retried).toBe(0);
  }, 120_000);
});
