/**
 * Issue 26 §25, §26: the database cannot be written (disk full) under load. stderr gets one line
 * per cause, never a stack per request; `ferry_db_write_failures_total` counts every failed write
 * (envelope calls, node pushes and pulls); /healthz answers 503 naming the cause while reads are
 * still served; when space returns the next write goes through and /healthz is "ok" again. SIGTERM
 * while writes fail still exits 0, closes the database and removes ferry.pid, even though the WAL
 * checkpoint fails; a restart finds every acknowledged write.
 *
 * The faults are real, injected at SQLite's or the kernel's level, never in our code:
 * - in-process: `PRAGMA max_page_count` on the server's own connection, after a VACUUM, so every
 *   write that needs a page fails with SQLITE_FULL, exactly what a full disk gives;
 * - `ferry serve` as a child process: a file-size limit (RLIMIT_FSIZE, util-linux `prlimit --pid`)
 *   lowered and raised on the running server, so its writes to ferry.db and its WAL fail
 *   (SQLITE_IOERR_WRITE: EFBIG; Bun ignores SIGXFSZ) and then go through again.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ferry, startServe } from "../cli/test-helpers.ts";
import { TELL_INTERVAL_MS } from "../src/db/write-health.ts";
import { ApiClient, loggedInClient, startTestServer, type TestServer } from "./harness.ts";

/** The samples of ferry_db_write_failures_total by cause. */
async function writeFailures(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const samples: Record<string, number> = {};
  for (const [, cause, value] of text.matchAll(
    /^ferry_db_write_failures_total\{cause="([^"]+)"\} (\d+)$/gm,
  )) {
    samples[cause as string] = Number(value);
  }
  expect(text).toContain("# TYPE ferry_db_write_failures_total counter");
  return samples;
}

async function health(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/healthz`);
  return { status: response.status, body: await response.text() };
}

/** Lines a cause may be told in over `elapsedMs`: the first at once, then at most one a minute. */
const linesAllowed = (elapsedMs: number) => 1 + Math.floor(elapsedMs / TELL_INTERVAL_MS);

describe("in-process: SQLITE_FULL on the server's own connection", () => {
  let server: TestServer;
  let admin: ApiClient;
  beforeAll(async () => {
    server = await startTestServer();
    admin = (await loggedInClient(server, { role: "admin" })).client;
  });
  afterAll(() => server?.close());

  /** A 12 KB announcement: saving it needs new pages, which a full database cannot give. */
  const bigNotice = (i: number) => ({ notice_content: `${"公告".repeat(1990)}${i}` });

  test("under 200 writes: one line naming SQLITE_FULL, the counter, /healthz 503; writes recover when space returns", async () => {
    expect(await health(server.url)).toEqual({ status: 200, body: "ok" });
    expect(await writeFailures(server.url)).toEqual({});

    const db = server.context.db;
    await db.exec("VACUUM");
    const pages = (await db.get<{ page_count: number }>("PRAGMA page_count"))?.page_count as number;
    await db.exec(`PRAGMA max_page_count = ${pages}`);

    const stderr = spyOn(console, "error").mockImplementation(() => {});
    const started = Date.now();
    try {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) => admin.call("/api/admin/config/set_config", bigNotice(i))),
      );
      const elapsed = Date.now() - started;
      expect(new Set(answers.map((answer) => answer.code))).toEqual(new Set([999]));

      const lines = stderr.mock.calls.map((call) => call.map(String).join(" "));
      // One line per cause, each a single line with no stack.
      const full = lines.filter((line) => line.includes("SQLITE_FULL"));
      expect(full.length).toBeGreaterThanOrEqual(1);
      expect(full.length).toBeLessThanOrEqual(linesAllowed(elapsed));
      expect(full[0]).toMatch(
        /^error: database writes failing: SQLITE_FULL \(disk full\) in \/api\/admin\/config\/set_config: database or disk is full/,
      );
      expect(lines.filter((line) => !line.includes("SQLITE_FULL"))).toEqual([]);
      for (const line of lines) expect(line).not.toMatch(/\n|\bat .+:\d+:\d+/);

      expect((await writeFailures(server.url)).SQLITE_FULL).toBeGreaterThanOrEqual(200);
      const failing = await fetch(`${server.url}/healthz`);
      expect(failing.status).toBe(503);
      const failingBody = (await failing.json()) as Record<string, unknown> & {
        failures: number;
        since: string;
      };
      expect(failingBody).toEqual({
        status: "writes failing",
        cause: "SQLITE_FULL",
        meaning: "disk full",
        since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
        failures: expect.any(Number),
      });
      expect(failingBody.failures).toBeGreaterThanOrEqual(200);
      expect(Date.parse(failingBody.since)).toBeGreaterThanOrEqual(started);
      // Reads are still answered.
      expect((await admin.call("/api/admin/config/get")).code).toBe(0);

      // Space returns: the next write goes through, /healthz is ok again and says so once.
      await db.exec("PRAGMA max_page_count = 1073741823");
      expect((await admin.call("/api/admin/config/set_config", bigNotice(-1))).code).toBe(0);
      expect(await health(server.url)).toEqual({ status: 200, body: "ok" });
      expect(await server.context.settings.get("notice_content")).toEndWith("公告-1");
      const after = stderr.mock.calls.slice(lines.length).map((call) => call.map(String).join(" "));
      expect(after).toEqual([
        expect.stringMatching(/^database writes go through again \(\d+ failed before\)$/),
      ]);
    } finally {
      stderr.mockRestore();
      await db.exec("PRAGMA max_page_count = 1073741823");
    }
  });
});

describe("ferry serve as a process: writes fail, recover, and SIGTERM while they fail", () => {
  const root = mkdtempSync(join(tmpdir(), "ferry-disk-full-"));
  const dataDir = join(root, "data");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const limitFileSize = (pid: number, limit: "0" | "unlimited") => {
    const run = Bun.spawnSync(["prlimit", "--pid", String(pid), `--fsize=${limit}:`]);
    expect({ code: run.exitCode, stderr: run.stderr.toString() }).toEqual({ code: 0, stderr: "" });
  };

  test("one line per cause, node pushes and pulls counted, /healthz 503 then ok, SIGTERM exits 0 and removes ferry.pid", async () => {
    const created = await ferry(
      ["user", "create", "--email", "boss@example.com", "--role", "admin", "--data", dataDir],
      {},
      "long-password-1\n",
    );
    expect(created.code).toBe(0);
    const node = JSON.parse(
      (
        await ferry([
          "node",
          "add",
          "--name",
          "满盘",
          "--type",
          "v2ray",
          "--ip",
          "192.0.2.7",
          "--data",
          dataDir,
          "--json",
        ])
      ).stdout,
    ) as { _id: string };
    const { api_token: token } = JSON.parse(
      (await ferry(["node", "show", node._id, "--data", dataDir, "--json"])).stdout,
    ) as { api_token: string };

    const server = await startServe(["--port", "0", "--data", dataDir]);
    let stopped = false;
    try {
      const admin = new ApiClient(server.url);
      expect((await admin.login("boss@example.com", "long-password-1")).code).toBe(0);
      const saveCombo = (name: string) =>
        admin.call<{ _id: string }>("/api/admin/combo/update_combo", {
          name,
          price: 10,
          traffic: 1024,
          vipDuration: 30,
        });
      expect((await saveCombo("满盘之前")).code).toBe(0);
      expect(await health(server.url)).toEqual({ status: 200, body: "ok" });

      limitFileSize(server.pid, "0");
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => saveCombo(`满盘 ${i}`)));
      expect(new Set(answers.map((answer) => answer.code))).toEqual(new Set([999]));
      const afterCalls = (await writeFailures(server.url)).SQLITE_IOERR_WRITE ?? 0;
      expect(afterCalls).toBeGreaterThanOrEqual(100);

      // A node's pull (it records the node's call) and push (it charges traffic) fail and count too.
      const query = `node_id=${node._id}&token=${token}&node_type=v2ray`;
      const pull = await fetch(`${server.url}/api/v1/server/UniProxy/user?${query}`, {
        headers: { "user-agent": "ferry-agent/9.9.9" },
      });
      const push = await fetch(`${server.url}/api/v1/server/UniProxy/push?${query}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": "disk-full-1" },
        body: JSON.stringify({ "1": [1000, 2000] }),
      });
      expect([pull.status, push.status]).toEqual([500, 500]);
      expect((await writeFailures(server.url)).SQLITE_IOERR_WRITE).toBeGreaterThanOrEqual(afterCalls + 2);

      const failing = await fetch(`${server.url}/healthz`);
      expect(failing.status).toBe(503);
      expect(await failing.json()).toMatchObject({ status: "writes failing", cause: "SQLITE_IOERR_WRITE" });
      expect((await admin.call("/api/admin/combo/list")).code).toBe(0);

      // Space returns: writes go through again.
      limitFileSize(server.pid, "unlimited");
      const kept = await saveCombo("空间回来");
      expect(kept.code).toBe(0);
      expect(await health(server.url)).toEqual({ status: 200, body: "ok" });

      // Full again, then SIGTERM: the checkpoint fails, the stop does not.
      limitFileSize(server.pid, "0");
      expect((await saveCombo("又满了")).code).toBe(999);
      const elapsed = Date.now() - started;
      const exit = await server.stop();
      stopped = true;
      expect(exit.code).toBe(0);
      expect(existsSync(join(dataDir, "ferry.pid"))).toBe(false);

      const lines = exit.stderr.trimEnd().split("\n");
      const told = lines.filter((line) =>
        line.startsWith("error: database writes failing: SQLITE_IOERR_WRITE (I/O error)"),
      );
      expect(told.length).toBeGreaterThanOrEqual(1);
      expect(told.length).toBeLessThanOrEqual(linesAllowed(elapsed));
      expect(lines.filter((line) => /^\s+at /.test(line))).toEqual([]);
      expect(lines).toContainEqual(
        expect.stringMatching(/^database writes go through again \(\d+ failed before\)$/),
      );
      expect(lines.at(-1)).toMatch(
        /^error: WAL checkpoint at stop failed \(SQLITE_IOERR_WRITE: .+\); the writes stay in ferry\.db-wal and the next start reads them$/,
      );
      // Nothing but those lines: no stack, no line per failed request.
      expect(lines.length).toBe(told.length + 2);

      // A restart finds the write acknowledged between the two full spells.
      const again = await startServe(["--port", "0", "--data", dataDir]);
      try {
        const client = new ApiClient(again.url);
        expect((await client.login("boss@example.com", "long-password-1")).code).toBe(0);
        const combos = await client.call<{ _id: string; name: string }[]>("/api/admin/combo/list");
        expect(combos.data.map((combo) => combo.name).sort()).toEqual(["满盘之前", "空间回来"].sort());
        expect(combos.data.find((combo) => combo.name === "空间回来")?._id).toBe(kept.data._id);
      } finally {
        expect((await again.stop()).code).toBe(0);
      }
    } finally {
      if (!stopped) {
        limitFileSize(server.pid, "unlimited");
        await server.stop();
      }
    }
  });
});
