/**
 * `bun run bench:subscription`: requests/second of a customer's subscription link in the `clash`
 * and the `v2ray` format, served by dist/ferry, against a bare Bun.serve (its own process, one per
 * format) answering the exact same bytes and headers, in the same run (DESIGN §8, issue 4).
 *
 * The customer sees 60 lines on 6 nodes: four v2ray nodes (VMess TCP / WebSocket, Shadowsocks
 * with classic and 2022 ciphers, SSR-compatible, direct, relayed through two-address entries and
 * through a CDN, some with two copies), one Reality node and one Hysteria2 node. Each format lists
 * what it can express (Clash has no Reality, Hysteria2 or 2022 ciphers).
 *
 * Load: GET /api/subscript/{client}/{userId}/{userkey} on keep-alive connections from a separate
 * load process (scripts/bench/load.ts); rounds alternate ferry / bare per format, medians are
 * reported with p99 latency and server CPU time per request. It prints; it never asserts on time
 * (the goal ferry/bare ≥ 0.8 of issue 31 is reported, not enforced).
 *
 * `--devices`: the device check on (issue 29): the customer has a device limit of 5 and every
 * request sends a device id (`x-hwid` and the device headers), so each fetch passes the gate as a
 * known device; the answers carry `x-hwid-active` / `x-hwid-limit`, and so does the baseline's.
 *
 * Usage: bun scripts/bench/subscription.ts [--no-build] [--connections 64] [--duration 5]
 *        [--warmup 1] [--rounds 3] [--devices] [--database-url <PostgreSQL cluster URL>] [--json]
 */
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { openContext } from "../../cli/shared.ts";
import type { AppContext } from "../../src/context.ts";
import { GB } from "../../src/lib/traffic.ts";
import { setDeviceLimit } from "../../src/modules/device/service.ts";
import { type Entry, entryInput } from "../../src/modules/entry/schema.ts";
import { saveEntry } from "../../src/modules/entry/service.ts";
import { type Bridge, type LineProtocol, lineInput } from "../../src/modules/line/schema.ts";
import { saveLine } from "../../src/modules/line/service.ts";
import { agentInput, type NodeType, type SsMethod } from "../../src/modules/node-record/schema.ts";
import { saveAgent } from "../../src/modules/node-record/service.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { createUser } from "../../src/modules/user/service.ts";
import { type Client, subscriptionUrl } from "../../src/subscription/clients.ts";
import { answerOf, Bench, compareRuns, freePort, type Measured, numberFlag } from "./common.ts";

const argv = process.argv.slice(2);
const options = {
  build: !argv.includes("--no-build"),
  connections: numberFlag(argv, "connections", 64),
  durationMs: numberFlag(argv, "duration", 5) * 1000,
  warmupMs: numberFlag(argv, "warmup", 1) * 1000,
  rounds: numberFlag(argv, "rounds", 3),
  json: argv.includes("--json"),
  devices: argv.includes("--devices"),
};
/** The headers of a client that sends a device id (Happ's contract), for `--devices`. */
const DEVICE_HEADERS = {
  "x-hwid": "bench-device-0001",
  "x-device-os": "iOS",
  "x-ver-os": "18.2",
  "x-device-model": "iPhone15,2",
};
const DEVICE_LIMIT = 5;
const GOAL = 0.8;
const CLIENTS: Client[] = ["clash", "v2ray"];

const log = (message: string) => {
  if (!options.json) console.error(message);
};

// ---- the network the customer sees ---------------------------------------------------------

type LineSpec = [protocol: LineProtocol, bridge: Bridge, extra?: { num?: number; scale?: number }];

/** Ten lines on each v2ray node, every protocol × bridge a v2ray node offers. */
const V2RAY_LINES: LineSpec[] = [
  ["vmesh_tcp", "none"],
  ["vmesh_tcp", "report"],
  ["vmesh_tcp", "none", { num: 2 }],
  ["vmesh_ws", "none"],
  ["vmesh_ws", "cf_cdn"],
  ["vmesh_ws", "report", { scale: 1.5 }],
  ["ss", "none"],
  ["ss", "report"],
  ["ss", "none", { scale: 0.5 }],
  ["compat", "none"],
];

interface NodeSpec {
  name: string;
  country: string;
  type: NodeType;
  ssMethod?: SsMethod;
  lines: LineSpec[];
}

const repeat = (spec: LineSpec, times: number, alternate?: LineSpec): LineSpec[] =>
  Array.from({ length: times }, (_, i) => (alternate && i % 2 ? alternate : spec));

const NODES: NodeSpec[] = [
  { name: "香港", country: "HK", type: "v2ray", ssMethod: "aes-256-gcm", lines: V2RAY_LINES },
  { name: "日本", country: "JP", type: "v2ray", ssMethod: "aes-128-gcm", lines: V2RAY_LINES },
  { name: "新加坡", country: "SG", type: "v2ray", ssMethod: "2022-blake3-aes-128-gcm", lines: V2RAY_LINES },
  { name: "美国", country: "US", type: "v2ray", ssMethod: "chacha20-ietf-poly1305", lines: V2RAY_LINES },
  {
    name: "台湾",
    country: "TW",
    type: "reality",
    lines: repeat(["reality", "none"], 10, ["reality", "report"]),
  },
  { name: "韩国", country: "KR", type: "h2", lines: repeat(["h2", "none"], 10) },
];

async function buildNetwork(ctx: AppContext): Promise<number> {
  const entries: Entry[] = [
    await saveEntry(ctx, entryInput.parse({ name: "广州入口", ipList: ["192.0.2.11", "192.0.2.12"] })),
    await saveEntry(ctx, entryInput.parse({ name: "上海入口", ipList: ["192.0.2.21", "192.0.2.22"] })),
  ];
  let lines = 0;
  for (const [n, node] of NODES.entries()) {
    const reality = node.type === "reality";
    const agent = await saveAgent(
      ctx,
      agentInput.parse({
        name: node.name,
        country: { code: node.country },
        type: node.type,
        ip: `203.0.113.${n + 10}`,
        host: reality ? "www.example.com" : `${node.country.toLowerCase()}.example.net`,
        ctrl_port: 888,
        zz_port: reality ? 443 : 20000,
        port: reality ? 443 : 10000,
        public_port: reality ? 443 : 10000,
        serverType: reality ? "ubuntu_reality" : "ubuntu_x86",
        ss_method: node.ssMethod,
      }),
    );
    for (const [i, [protocol, bridge, extra]] of node.lines.entries()) {
      lines += 1;
      await saveLine(
        ctx,
        lineInput.parse({
          index: lines,
          name: `${node.name} ${String(i + 1).padStart(2, "0")}`,
          agentID: agent._id,
          protocol,
          bridge,
          entryID: bridge === "report" ? entries[i % entries.length]?._id : undefined,
          ...extra,
        }),
      );
    }
  }
  return lines;
}

/** A customer with permanent traffic left, who sees every line. */
async function buildCustomer(ctx: AppContext) {
  const user = await createUser(ctx, {
    email: "bench@example.com",
    passwordDigest: transformPassword("bench-password-1"),
    type: "normal",
  });
  await ctx.db.run(
    "UPDATE balances SET traffic = ?, spend_traffic = ? WHERE user_id = ?",
    500 * GB,
    37 * GB,
    user.id,
  );
  return user;
}

/** How many proxies a file lists: YAML proxies for clash, URI lines for v2ray. */
function proxyCount(client: Client, body: string): number {
  if (client === "clash") return (parseYaml(body) as { proxies: unknown[] }).proxies.length;
  return Buffer.from(body, "base64").toString("utf8").trim().split("\n").length;
}

// ---- run -----------------------------------------------------------------------------------

const bench = new Bench(log);

type FormatResult = {
  client: Client;
  bodyBytes: number;
  proxies: number;
  goal: number;
} & ReturnType<typeof compareRuns>;

try {
  bench.prepareExecutable(options.build);
  const databaseUrl = await bench.databaseFromArgs(argv, "ferry_bench_subscription");
  const dataDir = join(bench.work, "data");
  const ctx = await openContext(dataDir);
  const lineCount = await buildNetwork(ctx);
  const user = await buildCustomer(ctx);
  if (options.devices) await setDeviceLimit(ctx, user.id, DEVICE_LIMIT);
  await ctx.db.close();

  const ferryPort = freePort();
  const ferry = bench.spawnFerry(dataDir, ferryPort);
  await bench.untilHealthy(ferryPort, ferry, performance.now());
  const origin = `http://127.0.0.1:${ferryPort}`;

  const targets = await Promise.all(
    CLIENTS.map(async (client) => {
      const path = new URL(subscriptionUrl(origin, client, { _id: user.id, userkey: user.userkey })).pathname;
      const headers = { "user-agent": "ferry-bench", ...(options.devices ? DEVICE_HEADERS : {}) };
      // The exact answer ferry gives; the bare server gives the same bytes and headers. With
      // --devices this first fetch registers the device; the measured ones find it known.
      const answer = await answerOf(await fetch(origin + path, { headers }));
      if (answer.status !== 200) throw new Error(`${client} subscription answered HTTP ${answer.status}`);
      const active = answer.headers.some(([name, value]) => name === "x-hwid-active" && value === "true");
      if (active !== options.devices)
        throw new Error(`${client}: x-hwid-active ${active}, --devices ${options.devices}`);
      const bare = await bench.startBare(answer);
      const bareBody = await (await fetch(`http://127.0.0.1:${bare.port}${path}`)).text();
      if (bareBody !== answer.body) throw new Error("bare server answers different bytes");
      const request = { method: "GET", path, headers, body: "" };
      return { client, answer, bare, request, ferryRuns: [] as Measured[], bareRuns: [] as Measured[] };
    }),
  );

  log(
    `throughput: ${lineCount} lines on ${NODES.length} nodes, ${options.connections} connections, ` +
      `${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s, ${options.rounds} rounds …`,
  );
  const load = {
    connections: options.connections,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
  };
  for (let round = 1; round <= options.rounds; round += 1) {
    for (const target of targets) {
      const f = await bench.runLoad(ferryPort, ferry.pid, { ...target.request, ...load });
      bench.checkLoad(`ferry ${target.client}`, f);
      target.ferryRuns.push(f);
      const b = await bench.runLoad(target.bare.port, target.bare.pid, { ...target.request, ...load });
      bench.checkLoad(`bare ${target.client}`, b);
      target.bareRuns.push(b);
      log(
        `  round ${round} ${target.client.padEnd(5)}: ferry ${Math.round(f.rps)} req/s ` +
          `(${f.serverCpuUsPerRequest.toFixed(1)} µs CPU/req), bare ${Math.round(b.rps)} req/s ` +
          `(${b.serverCpuUsPerRequest.toFixed(1)} µs CPU/req)`,
      );
    }
  }

  const results: FormatResult[] = targets.map(({ client, answer, ferryRuns, bareRuns }) => ({
    client,
    bodyBytes: Buffer.byteLength(answer.body),
    proxies: proxyCount(client, answer.body),
    goal: GOAL,
    ...compareRuns(ferryRuns, bareRuns),
  }));

  const summary = {
    engine: databaseUrl ? "postgres" : "sqlite",
    deviceCheck: options.devices,
    lines: lineCount,
    nodes: NODES.length,
    connections: options.connections,
    seconds: options.durationMs / 1000,
    rounds: options.rounds,
    formats: results,
  };
  if (options.json) {
    console.log(JSON.stringify(summary, null, 2));
  } else {
    const lines = [
      "",
      `Subscription benchmark summary (${databaseUrl ? "PostgreSQL" : "SQLite"}${options.devices ? ", device check on" : ""})`,
      "──────────────────────────────",
    ];
    for (const r of results) {
      lines.push(
        `${r.client} (${r.proxies} proxies, ${(r.bodyBytes / 1024).toFixed(1)} KiB)`,
        `  ferry               ${Math.round(r.ferryRps)} req/s  (p50 ${r.ferryP50Ms.toFixed(2)} ms, p99 ${r.ferryP99Ms.toFixed(2)} ms)`,
        `  same bytes, bare    ${Math.round(r.bareRps)} req/s  (p50 ${r.bareP50Ms.toFixed(2)} ms, p99 ${r.bareP99Ms.toFixed(2)} ms)`,
        `  ratio ferry / bare  ${r.ratio.toFixed(3)}  (goal ≥ ${GOAL}: ${r.ratio >= GOAL ? "met" : "NOT met"})`,
        `  server CPU/request  ferry ${r.ferryCpuUsPerRequest.toFixed(1)} µs, bare ${r.bareCpuUsPerRequest.toFixed(1)} µs`,
      );
    }
    lines.push(
      `(${lineCount} lines on ${NODES.length} nodes; ${options.connections} keep-alive connections, ` +
        `${summary.seconds} s per round, median of ${options.rounds} rounds)`,
    );
    console.log(lines.join("\n"));
  }
} finally {
  await bench.cleanup();
}
