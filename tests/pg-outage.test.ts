/**
 * Issue 27 item 1: a PostgreSQL that goes away mid-run gives callers an envelope error (HTTP 200,
 * code 999, no stack), /healthz says the database is unreachable (and /readyz 503), stderr gets one line, and the
 * server answers again by itself once the database is back. Runs in the PostgreSQL pass of
 * `bun run test` on a cluster of its own (scripts/pg-cluster.ts), which it kills and restarts.
 */
import { afterAll, beforeAll, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cluster, startCluster } from "../scripts/pg-cluster.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { ApiClient } from "./harness.ts";
import { testClusterUrl } from "./pg.ts";

const onPostgres = testClusterUrl() !== null;
let cluster: Cluster;
let server: RunningServer;
let dataDir: string;

beforeAll(async () => {
  if (!onPostgres) return;
  cluster = await startCluster();
  dataDir = mkdtempSync(join(tmpdir(), "ferry-outage-"));
  server = await startServer({ dataDir, databaseUrl: cluster.url, host: "127.0.0.1", port: 0 });
  // The throwaway cluster commits without waiting for its WAL (synchronous_commit off), and a halt
  // would lose the newest migrations (then /readyz rightly reports the older schema): write it out.
  await server.context.db.exec("CHECKPOINT");
});

afterAll(async () => {
  if (!onPostgres) return;
  await server?.stop();
  await cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function health(): Promise<{ status: number; body: string }> {
  const response = await fetch(`${server.url}/healthz`);
  return { status: response.status, body: await response.text() };
}

test.skipIf(!onPostgres)(
  "the database goes away and comes back: envelope errors, /healthz 503, then answers again",
  async () => {
    const visitor = new ApiClient(server.url);
    expect((await visitor.call("/api/shop/list")).code).toBe(0);
    expect((await health()).status).toBe(200);

    const stderr = spyOn(console, "error").mockImplementation(() => {});
    try {
      await cluster.halt();
      const response = await visitor.raw("/api/shop/list", JSON.stringify({ data: btoa("{}") }));
      expect(response.status).toBe(200);
      const answer = await visitor.call("/api/shop/list");
      expect({ code: answer.code, msg: answer.msg }).toEqual({ code: 999, msg: "服务器内部错误" });
      const down = await health();
      expect(down.status).toBe(503);
      expect(JSON.parse(down.body)).toMatchObject({
        status: "writes failing",
        meaning: "database unreachable",
      });
      // Not ready for a load balancer either (issue 28); /healthz stays the liveness answer.
      const notReady = await fetch(`${server.url}/readyz`);
      expect([notReady.status, await notReady.text()]).toEqual([503, "database unreachable"]);
      // Told once, in one line naming the cause: no stack per request.
      const lines = stderr.mock.calls.map((call) => call.map(String).join(" "));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error: database writes failing: \S+ \(database unreachable\) in /);
      expect(lines[0]).not.toContain("\n");

      await cluster.resume();
      let code = -1;
      for (let tries = 0; tries < 100 && code !== 0; tries++) {
        code = (await visitor.call("/api/shop/list")).code;
        if (code !== 0) await Bun.sleep(100);
      }
      expect(code).toBe(0);
      expect((await health()).status).toBe(200);
      // Each pooled connection the outage broke fails once more before it is made again.
      let ready = 0;
      for (let tries = 0; tries < 100 && ready !== 200; tries++) {
        ready = (await fetch(`${server.url}/readyz`)).status;
        if (ready !== 200) await Bun.sleep(100);
      }
      expect(ready).toBe(200);
    } finally {
      stderr.mockRestore();
    }
  },
);
