/**
 * The subscription against real proxy software (issue #4): an admin makes a node on 127.0.0.1
 * with VMess TCP, VMess WebSocket and Shadowsocks lines; the customer's v2rayN subscription is
 * decoded the way v2rayN decodes it, turned into a v2ray client config, and Debian's v2ray runs
 * both the client and the node's server config (rendered from the panel's data). A file must come
 * through every line byte for byte. After reset_userkey the node is re-rendered and restarted:
 * the old client is refused on every line, the old URL is gone, and the new subscription works.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { tx } from "../src/db/db.ts";
import { GB } from "../src/lib/traffic.ts";
import type { Agent } from "../src/modules/agent/schema.ts";
import { type AgentRow, findAgentRow } from "../src/modules/agent/service.ts";
import { changeTraffic } from "../src/modules/ledger/service.ts";
import type { AgentLine } from "../src/modules/line/schema.ts";
import { listLines } from "../src/modules/line/service.ts";
import type { UserRow } from "../src/modules/user/service.ts";
import { renderCoreConfig } from "../src/node/core-config.ts";
import { trafficLeft } from "../src/subscription/service.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "./harness.ts";

const V2RAY = "/usr/bin/v2ray";
const HAVE_V2RAY = existsSync(V2RAY);
// CI installs v2ray (.ci/run), so only a local machine without it may skip.
const SKIP = !HAVE_V2RAY && !process.env.CI;
if (SKIP)
  console.warn(`tests/v2ray-client.test.ts skipped: ${V2RAY} is not installed (apt-get install v2ray)`);

const FILE = randomBytes(256 * 1024);
/** A refused VMess client is not reset, it hangs (node-protocol.md §4): give up after this. */
const REFUSED_TIMEOUT_MS = 3_000;
const DELIVER_TIMEOUT_MS = 20_000;

// ---- v2rayN's decoding of a subscription (written from v2rayN's Fmt handlers, not our code) ----

/** v2rayN Utils.Base64Decode: whitespace dropped, URL-safe alphabet accepted, padding restored. */
function v2raynBase64(text: string): string {
  let s = text.trim().replace(/\s/g, "").replace(/-/g, "+").replace(/_/g, "/");
  if (s.length % 4 > 0) s += "=".repeat(4 - (s.length % 4));
  return Buffer.from(s, "base64").toString("utf8");
}

interface VmessShare {
  kind: "vmess";
  name: string;
  address: string;
  port: number;
  id: string;
  alterId: number;
  security: string;
  network: string;
  headerType: string;
  host: string;
  path: string;
  tls: string;
  sni: string;
}
interface SsShare {
  kind: "ss";
  name: string;
  address: string;
  port: number;
  method: string;
  password: string;
}
type Share = VmessShare | SsShare;

/** VmessFmt: `vmess://` + base64 of the "ver 2" JSON; port and aid may be strings or numbers. */
function decodeVmess(uri: string): VmessShare {
  const json = JSON.parse(v2raynBase64(uri.slice("vmess://".length))) as Record<string, unknown>;
  const text = (key: string) => (json[key] === undefined || json[key] === null ? "" : String(json[key]));
  return {
    kind: "vmess",
    name: text("ps"),
    address: text("add"),
    port: Number.parseInt(text("port"), 10),
    id: text("id"),
    alterId: Number.parseInt(text("aid") || "0", 10),
    security: text("scy") || "auto",
    network: text("net") || "tcp",
    headerType: text("type") || "none",
    host: text("host"),
    path: text("path"),
    tls: text("tls"),
    sni: text("sni"),
  };
}

/** ShadowsocksFmt SIP002: userinfo is `method:password` when it holds a colon, else base64 of it. */
function decodeSs(uri: string): SsShare {
  const rest = uri.slice("ss://".length);
  const hash = rest.indexOf("#");
  const name = hash >= 0 ? decodeURIComponent(rest.slice(hash + 1)) : "";
  const main = (hash >= 0 ? rest.slice(0, hash) : rest).split("/?")[0] ?? "";
  const at = main.lastIndexOf("@");
  if (at < 0) throw new Error(`not a SIP002 link: ${uri}`);
  const rawUserInfo = decodeURIComponent(main.slice(0, at));
  const userInfo = rawUserInfo.includes(":") ? rawUserInfo : v2raynBase64(rawUserInfo);
  const colon = userInfo.indexOf(":");
  const hostPort = main.slice(at + 1);
  const portAt = hostPort.lastIndexOf(":");
  return {
    kind: "ss",
    name,
    address: hostPort.slice(0, portAt).replace(/^\[|\]$/g, ""),
    port: Number.parseInt(hostPort.slice(portAt + 1), 10),
    method: userInfo.slice(0, colon),
    password: userInfo.slice(colon + 1),
  };
}

/** The subscription body: base64 of one share link a line. */
function decodeSubscription(body: string): Share[] {
  return v2raynBase64(body)
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      if (line.startsWith("vmess://")) return decodeVmess(line);
      if (line.startsWith("ss://")) return decodeSs(line);
      throw new Error(`unexpected share link: ${line}`);
    });
}

// ---- a v2ray client config from decoded shares: one http inbound per share ----

function outboundFor(share: Share, tag: string) {
  if (share.kind === "ss") {
    return {
      tag,
      protocol: "shadowsocks",
      settings: {
        servers: [
          { address: share.address, port: share.port, method: share.method, password: share.password },
        ],
      },
    };
  }
  if (share.headerType !== "none") throw new Error(`header type ${share.headerType} is not expected here`);
  const tls = share.tls === "tls";
  return {
    tag,
    protocol: "vmess",
    settings: {
      vnext: [
        {
          address: share.address,
          port: share.port,
          users: [{ id: share.id, alterId: share.alterId, security: share.security }],
        },
      ],
    },
    streamSettings: {
      network: share.network,
      security: tls ? "tls" : "none",
      ...(tls ? { tlsSettings: { serverName: share.sni || share.host || share.address } } : {}),
      ...(share.network === "ws"
        ? { wsSettings: { path: share.path || "/", headers: share.host ? { Host: share.host } : {} } }
        : {}),
    },
  };
}

function clientConfig(shares: Share[], httpPorts: number[]) {
  return {
    log: { loglevel: "warning" },
    inbounds: shares.map((_, index) => ({
      tag: `in-${index}`,
      listen: "127.0.0.1",
      port: httpPorts[index],
      protocol: "http",
      settings: {},
    })),
    outbounds: shares.map((share, index) => outboundFor(share, `out-${index}`)),
    routing: {
      rules: shares.map((_, index) => ({
        type: "field",
        inboundTag: [`in-${index}`],
        outboundTag: `out-${index}`,
      })),
    },
  };
}

// ---- processes and ports ----

let workDir = "";
const running = new Set<Subprocess>();

async function portIsFree(port: number): Promise<boolean> {
  try {
    const listener = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    listener.stop(true);
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = listener;
  listener.stop(true);
  return port;
}

/** A port p with p+1 and p+2 also free: the node's vmesh_tcp, vmesh_ws and ss inbounds. */
async function freePortRun(length: number): Promise<number> {
  for (;;) {
    const first = await freePort();
    if (first + length > 65_535) continue;
    const rest = await Promise.all(Array.from({ length: length - 1 }, (_, i) => portIsFree(first + i + 1)));
    if (rest.every(Boolean)) return first;
  }
}

async function canConnect(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

/** Starts `v2ray -config <file>` and waits until every port accepts connections. */
async function startV2ray(name: string, config: unknown, ports: number[]): Promise<Subprocess> {
  const file = join(workDir, `${name}.json`);
  const log = join(workDir, `${name}.log`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  writeFileSync(log, "");
  const child = Bun.spawn([V2RAY, "-config", file], {
    stdout: Bun.file(log),
    stderr: Bun.file(`${log}.err`),
  });
  running.add(child);
  const deadline = Date.now() + 15_000;
  for (const port of ports) {
    while (!(await canConnect(port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        const output =
          readFileSync(log, "utf8") + (existsSync(`${log}.err`) ? readFileSync(`${log}.err`, "utf8") : "");
        throw new Error(`v2ray ${name} is not listening on ${port} (exit ${child.exitCode}):\n${output}`);
      }
      await Bun.sleep(25);
    }
  }
  return child;
}

async function stopV2ray(child: Subprocess) {
  child.kill();
  await child.exited;
  running.delete(child);
}

type Outcome = { kind: "delivered"; bytes: Buffer } | { kind: "failed"; reason: string };

/** true when the file arrived intact, else what went wrong (so a failing assertion says why). */
const intact = (outcome: Outcome) =>
  outcome.kind === "delivered"
    ? outcome.bytes.equals(FILE) || `${outcome.bytes.length} other bytes`
    : outcome.reason;

async function fetchThrough(proxyPort: number, url: string, timeoutMs: number): Promise<Outcome> {
  try {
    const response = await fetch(url, {
      proxy: `http://127.0.0.1:${proxyPort}`,
      signal: AbortSignal.timeout(timeoutMs),
      headers: { connection: "close" },
      keepalive: false,
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    if (response.status !== 200) return { kind: "failed", reason: `HTTP ${response.status}` };
    return { kind: "delivered", bytes };
  } catch (error) {
    return { kind: "failed", reason: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

// ---- the panel side ----

let server: TestServer;
let admin: ApiClient;
let customer: { client: ApiClient; user: UserRow };
let agent: AgentRow;
let nodePort = 0;
let apiPort = 0;
let fileServer: ReturnType<typeof Bun.serve>;
let fileUrl = "";

async function ok<T>(client: ApiClient, path: string, payload: unknown = {}): Promise<T> {
  const answer = await client.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

/** Users the node admits: not disabled, with traffic or a running time package left. */
function nodeUsers(): { id: string; uuid: string }[] {
  const ctx = server.context;
  return ctx.db
    .query<UserRow, []>("SELECT * FROM users ORDER BY create_time")
    .all()
    .filter((user) => {
      const left = trafficLeft(ctx, user);
      return !user.disabled && (left.quota > 0 || left.permanent > 0);
    })
    .map((user) => ({ id: user.id, uuid: user.proxy_secret }));
}

/** The node's server config, from what the panel holds now. */
function serverConfig() {
  const ctx = server.context;
  const { config, warnings } = renderCoreConfig({
    agent: findAgentRow(ctx, agent.id) as AgentRow,
    lines: listLines(ctx, agent.id),
    users: nodeUsers(),
    dialect: "v2ray",
    apiPort,
    listen: "127.0.0.1",
  });
  expect(warnings).toEqual([]);
  return config;
}

const serverPorts = () => [apiPort, nodePort, nodePort + 1, nodePort + 2];

async function subscription(userkey: string): Promise<Response> {
  return fetch(`${server.url}/api/subscript/v2ray/${customer.user.id}/${userkey}`);
}

/** Fetches the subscription, decodes it as v2rayN does and starts a client for it. */
async function clientFor(name: string, userkey: string): Promise<{ shares: Share[]; ports: number[] }> {
  const response = await subscription(userkey);
  expect(response.status).toBe(200);
  const shares = decodeSubscription(await response.text());
  const ports = await Promise.all(shares.map(() => freePortRun(1)));
  await startV2ray(name, clientConfig(shares, ports), ports);
  return { shares, ports };
}

beforeAll(async () => {
  if (SKIP) return;
  workDir = mkdtempSync(join(tmpdir(), "ferry-v2ray-"));
  server = await startTestServer();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  customer = await loggedInClient(server);
  tx(server.context.db, () =>
    changeTraffic(server.context.db, {
      userId: customer.user.id,
      type: "buy",
      desc: "测试流量",
      traffic: 10 * GB,
      now: Date.now(),
      timeZone: server.context.settings.get("timezone"),
    }),
  );

  nodePort = await freePortRun(3);
  apiPort = await freePortRun(1);
  const made = await ok<Agent>(admin, "/api/admin/agents/update", {
    name: "本机节点",
    type: "v2ray",
    ip: "127.0.0.1",
    ctrl_port: 888,
    zz_port: nodePort,
    port: nodePort,
    public_port: nodePort,
    serverType: "ubuntu_x86",
  });
  for (const [name, protocol] of [
    ["本机 TCP", "vmesh_tcp"],
    ["本机 WS", "vmesh_ws"],
    ["本机 SS", "ss"],
  ]) {
    await ok<AgentLine>(admin, "/api/admin/agent_line/update", {
      name,
      agentID: made._id,
      protocol,
      bridge: "none",
    });
  }
  agent = findAgentRow(server.context, made._id) as AgentRow;

  fileServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) =>
      new URL(request.url).pathname === "/file.bin"
        ? new Response(FILE)
        : new Response(null, { status: 404 }),
  });
  fileUrl = `http://127.0.0.1:${fileServer.port}/file.bin`;
});

afterAll(async () => {
  for (const child of running) child.kill();
  await Promise.all([...running].map((child) => child.exited));
  fileServer?.stop(true);
  await server?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe.skipIf(SKIP)("a v2rayN subscription in real v2ray", () => {
  let nodeCore: Subprocess;
  let oldClient: { shares: Share[]; ports: number[] };

  test("the file comes through VMess TCP, VMess WebSocket and Shadowsocks byte for byte", async () => {
    nodeCore = await startV2ray("node", serverConfig(), serverPorts());
    oldClient = await clientFor("client-old", customer.user.userkey);

    const described = oldClient.shares.map((share) =>
      share.kind === "vmess"
        ? `${share.name}|vmess|${share.network}|${share.port}`
        : `${share.name}|ss|${share.port}`,
    );
    expect(described).toEqual([
      `本机 TCP [1x]|vmess|tcp|${nodePort}`,
      `本机 WS [1x]|vmess|ws|${nodePort + 1}`,
      `本机 SS [1x]|ss|${nodePort + 2}`,
    ]);

    const outcomes = await Promise.all(
      oldClient.ports.map((port) => fetchThrough(port, fileUrl, DELIVER_TIMEOUT_MS)),
    );
    expect(outcomes.map(intact)).toEqual([true, true, true]);
  }, 60_000);

  test("after reset_userkey the old client is refused everywhere, the old URL is 404, and the new one works", async () => {
    // Control: a restart alone (same users) keeps the old client working.
    await stopV2ray(nodeCore);
    nodeCore = await startV2ray("node-restarted", serverConfig(), serverPorts());
    const restarted = await Promise.all(
      oldClient.ports.map((port) => fetchThrough(port, fileUrl, DELIVER_TIMEOUT_MS)),
    );
    expect(restarted.map(intact)).toEqual([true, true, true]);

    const oldKey = customer.user.userkey;
    const { userkey: newKey } = await ok<{ userkey: string }>(customer.client, "/api/user/reset_userkey");
    expect(newKey).not.toBe(oldKey);

    await stopV2ray(nodeCore);
    nodeCore = await startV2ray("node-after-reset", serverConfig(), serverPorts());

    const refused = await Promise.all(
      oldClient.ports.map((port) => fetchThrough(port, fileUrl, REFUSED_TIMEOUT_MS)),
    );
    expect(refused.map((outcome) => outcome.kind)).toEqual(["failed", "failed", "failed"]);

    const stale = await subscription(oldKey);
    expect(stale.status).toBe(404);

    const newClient = await clientFor("client-new", newKey);
    expect(newClient.shares).toHaveLength(3);
    const outcomes = await Promise.all(
      newClient.ports.map((port) => fetchThrough(port, fileUrl, DELIVER_TIMEOUT_MS)),
    );
    expect(outcomes.map(intact)).toEqual([true, true, true]);
  }, 60_000);
});
