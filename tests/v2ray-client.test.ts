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
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { tx } from "../src/db/db.ts";
import { GB } from "../src/lib/traffic.ts";
import { changeTraffic } from "../src/modules/ledger/service.ts";
import { listLines } from "../src/modules/line/service.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import { USER_ROW_SELECT, type UserRow } from "../src/modules/user/row.ts";
import { renderCoreConfig } from "../src/node-program/core-config.ts";
import { trafficLeft } from "../src/subscription/service.ts";
import { type ApiClient, loggedInClient, startWithAdmin, type TestServer } from "./harness.ts";
import {
  addLoopbackNode,
  clientConfig,
  decodeSubscription,
  fetchThrough,
  freePortRun,
  type Outcome,
  ok,
  type Share,
  skipWithoutV2ray,
  V2rayProcesses,
} from "./v2ray.ts";

const SKIP = skipWithoutV2ray("tests/v2ray-client.test.ts");

const FILE = randomBytes(256 * 1024);
/** A refused VMess client is not reset, it hangs (node-protocol.md §4): give up after this. */
const REFUSED_TIMEOUT_MS = 3_000;
const DELIVER_TIMEOUT_MS = 20_000;

let workDir = "";
let v2ray: V2rayProcesses;

/** true when the file arrived intact, else what went wrong (so a failing assertion says why). */
const intact = (outcome: Outcome) =>
  outcome.kind === "delivered"
    ? outcome.bytes.equals(FILE) || `${outcome.bytes.length} other bytes`
    : outcome.reason;

// ---- the panel side ----

let server: TestServer;
let admin: ApiClient;
let customer: { client: ApiClient; user: UserRow };
let agent: AgentRow;
let nodePort = 0;
let apiPort = 0;
let fileServer: ReturnType<typeof Bun.serve>;
let fileUrl = "";

/** Users the node admits: not disabled, with traffic or a running time package left. */
async function nodeUsers(): Promise<{ id: string; uuid: string }[]> {
  const ctx = server.context;
  const users: { id: string; uuid: string }[] = [];
  for (const user of await ctx.db.all<UserRow>(`${USER_ROW_SELECT} ORDER BY u.create_time`)) {
    const left = await trafficLeft(ctx, user);
    if (!user.disabled && (left.quota > 0 || left.permanent > 0))
      users.push({ id: user.id, uuid: user.proxy_secret });
  }
  return users;
}

/** The node's server config, from what the panel holds now. */
async function serverConfig() {
  const ctx = server.context;
  const { config, warnings } = renderCoreConfig({
    agent: (await findAgentRow(ctx, agent.id)) as AgentRow,
    lines: await listLines(ctx, agent.id),
    users: await nodeUsers(),
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
  await v2ray.start(name, clientConfig(shares, ports), ports);
  return { shares, ports };
}

beforeAll(async () => {
  if (SKIP) return;
  workDir = mkdtempSync(join(tmpdir(), "ferry-v2ray-"));
  v2ray = new V2rayProcesses(workDir);
  ({ server, admin } = await startWithAdmin());
  customer = await loggedInClient(server);
  await tx(
    server.context.db,
    async () =>
      await changeTraffic(server.context.db, {
        userId: customer.user.id,
        type: "buy",
        desc: "测试流量",
        traffic: 10 * GB,
        now: Date.now(),
        timeZone: await server.context.settings.get("timezone"),
      }),
  );

  ({ agent, nodePort, apiPort } = await addLoopbackNode(server, admin));

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
  await v2ray?.stopAll();
  fileServer?.stop(true);
  await server?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe.skipIf(SKIP)("a v2rayN subscription in real v2ray", () => {
  let nodeCore: Subprocess;
  let oldClient: { shares: Share[]; ports: number[] };

  test("the file comes through VMess TCP, VMess WebSocket and Shadowsocks byte for byte", async () => {
    nodeCore = await v2ray.start("node", await serverConfig(), serverPorts());
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
    await v2ray.stop(nodeCore);
    nodeCore = await v2ray.start("node-restarted", await serverConfig(), serverPorts());
    const restarted = await Promise.all(
      oldClient.ports.map((port) => fetchThrough(port, fileUrl, DELIVER_TIMEOUT_MS)),
    );
    expect(restarted.map(intact)).toEqual([true, true, true]);

    const oldKey = customer.user.userkey;
    const { userkey: newKey } = await ok<{ userkey: string }>(customer.client, "/api/user/reset_userkey");
    expect(newKey).not.toBe(oldKey);

    await v2ray.stop(nodeCore);
    nodeCore = await v2ray.start("node-after-reset", await serverConfig(), serverPorts());

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
