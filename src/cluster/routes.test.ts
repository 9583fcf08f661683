/**
 * `/api/admin/replicas` (集群状态, issue 28 item 5): the admin gets every replica with its leases,
 * checked on the server: visitors get 1002, normal, channel and yunying accounts 1003.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { ApiClient, loggedInClient, startWithAdmin, type TestServer } from "../../tests/harness.ts";
import { Code } from "../rpc/codes.ts";
import { JOB_NAMES } from "./leases.ts";
import { type ReplicaView, replicaView } from "./schema.ts";

let server: TestServer;
let admin: ApiClient;

beforeAll(async () => ({ server, admin } = await startWithAdmin()));
afterAll(() => server?.close());

test("the admin gets this replica with every lease, in the schema's shape", async () => {
  const answer = await admin.call<ReplicaView[]>("/api/admin/replicas");
  expect(answer.code).toBe(0);
  expect(answer.data.map((replica) => replicaView.parse(replica))).toEqual([
    {
      id: server.replica.id,
      host: server.replica.host,
      port: server.port,
      pid: process.pid,
      version: pkg.version,
      startedAt: expect.any(Number),
      lastSeen: expect.any(Number),
      offline: false,
      leases: [...JOB_NAMES].sort(),
    },
  ]);
});

test("everyone else is refused, on the server", async () => {
  expect((await new ApiClient(server.url).call("/api/admin/replicas")).code).toBe(Code.notLoggedIn);
  for (const role of ["normal", "channel", "yunying"] as const) {
    const { client } = await loggedInClient(server, { role });
    const answer = await client.call("/api/admin/replicas");
    expect({ role, code: answer.code, data: answer.data }).toEqual({
      role,
      code: Code.forbidden,
      data: null,
    });
  }
});
