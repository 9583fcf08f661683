/**
 * `bun run bench:field`: the field's own scenarios (issue 31 item 4) against dist/ferry, on SQLite
 * (one server) and, with `--database-url <cluster maintenance URL>`, on PostgreSQL with three
 * replicas on one scratch database (created here, dropped after). Without it only SQLite runs, and
 * the page says so. Writes docs/benchmarks.md (scripts/bench/field-report.ts renders it).
 *
 * 1. idle memory, panel only: RSS of each `ferry serve` with 0, 200 and 100,000 users in the
 *    database (real migrations; users and their balances inserted in bulk, one transaction);
 * 2. subscriptions: 50 clients in a closed loop over 200 customers, UA `v2rayN/7.5.0`;
 * 3. a bad day: 64 logged-in customers calling portal reads (closed loop), 300 subscription
 *    fetches/s (open loop), one user added or disabled per second (the services `ferry user`
 *    calls), 10 fake nodes (saved as the product saves nodes, pulling their user list, pushing
 *    1,000 users every 10 s through the UniProxy API): p99 per kind, errors (must be 0), and the
 *    charge: Σ bytes × scales of every acknowledged report against the ledger, exactly;
 * 4. restart under that load: SIGKILL one `ferry serve` (the server, or one replica) and start it
 *    again: time until the API answers through the others and through the restarted one; nodes
 *    resend unacknowledged reports (same X-Request-Id), and the charge must still be exact.
 *
 * Load runs in separate processes (scripts/bench/load.ts), fake nodes and user changes in this
 * one. It never asserts on time; it exits 1 on any error of the bad day or an inexact charge.
 *
 * Usage: bun scripts/bench/field.ts [--no-build] [--database-url <url>] [--duration 60]
 *        [--restart-duration 30] [--quick] [--out docs/benchmarks.md] [--no-write] [--json]
 * `--quick` (development): 5 s scenarios, 10,000 users instead of 100,000, short idle waits.
 */

import { Database } from "bun:sqlite";
import { execSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openContext } from "../../cli/shared.ts";
import { CLI_ADMIN_ID } from "../../cli/user.ts";
import type { AppContext } from "../../src/context.ts";
import { GB } from "../../src/lib/traffic.ts";
import { lineInput } from "../../src/modules/line/schema.ts";
import { saveLine } from "../../src/modules/line/service.ts";
import { agentInput } from "../../src/modules/node-record/schema.ts";
import { findAgentRow, saveAgent } from "../../src/modules/node-record/service.ts";
import { updateUser } from "../../src/modules/user/admin.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser, hashPassword } from "../../src/modules/user/service.ts";
import { fromBase64Json, toBase64Json } from "../../src/rpc/envelope.ts";
import { newId, randomHex } from "../../src/rpc/ids.ts";
import { subscriptionUrl } from "../../src/subscription/clients.ts";
import { Bench, createDatabase, freePort, numberFlag, root, rssMegabytes } from "./common.ts";
import {
  type BadDay,
  type ChargeScales,
  checkCharge,
  type EngineResults,
  expectedCharge,
  type FieldResults,
  failures,
  type Latency,
  type Machine,
  type MemoryRow,
  type Restart,
  renderMarkdown,
} from "./field-report.ts";
import { type LoadResult, type LoadSpec, quantile, type RequestVariant } from "./load.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const urlIndex = argv.indexOf("--database-url");
const outIndex = argv.indexOf("--out");
const options = {
  /** Development: PostgreSQL only (with --database-url). */
  skipSqlite: argv.includes("--skip-sqlite"),
  build: !argv.includes("--no-build"),
  clusterUrl: urlIndex >= 0 ? argv[urlIndex + 1] : undefined,
  seconds: numberFlag(argv, "duration", quick ? 5 : 60),
  restartSeconds: numberFlag(argv, "restart-duration", quick ? 6 : 30),
  memoryUsers: quick ? [0, 200, 10_000] : [0, 200, 100_000],
  idleMs: quick ? 2_000 : 5_000,
  write: !argv.includes("--no-write"),
  out: outIndex >= 0 ? (argv[outIndex + 1] as string) : join(root, "docs/benchmarks.md"),
  json: argv.includes("--json"),
};

const CUSTOMERS = 200;
const API_USERS = 64;
const NODES = 10;
/** Each node reports its own 1,000 customers: 10,000 customers with traffic in all. */
const NODE_USERS = 1_000;
const REPORT_EVERY_MS = 10_000;
const SUBSCRIPTION_CLIENTS = 50;
/** Two per core: each login checks an argon2id hash (64 MiB), so more only queue (and take memory). */
const LOGIN_CLIENTS = 2 * cpus().length;
const SUBSCRIPTIONS_PER_SECOND = 300;
const PASSWORD = "field-password-1";
const V2RAYN = "v2rayN/7.5.0";
/** The scales the bench sets (an upload scale of 0.5 and a 1.5 line, so rounding is exercised). */
const SCALES: ChargeScales = { upload: 0.5, download: 1, line: 1.5, user: 1 };
const INBOUND = "vmesh_tcp";

const log = (message: string) => console.error(message);
const bench = new Bench(log);

// ---- seeding ---------------------------------------------------------------------------------

interface Customer {
  id: string;
  email: string;
  userkey: string;
  nodeUid: number;
}

let passwordHash: string | null = null;

/**
 * `count` customers with 100 GB of traffic each (numbered from `first`), inserted in bulk in one
 * transaction: the users rows (their balances rows made by the schema's trigger), as the product
 * stores them.
 */
async function seedUsers(ctx: AppContext, count: number, first = 0): Promise<Customer[]> {
  passwordHash ??= await hashPassword(transformPassword(PASSWORD));
  const now = Date.now();
  const made: Omit<Customer, "nodeUid">[] = [];
  const CHUNK = 500;
  await ctx.db.tx(async () => {
    for (let start = 0; start < count; start += CHUNK) {
      const rows = Math.min(CHUNK, count - start);
      const params: (string | number)[] = [];
      for (let i = 0; i < rows; i += 1) {
        const customer = {
          id: newId(now),
          email: `field-${first + start + i}@example.com`,
          userkey: randomHex(16),
        };
        made.push(customer);
        params.push(
          customer.id,
          customer.email,
          passwordHash as string,
          customer.userkey,
          crypto.randomUUID(),
          now,
        );
      }
      await ctx.db.run(
        `INSERT INTO users (id, email, password_hash, userkey, proxy_secret, create_time) VALUES ${Array(rows)
          .fill("(?, ?, ?, ?, ?, ?)")
          .join(", ")}`,
        ...params,
      );
    }
    await ctx.db.run("UPDATE balances SET traffic = ? WHERE traffic = 0", 100 * GB);
  });
  const uids = new Map(
    (await ctx.db.all<{ id: string; node_uid: number }>("SELECT id, node_uid FROM users")).map((row) => [
      row.id,
      row.node_uid,
    ]),
  );
  return made.map((customer) => ({ ...customer, nodeUid: uids.get(customer.id) as number }));
}

/**
 * PostgreSQL plans by its statistics, which a bulk insert leaves behind (autovacuum analyzes the
 * tables a little later, and long before a panel has grown to its customers by signing them up).
 */
async function analyzed(ctx: AppContext) {
  if (ctx.db.engine === "postgres") await ctx.db.exec("ANALYZE");
}

interface FakeNodeRecord {
  nodeNo: number;
  token: string;
}

/** Ten v2ray nodes saved as the back office saves them, each with three lines (vmesh_tcp at 1.5). */
async function seedNodes(ctx: AppContext): Promise<FakeNodeRecord[]> {
  await ctx.settings.update({ upload_traffic_spend_scale: SCALES.upload });
  const nodes: FakeNodeRecord[] = [];
  for (let n = 0; n < NODES; n += 1) {
    const agent = await saveAgent(
      ctx,
      agentInput.parse({
        name: `节点${n + 1}`,
        country: { code: "HK" },
        type: "v2ray",
        ip: `203.0.113.${n + 10}`,
        host: `n${n}.example.net`,
        ctrl_port: 888,
        zz_port: 20000,
        port: 10000,
        public_port: 10000,
        serverType: "ubuntu_x86",
        ss_method: "aes-256-gcm",
      }),
    );
    const lines: [string, number][] = [
      ["vmesh_tcp", SCALES.line],
      ["vmesh_ws", 1],
      ["ss", 2],
    ];
    for (const [i, [protocol, scale]] of lines.entries()) {
      await saveLine(
        ctx,
        lineInput.parse({
          index: n * 3 + i + 1,
          name: `节点${n + 1} 0${i + 1}`,
          agentID: agent._id,
          protocol,
          bridge: "none",
          scale,
        }),
      );
    }
    const row = await findAgentRow(ctx, agent._id);
    if (!row) throw new Error("node not saved");
    nodes.push({ nodeNo: row.node_no, token: row.api_token });
  }
  return nodes;
}

// ---- the servers -----------------------------------------------------------------------------

type Child = ReturnType<typeof Bun.spawn>;

interface Server {
  port: number;
  dataDir: string;
  child: Child;
}

/** One engine's place: SQLite files in the work dir, or a scratch database on the cluster. */
class Place {
  readonly servers: Server[] = [];
  private drops: (() => Promise<void>)[] = [];

  constructor(
    readonly engine: "sqlite" | "postgres",
    readonly replicas: number,
  ) {}

  /** A fresh, empty database for a phase; the context this process uses on it (migrated). */
  async fresh(name: string): Promise<AppContext> {
    const dataDir = join(bench.work, `${this.engine}-${name}`);
    mkdirSync(dataDir, { recursive: true });
    if (this.engine === "postgres") {
      const scratch = await createDatabase(
        options.clusterUrl as string,
        `ferry_field_${name}_${process.pid}`,
      );
      this.drops.push(scratch.drop);
      bench.minimalEnv.FERRY_DATABASE_URL = scratch.url;
      process.env.FERRY_DATABASE_URL = scratch.url;
    } else {
      delete bench.minimalEnv.FERRY_DATABASE_URL;
      delete process.env.FERRY_DATABASE_URL;
    }
    this.dataDir = dataDir;
    return await openContext(dataDir);
  }

  private dataDir = "";

  /** Starts the replicas (one on SQLite) on the current database and waits until each is healthy. */
  async start(): Promise<void> {
    for (let i = 0; i < this.replicas; i += 1) {
      const dataDir = this.engine === "sqlite" ? this.dataDir : join(this.dataDir, `replica-${i}`);
      mkdirSync(dataDir, { recursive: true });
      const port = freePort();
      const child = bench.spawnFerry(dataDir, port);
      await bench.untilHealthy(port, child, performance.now());
      this.servers.push({ port, dataDir, child });
    }
  }

  /** SIGKILL one server: no clean stop. */
  async kill(index: number) {
    const server = this.servers[index] as Server;
    server.child.kill("SIGKILL");
    await server.child.exited;
  }

  /** Starts a killed server again on its port and data folder (without waiting for it). */
  respawn(index: number) {
    const server = this.servers[index] as Server;
    server.child = bench.spawnFerry(server.dataDir, server.port);
  }

  async stopAll() {
    for (const server of this.servers.splice(0)) await bench.stop(server.child);
  }

  async dropAll() {
    for (const drop of this.drops.splice(0)) await drop();
  }
}

// ---- 1. idle memory --------------------------------------------------------------------------

async function idleMemory(place: Place): Promise<MemoryRow[]> {
  const ctx = await place.fresh("memory");
  const rows: MemoryRow[] = [];
  let seeded = 0;
  for (const users of options.memoryUsers) {
    const missing = users - seeded;
    if (missing > 0) {
      const started = performance.now();
      await seedUsers(ctx, missing, seeded);
      await analyzed(ctx);
      seeded = users;
      log(`  seeded ${missing} users in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    await place.start();
    await Bun.sleep(options.idleMs);
    const rssMiB = place.servers.map((server) => rssMegabytes(server.child.pid));
    log(`  ${users} users: RSS ${rssMiB.map((v) => v.toFixed(1)).join(", ")} MiB`);
    rows.push({ users, rssMiB });
    await place.stopAll();
  }
  await ctx.db.close();
  return rows;
}

// ---- load processes --------------------------------------------------------------------------

type LoadJob = Omit<LoadSpec, "host" | "port" | "startAt">;

/** A load.ts process against one port, started at `startAt`; resolves with its result. */
async function loadProcess(port: number, startAt: number, job: LoadJob): Promise<LoadResult> {
  const spec: LoadSpec = { host: "127.0.0.1", port, startAt, ...job };
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "load.ts"), JSON.stringify(spec)], {
    cwd: root,
    stdout: "pipe",
    stderr: "inherit",
    stdin: "ignore",
  });
  const out = await new Response(child.stdout as ReadableStream<Uint8Array>).text();
  await child.exited;
  if (child.exitCode !== 0) throw new Error(`load generator failed (${child.exitCode})`);
  return JSON.parse(out) as LoadResult;
}

/** The same job split over every server: connections and rate divided, results merged. */
async function spreadLoad(
  ports: number[],
  startAt: number,
  job: LoadJob,
): Promise<Latency & { seconds: number }> {
  const parts = await Promise.all(
    ports.map((port, i) =>
      loadProcess(port, startAt, {
        ...job,
        connections: Math.max(
          1,
          Math.floor(job.connections / ports.length) + (i < job.connections % ports.length ? 1 : 0),
        ),
        ratePerSecond: job.ratePerSecond ? job.ratePerSecond / ports.length : undefined,
        keepLatencies: true,
      }),
    ),
  );
  const latencies = parts.flatMap((part) => part.latencies ?? []).sort((a, b) => a - b);
  const errors = parts.reduce(
    (sum, part) =>
      sum +
      part.errors +
      (part.notOk ?? 0) +
      Object.entries(part.statuses)
        .filter(([status]) => status !== "200")
        .reduce((n, [, c]) => n + c, 0),
    0,
  );
  return {
    count: latencies.length,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    errors,
    seconds: job.durationMs / 1000,
  };
}

// ---- customers and what they call --------------------------------------------------------------

const NOT_AN_ERROR_PREFIX = `{"data":"${toBase64Json({ code: 0 }).slice(0, 12)}`;

async function logIn(port: number, customer: Customer): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/api/user/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      data: toBase64Json({ email: customer.email, password: transformPassword(PASSWORD) }),
    }),
  });
  const token = response.headers
    .getSetCookie()
    .map((line) => /^token=([^;]+)/.exec(line)?.[1])
    .find(Boolean);
  if (!token) throw new Error(`login gave no session (HTTP ${response.status})`);
  return token;
}

/** The portal reads a logged-in customer makes; only those that answer code 0 with `{}` are kept. */
const PORTAL_READS = [
  "/api/user/userinfo",
  "/api/traffic/my_traffic_records",
  "/api/order/order_list",
  "/api/wallet/mywallet",
  "/api/user_notive/list",
  "/api/shop/list",
];

async function portalRequests(port: number, tokens: string[]): Promise<RequestVariant[]> {
  const body = JSON.stringify({ data: toBase64Json({}) });
  const kept: string[] = [];
  for (const path of PORTAL_READS) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `token=${tokens[0]}` },
      body,
    });
    const text = await response.text();
    const decoded =
      response.status === 200 ? fromBase64Json((JSON.parse(text) as { data: string }).data) : null;
    const code = decoded?.ok ? (decoded.value as { code: number }).code : response.status;
    if (code === 0 && text.startsWith(NOT_AN_ERROR_PREFIX)) kept.push(path);
    else log(`  (portal read ${path} answered ${code} to {}: left out)`);
  }
  return tokens.flatMap((token) =>
    kept.map((path) => ({
      path,
      headers: { "content-type": "application/json", cookie: `token=${token}` },
      body,
    })),
  );
}

/**
 * The fetch measured answers what v2rayN imports: base64 of a URI per line the customer sees (and
 * info entries), after the `#profile-…` lines.
 */
async function checkSubscription(port: number, customer: Customer) {
  const [request] = subscriptionRequests([customer]);
  const response = await fetch(`http://127.0.0.1:${port}${request?.path}`, {
    headers: { "user-agent": V2RAYN },
  });
  const entries = Buffer.from(await response.text(), "base64")
    .toString("utf8")
    .trim()
    .split("\n")
    .filter((entry) => !entry.startsWith("#"));
  const lines = NODES * 3;
  const notUris = entries.filter((entry) => !/^[a-z0-9]+:\/\//.test(entry));
  if (response.status !== 200 || entries.length < lines || notUris.length > 0) {
    throw new Error(
      `the subscription answered HTTP ${response.status} with ${entries.length} entries for ${lines} lines ${notUris.slice(0, 1)}`,
    );
  }
}

function subscriptionRequests(customers: Customer[]): RequestVariant[] {
  return customers.map((customer) => ({
    path: new URL(subscriptionUrl("http://x", "v2ray", { _id: customer.id, userkey: customer.userkey }))
      .pathname,
  }));
}

// ---- fake nodes ------------------------------------------------------------------------------

/** Raw bytes of one user in one report: a spread of sizes, odd numbers so rounding shows. */
function bytesOf(userIndex: number, node: number, report: number): [number, number] {
  const download = (1 + ((userIndex * 7 + node * 13 + report) % 50)) * 100_003 + userIndex;
  return [Math.floor(download / 3) + 1, download];
}

interface NodeStats {
  pulls: number[];
  pushes: number[];
  pullErrors: number;
  pushErrors: number;
  /** The usage of every acknowledged report. */
  acknowledged: [number, number][][];
  /** Failed attempts while a server was down (restart scenario). */
  outageFailures: number;
  /** Failed attempts outside an outage by what they got: an HTTP status, or "no answer". */
  failures: Record<string, number>;
}

/**
 * One fake node: every 10 s it pulls its user list (If-None-Match its ETag) and pushes the usage of
 * its own 1,000 of the seeded customers on it (node i: the i-th thousand), resending with the same X-Request-Id until acknowledged
 * (to the next server in turn, as behind a load balancer).
 */
function runNode(
  node: FakeNodeRecord,
  index: number,
  ports: () => number[],
  seededUids: Set<number>,
  until: number,
  stats: NodeStats,
  outage: () => boolean,
): Promise<void> {
  const query = new URLSearchParams({ node_id: String(node.nodeNo), token: node.token, node_type: "v2ray" });
  const headers = { "user-agent": "ferry-agent/9.9.9" };
  let etag = "";
  let list: number[] = [];
  let attempt = index;
  const base = () => {
    const all = ports();
    return `http://127.0.0.1:${all[attempt++ % all.length]}/api/v1/server/UniProxy`;
  };
  const failed = (what: string) => {
    if (outage()) {
      stats.outageFailures += 1;
      return;
    }
    if (what.startsWith("pull")) stats.pullErrors += 1;
    else stats.pushErrors += 1;
    stats.failures[what] = (stats.failures[what] ?? 0) + 1;
  };
  return (async () => {
    await Bun.sleep(index * (REPORT_EVERY_MS / NODES));
    for (let report = 0; Date.now() < until; report += 1) {
      const cycleStart = Date.now();
      for (;;) {
        const started = performance.now();
        try {
          const response = await fetch(`${base()}/user?${query}`, {
            headers: etag ? { ...headers, "if-none-match": `"${etag}"` } : headers,
          });
          const text = await response.text();
          if (response.status === 200) {
            etag = (response.headers.get("etag") ?? "").replaceAll('"', "");
            list = (JSON.parse(text) as { users: { id: number }[] }).users.map((user) => user.id);
          }
          if (response.status === 200 || response.status === 304) {
            stats.pulls.push(performance.now() - started);
            break;
          }
          failed(`pull: HTTP ${response.status} ${text.slice(0, 80)}`);
        } catch {
          failed("pull: no answer");
        }
        await Bun.sleep(100);
      }
      const usage = list
        .filter((uid) => seededUids.has(uid))
        .slice(index * NODE_USERS, (index + 1) * NODE_USERS)
        .map((uid, i) => [uid, bytesOf(i, index, report)] as const);
      const body = JSON.stringify(Object.fromEntries(usage));
      const reportId = `field-${index}-${report}-${randomHex(4)}`;
      for (;;) {
        const started = performance.now();
        try {
          const response = await fetch(`${base()}/push?${query}&inbound=${INBOUND}`, {
            method: "POST",
            body,
            headers: { ...headers, "content-type": "application/json", "x-request-id": reportId },
          });
          const text = await response.text();
          if (response.status === 200) {
            stats.pushes.push(performance.now() - started);
            stats.acknowledged.push(usage.map(([, bytes]) => bytes));
            break;
          }
          failed(`push: HTTP ${response.status} ${text.slice(0, 80)}`);
        } catch {
          failed("push: no answer");
        }
        await Bun.sleep(100);
      }
      await Bun.sleep(Math.max(0, cycleStart + REPORT_EVERY_MS - Date.now()));
    }
  })();
}

// ---- user changes ----------------------------------------------------------------------------

interface ChangeStats {
  latencies: number[];
  errors: number;
}

/** One user added or disabled per second through the services `ferry user create/disable` call. */
async function runUserChanges(ctx: AppContext, until: number, stats: ChangeStats, tag: string) {
  let last: string | null = null;
  for (let n = 0; Date.now() < until; n += 1) {
    const tick = Date.now();
    const started = performance.now();
    try {
      if (last === null) {
        const user = await createUser(ctx, {
          email: `field-added-${tag}-${n}@example.com`,
          passwordDigest: transformPassword(PASSWORD),
          type: "normal",
        });
        last = user.id;
      } else {
        await updateUser(ctx, CLI_ADMIN_ID, { _id: last, disable: true });
        last = null;
      }
      stats.latencies.push(performance.now() - started);
    } catch (error) {
      stats.errors += 1;
      log(`  ! user change failed: ${error}`);
    }
    await Bun.sleep(Math.max(0, tick + 1000 - Date.now()));
  }
}

// ---- the charge ------------------------------------------------------------------------------

async function ledgerTotals(ctx: AppContext): Promise<{ balances: number; records: number }> {
  const balances = await ctx.db.get<{ total: number | null }>(
    "SELECT SUM(spend_traffic) AS total FROM balances",
  );
  const records = await ctx.db.get<{ total: number | null }>(
    "SELECT SUM(exemption_traffic - traffic_change) AS total FROM traffic_records WHERE type = 'spend'",
  );
  return { balances: Number(balances?.total ?? 0), records: Number(records?.total ?? 0) };
}

/** What the servers wrote to their error log (运维日志) since `since`. */
async function serverErrors(ctx: AppContext, since: number): Promise<string[]> {
  const rows = await ctx.db.all<{ name: string; msg: string; n: number }>(
    "SELECT name, msg, COUNT(*) AS n FROM error_logs WHERE create_time >= ? GROUP BY name, msg",
    since,
  );
  return rows.map((row) => `server error log: ${row.name}: ${row.msg.slice(0, 160)} (${Number(row.n)}×)`);
}

// ---- 2–4. the business -------------------------------------------------------------------------

interface Business {
  ctx: AppContext;
  customers: Customer[];
  nodeUsers: Set<number>;
  nodes: FakeNodeRecord[];
  tokens: string[];
  portal: RequestVariant[];
}

async function setUpBusiness(place: Place): Promise<Business> {
  const ctx = await place.fresh("business");
  const nodes = await seedNodes(ctx);
  const customers = await seedUsers(ctx, NODES * NODE_USERS);
  await analyzed(ctx);
  await place.start();
  const ports = place.servers.map((server) => server.port);
  const tokens: string[] = [];
  for (const [i, customer] of customers.slice(0, API_USERS).entries()) {
    tokens.push(await logIn(ports[i % ports.length] as number, customer));
  }
  const portal = await portalRequests(ports[0] as number, tokens);
  await checkSubscription(ports[0] as number, customers[0] as Customer);
  return {
    ctx,
    customers: customers.slice(0, CUSTOMERS),
    nodeUsers: new Set(customers.map((customer) => customer.nodeUid)),
    nodes,
    tokens,
    portal,
  };
}

async function subscriptions(place: Place, business: Business): Promise<EngineResults["subscriptions"]> {
  const ports = place.servers.map((server) => server.port);
  const seconds = options.seconds;
  const result = await spreadLoad(ports, Date.now() + 300, {
    method: "GET",
    path: "/",
    headers: { "user-agent": V2RAYN },
    body: "",
    requests: subscriptionRequests(business.customers),
    connections: SUBSCRIPTION_CLIENTS,
    warmupMs: 1000,
    durationMs: seconds * 1000,
  });
  return {
    clients: SUBSCRIPTION_CLIENTS,
    users: business.customers.length,
    seconds,
    rps: result.count / seconds,
    p99Ms: result.p99Ms,
    errors: result.errors,
  };
}

/** Customers logging in, closed loop, for at most 10 s: Xboard's published figure is logins/s. */
async function logins(place: Place, business: Business): Promise<EngineResults["logins"]> {
  const ports = place.servers.map((server) => server.port);
  const seconds = Math.min(10, options.seconds);
  const requests = business.customers.map((customer) => ({
    path: "/api/user/login",
    body: JSON.stringify({
      data: toBase64Json({ email: customer.email, password: transformPassword(PASSWORD) }),
    }),
  }));
  const result = await spreadLoad(ports, Date.now() + 300, {
    method: "POST",
    path: "/",
    headers: { "content-type": "application/json" },
    body: "",
    requests,
    connections: LOGIN_CLIENTS,
    okBodyIncludes: NOT_AN_ERROR_PREFIX,
    warmupMs: 1000,
    durationMs: seconds * 1000,
  });
  return {
    clients: LOGIN_CLIENTS,
    seconds,
    perSecond: result.count / seconds,
    p99Ms: result.p99Ms,
    errors: result.errors,
  };
}

const summaryOf = (latencies: number[], errors: number, seconds: number): Latency & { perSecond: number } => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    errors,
    perSecond: sorted.length / seconds,
  };
};

/** The bad day's load for `seconds`; `during` runs meanwhile (the restart). */
async function badDayLoad(
  place: Place,
  business: Business,
  seconds: number,
  tag: string,
  during: (outage: { down: boolean }) => Promise<void> = async () => {},
) {
  const ports = () => place.servers.map((server) => server.port);
  const before = await ledgerTotals(business.ctx);
  const since = Date.now();
  const startAt = Date.now() + 300;
  const until = startAt + seconds * 1000;
  const outage = { down: false };
  const nodeStats: NodeStats = {
    pulls: [],
    pushes: [],
    pullErrors: 0,
    pushErrors: 0,
    acknowledged: [],
    outageFailures: 0,
    failures: {},
  };
  const changeStats: ChangeStats = { latencies: [], errors: 0 };
  const window = { warmupMs: 0, durationMs: seconds * 1000 };
  const [api, subs] = await Promise.all([
    spreadLoad(ports(), startAt, {
      mode: "fetch",
      method: "POST",
      path: "/",
      headers: {},
      body: "",
      requests: business.portal,
      connections: API_USERS,
      okBodyIncludes: NOT_AN_ERROR_PREFIX,
      ...window,
    }),
    spreadLoad(ports(), startAt, {
      mode: "fetch",
      method: "GET",
      path: "/",
      headers: { "user-agent": V2RAYN },
      body: "",
      requests: subscriptionRequests(business.customers),
      connections: 1,
      ratePerSecond: SUBSCRIPTIONS_PER_SECOND,
      ...window,
    }),
    Promise.all(
      business.nodes.map((node, i) =>
        runNode(node, i, ports, business.nodeUsers, until, nodeStats, () => outage.down),
      ),
    ),
    (async () => {
      await Bun.sleep(Math.max(0, startAt - Date.now()));
      await runUserChanges(business.ctx, until, changeStats, tag);
    })(),
    (async () => {
      await Bun.sleep(Math.max(0, startAt - Date.now()));
      await during(outage);
    })(),
  ]);
  const after = await ledgerTotals(business.ctx);
  const charge = checkCharge(
    expectedCharge(nodeStats.acknowledged, SCALES),
    after.balances - before.balances,
    after.records - before.records,
  );
  const notes = [
    ...Object.entries(nodeStats.failures).map(([what, n]) => `node ${what} (${n}×)`),
    ...(await serverErrors(business.ctx, since)),
  ];
  for (const note of notes) log(`  ! ${note}`);
  return { api, subs, nodeStats, changeStats, charge, notes };
}

async function badDay(place: Place, business: Business): Promise<BadDay> {
  const seconds = options.seconds;
  const run = await badDayLoad(place, business, seconds, "bad-day");
  const kinds = {
    "portal reads (64 customers)": { ...run.api, perSecond: run.api.count / seconds },
    "subscriptions (300/s offered)": { ...run.subs, perSecond: run.subs.count / seconds },
    "node user pull": summaryOf(run.nodeStats.pulls, run.nodeStats.pullErrors, seconds),
    "node report (1,000 users)": summaryOf(run.nodeStats.pushes, run.nodeStats.pushErrors, seconds),
    "user added / disabled": summaryOf(run.changeStats.latencies, run.changeStats.errors, seconds),
  };
  const errors = Object.values(kinds).reduce((sum, kind) => sum + kind.errors, 0);
  return {
    seconds,
    kinds,
    errors,
    reports: run.nodeStats.acknowledged.length,
    charge: run.charge,
    notes: run.notes,
  };
}

/** Polls userinfo on `port` with a customer's session until it answers code 0; ms since `since`. */
async function untilApiAnswers(port: number, token: string, since: number): Promise<number> {
  const body = JSON.stringify({ data: toBase64Json({}) });
  while (performance.now() - since < 60_000) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/user/userinfo`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: `token=${token}` },
        body,
        signal: AbortSignal.timeout(2000),
      });
      if (response.status === 200 && (await response.text()).startsWith(NOT_AN_ERROR_PREFIX))
        return performance.now() - since;
    } catch {
      // down
    }
    await Bun.sleep(5);
  }
  throw new Error("the API did not answer again within 60 s");
}

async function restart(place: Place, business: Business): Promise<Restart> {
  const seconds = options.restartSeconds;
  let othersMs: number | null = null;
  let restartedMs = 0;
  const token = business.tokens[0] as string;
  const run = await badDayLoad(place, business, seconds, "restart", async (outage) => {
    await Bun.sleep((seconds * 1000) / 3);
    const victim = 0;
    const killedAt = performance.now();
    outage.down = true;
    await place.kill(victim);
    const others = place.servers.slice(1).map((server) => server.port);
    const othersAnswer = others.length
      ? Promise.any(others.map((port) => untilApiAnswers(port, token, killedAt)))
      : null;
    place.respawn(victim);
    restartedMs = await untilApiAnswers(place.servers[victim]?.port as number, token, killedAt);
    othersMs = othersAnswer ? await othersAnswer : null;
    outage.down = false;
  });
  const failedDuringOutage =
    run.api.errors +
    run.subs.errors +
    run.nodeStats.outageFailures +
    run.nodeStats.pullErrors +
    run.nodeStats.pushErrors;
  return {
    othersMs,
    restartedMs,
    failedDuringOutage,
    charge: run.charge,
    reports: run.nodeStats.acknowledged.length,
    notes: run.notes,
  };
}

async function runEngine(engine: "sqlite" | "postgres"): Promise<EngineResults> {
  const place = new Place(engine, engine === "sqlite" ? 1 : 3);
  try {
    log(`${engine}: idle memory …`);
    const memory = await idleMemory(place);
    log(`${engine}: business set-up (${NODES * NODE_USERS} customers, ${NODES} nodes) …`);
    const business = await setUpBusiness(place);
    log(`${engine}: subscriptions, ${SUBSCRIPTION_CLIENTS} clients, ${options.seconds} s …`);
    const subs = await subscriptions(place, business);
    log(`  ${Math.round(subs.rps)} fetches/s, p99 ${subs.p99Ms.toFixed(1)} ms, ${subs.errors} errors`);
    log(`${engine}: logins, ${LOGIN_CLIENTS} clients …`);
    const login = await logins(place, business);
    log(
      `  ${Math.round(login.perSecond)} logins/s, p99 ${login.p99Ms.toFixed(1)} ms, ${login.errors} errors`,
    );
    log(`${engine}: a bad day, ${options.seconds} s …`);
    const day = await badDay(place, business);
    for (const [kind, k] of Object.entries(day.kinds))
      log(
        `  ${kind}: ${k.count} (${k.perSecond.toFixed(1)}/s), p99 ${k.p99Ms.toFixed(1)} ms, ${k.errors} errors`,
      );
    log(`  charge exact: ${day.charge.exact} (${JSON.stringify(day.charge)})`);
    log(`${engine}: restart under load, ${options.restartSeconds} s …`);
    const again = await restart(place, business);
    log(
      `  answers again: through the others ${again.othersMs === null ? "—" : `${again.othersMs.toFixed(0)} ms`}, ` +
        `restarted ${again.restartedMs.toFixed(0)} ms; charge exact: ${again.charge.exact}`,
    );
    await place.stopAll();
    await business.ctx.db.close();
    return {
      engine,
      replicas: place.replicas,
      memory,
      subscriptions: subs,
      logins: login,
      badDay: day,
      restart: again,
    };
  } finally {
    await place.stopAll();
    await place.dropAll();
  }
}

// ---- the machine -----------------------------------------------------------------------------

async function machine(): Promise<Machine> {
  const memory = new Database(":memory:");
  const sqlite = (memory.query("SELECT sqlite_version() AS v").get() as { v: string }).v;
  memory.close();
  let postgres: string | null = null;
  if (options.clusterUrl) {
    const sql = new SQL({ url: options.clusterUrl, max: 1 });
    postgres =
      ((await sql.unsafe("SHOW server_version")) as { server_version: string }[])[0]?.server_version ?? null;
    await sql.close();
  }
  let commit = "unknown";
  try {
    commit = execSync("git rev-parse --short HEAD", { cwd: root }).toString().trim();
  } catch {
    // not a git checkout
  }
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    ramGiB: totalmem() / 1024 ** 3,
    date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
    bun: Bun.version,
    sqlite,
    postgres,
    commit,
  };
}

// ---- run -------------------------------------------------------------------------------------

try {
  bench.prepareExecutable(options.build);
  const engines: EngineResults[] = options.skipSqlite ? [] : [await runEngine("sqlite")];
  if (options.clusterUrl) engines.push(await runEngine("postgres"));
  const command = ["bun run bench:field", ...argv.filter((arg) => arg !== "--no-build")]
    .join(" ")
    .replace(/postgres:\/\/\S+/, "<cluster URL>");
  const results: FieldResults = {
    command,
    machine: await machine(),
    engines,
    note: options.clusterUrl
      ? null
      : "PostgreSQL was not measured: run with `--database-url <cluster maintenance URL>` for it.",
  };
  if (options.write) {
    writeFileSync(options.out, renderMarkdown(results));
    // Laid out as `biome check` wants it (tables padded), so the page is committed as generated.
    Bun.spawnSync([process.execPath, "x", "biome", "format", "--write", options.out], { cwd: root });
    log(`wrote ${options.out}`);
  }
  if (options.json) console.log(JSON.stringify(results, null, 2));
  if (!options.clusterUrl) log("PostgreSQL not measured (no --database-url): SQLite only.");
  const failed = failures(results);
  for (const failure of failed) log(`FAILED: ${failure}`);
  process.exitCode = failed.length ? 1 : 0;
} finally {
  await bench.cleanup();
}
