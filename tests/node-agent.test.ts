/**
 * Issue 5's end-to-end proof, all on 127.0.0.1: the real ferry panel, `ferry node run` as its own
 * process driving Debian's v2ray, and v2ray clients built from the customers' real `v2ray`
 * subscriptions (decoded as v2rayN decodes them).
 *
 *   - 5 MB through each line lowers the customer's traffic by the scaled amount (line scale, user
 *     scale, traffic_spend_scale; within 1 %) within two push intervals; spend record, usage_days
 *     and line heat follow.
 *   - A customer whose traffic ran out is dropped at the next sync and refused; after a
 *     subscription reset the old credentials are refused and the new subscription works; the
 *     core is never restarted for these (users change live).
 *   - The panel stopped during a download and started again: nothing lost, nothing counted twice.
 *   - The agent killed (-9) with unsent reports on disk and started again while the panel is
 *     still down: it reads and replaces the core it left behind, serves from its last config, and
 *     sends every report once when the panel is back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import pkg from "../package.json" with { type: "json" };
import { jsonValuesSql, tx } from "../src/db/db.ts";
import { GB, MB } from "../src/lib/traffic.ts";
import { changeTraffic } from "../src/modules/ledger/service.ts";
import type { AgentLine } from "../src/modules/line/schema.ts";
import type { Agent } from "../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import type { UserRow } from "../src/modules/user/row.ts";
import type { AgentStatus } from "../src/node-program/control.ts";
import type { Report } from "../src/node-program/spool.ts";
import { startServer } from "../src/server.ts";
import { type ApiClient, loggedInClient, type TestServer } from "./harness.ts";
import {
  corePidIn,
  logsIn,
  nodeProgramStatus,
  pollUntil,
  processAlive,
  startNodeProgram,
} from "./node-program.ts";
import { createTestDatabase, type TestDatabase } from "./pg.ts";
import {
  clientConfig,
  decodeSubscription,
  fetchThrough,
  freePort,
  freePortRun,
  type Outcome,
  skipWithoutV2ray,
  V2rayProcesses,
} from "./v2ray.ts";

const SKIP = skipWithoutV2ray("tests/node-agent.test.ts");

const INTERVAL_S = 5; // trafficStasticDuration and updateV2rayDuration (their minimum)
const SCALES = { tcpLine: 1.5, wsLine: 2, user: 1.2, download: 1.25, upload: 2 };
const FILE = randomBytes(5 * MB);
/** What v2ray counts beyond the body: the response headers, the request going up. */
const HEADER_ALLOWANCE = 1024;
/** Slack for two busy cores on top of the protocol's own deadlines. */
const SLACK_MS = 4_000;
const REFUSED_TIMEOUT_MS = 2_500;
const DELIVER_TIMEOUT_MS = 30_000;

let root = "";
let panelDir = "";
/** The panel's PostgreSQL database on the PostgreSQL run (it outlives a stopped panel), else null. */
let panelDatabase: TestDatabase | null = null;
let agentDir = "";
let panelPort = 0;
let server: TestServer | null = null;
let admin: ApiClient;
let alice: { client: ApiClient; user: UserRow };
let bob: { client: ApiClient; user: UserRow };
let node: AgentRow;
let lineIds: { tcp: string; ws: string };
let apiPort = 0;
let ctrlPort = 0;
let agent: Subprocess | null = null;
let agentRuns = 0;
let v2ray: V2rayProcesses;
let files: ReturnType<typeof Bun.serve>;
let fileUrl = "";
let slowUrl = "";

// ---- the panel ----------------------------------------------------------------------------

async function startPanel(): Promise<TestServer> {
  const running = await startServer({
    dataDir: panelDir,
    databaseUrl: panelDatabase?.url,
    host: "127.0.0.1",
    port: panelPort,
    rateLimitScale: 1000,
  });
  server = { ...running, dataDir: panelDir, close: () => running.stop() };
  return server;
}

async function stopPanel() {
  const running = server;
  server = null;
  await running?.stop();
}

const db = () => {
  if (!server) throw new Error("the panel is stopped");
  return server.context.db;
};

async function ok<T>(client: ApiClient, path: string, payload: unknown = {}): Promise<T> {
  const answer = await client.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

async function giveTraffic(userId: string, bytes: number) {
  const ctx = (server as TestServer).context;
  await tx(
    ctx.db,
    async () =>
      await changeTraffic(ctx.db, {
        userId,
        type: "buy",
        desc: "测试流量",
        traffic: bytes,
        now: Date.now(),
        timeZone: await ctx.settings.get("timezone"),
      }),
  );
}

const trafficOf = async (userId: string) =>
  ((await db().get("SELECT traffic FROM balances WHERE user_id = ?", userId)) as { traffic: number }).traffic;

/** What the panel recorded for a user over all days: raw bytes and the charge by source. */
async function usageOf(userId: string) {
  return (await db().get<{ upload: number; download: number; charged: number; rows: number }>(
    `SELECT COALESCE(SUM(upload), 0) AS upload, COALESCE(SUM(download), 0) AS download,
         COALESCE(SUM(quota + permanent + overdraft), 0) AS charged, COUNT(*) AS rows
       FROM usage_days WHERE user_id = ?`,
    userId,
  )) as { upload: number; download: number; charged: number; rows: number };
}

const heatOf = async (lineId: string) =>
  ((await db().get("SELECT hot FROM agent_lines WHERE id = ?", lineId)) as { hot: number }).hot;

// ---- the agent ----------------------------------------------------------------------------

function startAgent() {
  agentRuns += 1;
  agent = startNodeProgram({
    panelUrl: `http://127.0.0.1:${panelPort}`,
    node,
    dataDir: agentDir,
    apiPort,
    log: join(root, `agent-${agentRuns}.log`),
  });
}

const agentLog = () => logsIn(root, "agent-");

const agentStatus = () => nodeProgramStatus(ctrlPort, node.api_token);

const corePid = () => corePidIn(agentDir);

const spooled = (): Report[] => {
  const dir = join(agentDir, "spool");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(dir, name), "utf8")) as Report);
};

/** Polls `probe` until `done` holds; past the deadline fails with the last value and the agent's log. */
const until = <T>(what: string, withinMs: number, probe: () => T | Promise<T>, done: (value: T) => boolean) =>
  pollUntil(what, withinMs, probe, done, { everyMs: 100, context: agentLog });

/**
 * Whether both lines refuse the client in the same probe. A fetch that timed out on a busy machine
 * also counts as failed, so one line failing alone is not taken as the sync having happened.
 */
async function refusedOnBoth(client: Client): Promise<boolean> {
  const tcp = await fetchThrough(client.ports["本机 TCP"] as number, fileUrl, REFUSED_TIMEOUT_MS);
  if (tcp.kind !== "failed") return false;
  const ws = await fetchThrough(client.ports["本机 WS"] as number, fileUrl, REFUSED_TIMEOUT_MS);
  return ws.kind === "failed";
}

// ---- clients ------------------------------------------------------------------------------

interface Client {
  /** The http proxy port per line name. */
  ports: Record<string, number>;
  process: Subprocess;
}

/** Fetches the customer's v2ray subscription, decodes it as v2rayN does and runs a client for it. */
async function clientFor(name: string, user: UserRow, userkey: string): Promise<Client> {
  const response = await fetch(`${(server as TestServer).url}/api/subscript/v2ray/${user.id}/${userkey}`);
  expect(response.status).toBe(200);
  const shares = decodeSubscription(await response.text());
  expect(shares.map((share) => share.name).sort()).toEqual(["本机 TCP [1.5x]", "本机 WS [2x]"]);
  const ports = await Promise.all(shares.map(() => freePort()));
  const process = await v2ray.start(name, clientConfig(shares, ports), ports);
  const byName = Object.fromEntries(shares.map((share, index) => [share.name.split(" [")[0], ports[index]]));
  return { ports: byName as Record<string, number>, process };
}

const intact = (outcome: Outcome) =>
  outcome.kind === "delivered"
    ? outcome.bytes.equals(FILE) || `${outcome.bytes.length} other bytes`
    : outcome.reason;

const charge = (down: number, lineScale: number) => down * SCALES.download * lineScale * SCALES.user;

function expectWithinOnePercent(actual: number, expected: number) {
  expect({ actual, off: Math.abs(actual - expected) / expected <= 0.01 }).toEqual({ actual, off: true });
}

// ---- setup --------------------------------------------------------------------------------

beforeAll(async () => {
  if (SKIP) return;
  root = mkdtempSync(join(tmpdir(), "ferry-node-agent-"));
  panelDir = join(root, "panel");
  panelDatabase = await createTestDatabase();
  agentDir = join(root, "node");
  mkdirSync(panelDir);
  v2ray = new V2rayProcesses(root);
  panelPort = await freePort();
  apiPort = await freePort();
  ctrlPort = await freePort();
  const nodePort = await freePortRun(2);

  const slow = () => {
    let sent = 0;
    const chunk = 256 * 1024;
    return new ReadableStream({
      async pull(controller) {
        if (sent >= FILE.length) return controller.close();
        await Bun.sleep(150);
        controller.enqueue(FILE.subarray(sent, sent + chunk));
        sent += chunk;
      },
    });
  };
  files = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) =>
      new URL(request.url).pathname === "/slow.bin"
        ? new Response(slow(), { headers: { "content-length": String(FILE.length) } })
        : new Response(FILE),
  });
  fileUrl = `http://127.0.0.1:${files.port}/file.bin`;
  slowUrl = `http://127.0.0.1:${files.port}/slow.bin`;

  const panel = await startPanel();
  admin = (await loggedInClient(panel, { role: "admin" })).client;
  alice = await loggedInClient(panel);
  bob = await loggedInClient(panel);
  await ok(admin, "/api/admin/config/set_config", {
    trafficStasticDuration: INTERVAL_S,
    updateV2rayDuration: INTERVAL_S,
    traffic_spend_scale: SCALES.download,
    upload_traffic_spend_scale: SCALES.upload,
  });
  await giveTraffic(alice.user.id, 10 * GB);
  await giveTraffic(bob.user.id, 3 * MB);
  await db().run("UPDATE users SET scale = ? WHERE id = ?", SCALES.user, alice.user.id);

  const made = await ok<Agent>(admin, "/api/admin/agents/update", {
    name: "本机节点",
    type: "v2ray",
    ip: "127.0.0.1",
    ctrl_port: ctrlPort,
    zz_port: nodePort,
    port: nodePort,
    public_port: nodePort,
    serverType: "ubuntu_x86",
  });
  const tcp = await ok<AgentLine>(admin, "/api/admin/agent_line/update", {
    name: "本机 TCP",
    agentID: made._id,
    protocol: "vmesh_tcp",
    bridge: "none",
    scale: SCALES.tcpLine,
  });
  const ws = await ok<AgentLine>(admin, "/api/admin/agent_line/update", {
    name: "本机 WS",
    agentID: made._id,
    protocol: "vmesh_ws",
    bridge: "none",
    scale: SCALES.wsLine,
  });
  lineIds = { tcp: tcp._id, ws: ws._id };
  node = (await findAgentRow(panel.context, made._id)) as AgentRow;

  startAgent();
  await until(
    "the agent runs the core with both users",
    20_000,
    agentStatus,
    (status) => status?.core === "running" && status.users === 2,
  );
}, 60_000);

afterAll(async () => {
  if (agent) {
    agent.kill("SIGKILL");
    await agent.exited;
  }
  // The core outlives a killed agent: stop it by its pid file.
  const pid = root && existsSync(agentDir) ? corePid() : 0;
  if (processAlive(pid)) process.kill(pid, "SIGKILL");
  await v2ray?.stopAll();
  files?.stop(true);
  await stopPanel();
  await panelDatabase?.drop();
  if (root) rmSync(root, { recursive: true, force: true });
});

// ---- the proof ----------------------------------------------------------------------------

describe.skipIf(SKIP)("ferry node run with Debian's v2ray", () => {
  let aliceClient: Client;
  let aliceKey = "";

  test("the agent reports in: version, normal status, its users", async () => {
    const row = (await findAgentRow((server as TestServer).context, node.id)) as AgentRow;
    expect(row.agent_version).toBe(pkg.version);
    const status = (await agentStatus()) as AgentStatus;
    expect(status).toMatchObject({ version: pkg.version, users: 2, core: "running", pendingReports: 0 });
  });

  test("5 MB through each line lowers the traffic by the scaled amount within two push intervals", async () => {
    aliceKey = alice.user.userkey;
    aliceClient = await clientFor("alice", alice.user, aliceKey);
    const before = {
      traffic: await trafficOf(alice.user.id),
      tcp: await heatOf(lineIds.tcp),
      ws: await heatOf(lineIds.ws),
    };

    const outcomes = await Promise.all([
      fetchThrough(aliceClient.ports["本机 TCP"] as number, fileUrl, DELIVER_TIMEOUT_MS),
      fetchThrough(aliceClient.ports["本机 WS"] as number, fileUrl, DELIVER_TIMEOUT_MS),
    ]);
    expect(outcomes.map(intact)).toEqual([true, true]);

    const expected = charge(FILE.length, SCALES.tcpLine) + charge(FILE.length, SCALES.wsLine);
    const charged = await until(
      "the charge reaches the panel",
      2 * INTERVAL_S * 1000 + SLACK_MS,
      async () => before.traffic - (await trafficOf(alice.user.id)),
      (value) => value >= expected * 0.99,
    );
    expectWithinOnePercent(charged, expected);

    const usage = await usageOf(alice.user.id);
    expect(usage.rows).toBeGreaterThan(0);
    expect(usage.download).toBeGreaterThanOrEqual(2 * FILE.length);
    expect(usage.download).toBeLessThan(2 * (FILE.length + HEADER_ALLOWANCE));
    expect(usage.upload).toBeGreaterThan(0);
    expect(usage.upload).toBeLessThan(2 * HEADER_ALLOWANCE);
    expect(usage.charged).toBe(charged);

    // One spend record per business day (two if the test ran across the day's start).
    const spend = await db().get<{ records: number; change: number }>(
      "SELECT COUNT(*) AS records, SUM(traffic_change) AS change FROM traffic_records WHERE user_id = ? AND type = 'spend'",
      alice.user.id,
    );
    expect(spend?.records).toBeGreaterThan(0);
    expect(spend?.change).toBe(-charged);

    // Heat is raw bytes, each on the line it went through.
    expect((await heatOf(lineIds.tcp)) - before.tcp).toBeGreaterThanOrEqual(FILE.length);
    expect((await heatOf(lineIds.tcp)) - before.tcp).toBeLessThan(FILE.length + 2 * HEADER_ALLOWANCE);
    expect((await heatOf(lineIds.ws)) - before.ws).toBeGreaterThanOrEqual(FILE.length);
  }, 60_000);

  test("a customer with no traffic left is dropped at the next sync; others keep going, the core keeps running", async () => {
    const bobClient = await clientFor("bob", bob.user, bob.user.userkey);
    const pid = corePid();
    expect(
      intact(await fetchThrough(bobClient.ports["本机 TCP"] as number, fileUrl, DELIVER_TIMEOUT_MS)),
    ).toBe(true);

    await until(
      "bob's traffic is used up",
      2 * INTERVAL_S * 1000 + SLACK_MS,
      async () => await trafficOf(bob.user.id),
      (left) => left === 0,
    );
    await until(
      "bob is refused on both lines",
      INTERVAL_S * 1000 + SLACK_MS + 2 * REFUSED_TIMEOUT_MS,
      () => refusedOnBoth(bobClient),
      (refused) => refused,
    );
    expect(
      intact(await fetchThrough(aliceClient.ports["本机 TCP"] as number, fileUrl, DELIVER_TIMEOUT_MS)),
    ).toBe(true);
    expect(corePid()).toBe(pid);
    expect((await agentStatus())?.users).toBe(1);
    await v2ray.stop(bobClient.process);
  }, 60_000);

  test("after reset_userkey the old credentials are refused at the next sync and the new subscription works", async () => {
    const pid = corePid();
    const { userkey } = await ok<{ userkey: string }>(alice.client, "/api/user/reset_userkey");
    expect(userkey).not.toBe(aliceKey);

    await until(
      "the old credentials are refused on both lines",
      INTERVAL_S * 1000 + SLACK_MS + 2 * REFUSED_TIMEOUT_MS,
      () => refusedOnBoth(aliceClient),
      (refused) => refused,
    );
    await v2ray.stop(aliceClient.process);

    aliceKey = userkey;
    aliceClient = await clientFor("alice-new", alice.user, aliceKey);
    const outcomes = await Promise.all([
      fetchThrough(aliceClient.ports["本机 TCP"] as number, fileUrl, DELIVER_TIMEOUT_MS),
      fetchThrough(aliceClient.ports["本机 WS"] as number, fileUrl, DELIVER_TIMEOUT_MS),
    ]);
    expect(outcomes.map(intact)).toEqual([true, true]);
    expect(corePid()).toBe(pid);
  }, 60_000);

  /**
   * The customer's totals once all traffic so far is charged: at least `minimumDownload` counted,
   * nothing pending at the agent, and no change over a whole push interval (the last counters read).
   */
  async function settled(minimumDownload: number) {
    const totals = async () => ({
      ...(await usageOf(alice.user.id)),
      traffic: await trafficOf(alice.user.id),
    });
    let last = { at: Date.now(), value: "" };
    return until(
      "the traffic so far is charged",
      4 * INTERVAL_S * 1000 + SLACK_MS,
      async () => {
        const value = { ...(await totals()), pending: (await agentStatus())?.pendingReports };
        const key = JSON.stringify(value);
        if (key !== last.value) last = { at: Date.now(), value: key };
        return { ...value, quietMs: Date.now() - last.at };
      },
      (value) =>
        value.pending === 0 && value.download >= minimumDownload && value.quietMs > INTERVAL_S * 1000 + 500,
    );
  }

  test("the panel stopped during a download and started again: nothing lost, nothing counted twice", async () => {
    const before = await settled(0);
    const reportsBefore = (await db().get("SELECT COUNT(*) AS n FROM node_reports")) as { n: number };

    const download = fetchThrough(aliceClient.ports["本机 TCP"] as number, slowUrl, DELIVER_TIMEOUT_MS);
    await Bun.sleep(500);
    await stopPanel();
    expect(intact(await download)).toBe(true);
    await until(
      "reports wait on disk",
      2 * INTERVAL_S * 1000 + SLACK_MS,
      agentStatus,
      (status) => (status?.pendingReports ?? 0) > 0,
    );
    await startPanel();

    const after = await settled(before.download + FILE.length);
    const moved = after.download - before.download;
    expect(moved).toBeGreaterThanOrEqual(FILE.length);
    expect(moved).toBeLessThan(FILE.length + HEADER_ALLOWANCE);
    expectWithinOnePercent(before.traffic - after.traffic, charge(FILE.length, SCALES.tcpLine));
    expect(after.charged - before.charged).toBe(before.traffic - after.traffic);
    // The reports are on the panel, each id once (a resend is answered as a duplicate, not applied).
    const reportsAfter = (await db().get("SELECT COUNT(*) AS n FROM node_reports")) as { n: number };
    expect(reportsAfter.n).toBeGreaterThan(reportsBefore.n);
  }, 90_000);

  test("the agent killed -9 with unsent reports on disk: restarted during the outage it serves from its last config, then sends them once", async () => {
    const before = await settled(0);
    await stopPanel();
    expect(
      intact(await fetchThrough(aliceClient.ports["本机 TCP"] as number, fileUrl, DELIVER_TIMEOUT_MS)),
    ).toBe(true);
    const downloaded = (reports: Report[]) =>
      reports.reduce((sum, report) => sum + (report.usage[String(alice.user.node_uid)]?.[1] ?? 0), 0);
    const waiting = await until(
      "the download's reports are on disk",
      2 * INTERVAL_S * 1000 + SLACK_MS,
      spooled,
      (reports) => downloaded(reports) >= FILE.length,
    );
    const oldCore = corePid();
    (agent as Subprocess).kill("SIGKILL");
    await (agent as Subprocess).exited;
    expect(processAlive(oldCore)).toBe(true); // the core outlives its agent

    // Still no panel: the new agent reads the old core, replaces it and serves the last users.
    startAgent();
    await until(
      "the restarted agent runs its own core",
      20_000,
      agentStatus,
      (status) => status?.core === "running",
    );
    expect(processAlive(oldCore)).toBe(false);
    expect(corePid()).not.toBe(oldCore);
    expect((await agentStatus())?.pendingReports).toBeGreaterThanOrEqual(waiting.length);
    expect(
      intact(await fetchThrough(aliceClient.ports["本机 TCP"] as number, fileUrl, DELIVER_TIMEOUT_MS)),
    ).toBe(true);

    await startPanel();
    const after = await settled(before.download + 2 * FILE.length);
    const ids = waiting.map((report) => report.id);
    const applied = (
      await db().all<{ report_id: string }>(
        `SELECT report_id FROM node_reports WHERE report_id IN ${jsonValuesSql(db(), "?", "text")}`,
        JSON.stringify(ids),
      )
    ).map((row) => row.report_id);
    expect(applied.sort()).toEqual([...ids].sort());
    expect(spooled()).toEqual([]);

    // Both downloads, each once.
    const moved = after.download - before.download;
    expect(moved).toBeGreaterThanOrEqual(2 * FILE.length);
    expect(moved).toBeLessThan(2 * (FILE.length + HEADER_ALLOWANCE));
    expectWithinOnePercent(before.traffic - after.traffic, 2 * charge(FILE.length, SCALES.tcpLine));
  }, 90_000);
});
