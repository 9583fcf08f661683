/**
 * `ferry replicas [--json]` as a real process against a running server's database (issue 28 item
 * 5): each replica with its address, version, times and the leases it holds; one not seen for 30 s
 * is listed as 离线 (and still in --json).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import pkg from "../package.json" with { type: "json" };
import { JOB_NAMES } from "../src/cluster/leases.ts";
import type { TestServer } from "../tests/harness.ts";
import { expectHelp, type FerryIn, startWithCli } from "./test-helpers.ts";

let server: TestServer;
let cli: FerryIn;

beforeAll(async () => ({ server, cli } = await startWithCli()));
afterAll(() => server?.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test("replicas has --help", async () => {
  await expectHelp([[["replicas"], ["--data", "--json"]]]);
});

test("--json: every replica as {id, host, port, pid, version, startedAt, lastSeen, leases}", async () => {
  const [replica] = await cli.json<Record<string, unknown>[]>(["replicas"]);
  expect(replica).toEqual({
    id: server.replica.id,
    host: server.replica.host,
    port: server.port,
    pid: process.pid,
    version: pkg.version,
    startedAt: expect.stringMatching(ISO),
    lastSeen: expect.stringMatching(ISO),
    leases: [...JOB_NAMES].sort(),
  });
  expect(Date.parse(replica?.lastSeen as string)).toBeGreaterThanOrEqual(
    Date.parse(replica?.startedAt as string),
  );
  expect(Math.abs(Date.parse(replica?.lastSeen as string) - Date.now())).toBeLessThan(60_000);
});

test("a replica not seen for more than 30 s is 离线 in the table and still listed in --json", async () => {
  const lastSeen = Date.now() - 45_000;
  await server.context.db.run(
    `INSERT INTO replicas (id, host, port, pid, version, started_time, last_seen)
       VALUES ('0badc0ffee000000', 'web-2', 3001, 4242, '0.0.9', ?, ?)`,
    lastSeen - 3_600_000,
    lastSeen,
  );
  try {
    const listed = await cli.json<{ id: string; lastSeen: string; leases: string[] }[]>(["replicas"]);
    expect(listed.map((r) => [r.id, r.leases.length])).toEqual([
      ["0badc0ffee000000", 0],
      [server.replica.id, JOB_NAMES.length],
    ]);
    expect(listed[0]?.lastSeen).toBe(new Date(lastSeen).toISOString());

    const lines = (await cli.ok(["replicas"])).trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^id\s+host\s+port\s+pid\s+version\s+started\s+last seen\s+status\s+leases$/);
    expect(lines[1]).toMatch(/^0badc0ffee000000\s+web-2\s+3001\s+4242\s+0\.0\.9\s.*\s离线\s+-$/);
    expect(lines[2]).toStartWith(server.replica.id);
    expect(lines[2]).toContain(" 在线 ");
    expect(lines[2]).toEndWith([...JOB_NAMES].sort().join(", "));
  } finally {
    await server.context.db.run("DELETE FROM replicas WHERE id = '0badc0ffee000000'");
  }
});
