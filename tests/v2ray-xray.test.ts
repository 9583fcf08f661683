/**
 * The Xray JSON subscription against real proxy software (issue 29 §7): an admin makes a node on
 * 127.0.0.1 with VMess TCP, VMess WebSocket and Shadowsocks lines; the customer's
 * `/api/subscript/json/…` configs go to Debian's v2ray (v2fly 4.x, which reads these fields as
 * Xray does) as they are: `v2ray -test` accepts every one for every combination of the profile
 * toggles, and each, run with only its two local ports moved, carries a file byte for byte through
 * the node (v2ray with the server config the panel renders) to a loopback server. Stopping the node
 * shows the file went through it, while the config's own rule still sends a private address direct.
 * Debian ships no geoip.dat: the test writes one holding a `cn` entry (docs/decisions.md, issue 29).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tx } from "../src/db/db.ts";
import { GB } from "../src/lib/traffic.ts";
import { changeTraffic } from "../src/modules/ledger/service.ts";
import { listLines } from "../src/modules/line/service.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import { USER_ROW_SELECT, type UserRow } from "../src/modules/user/row.ts";
import { renderCoreConfig } from "../src/node-program/core-config.ts";
import { trafficLeft } from "../src/subscription/service.ts";
import {
  type ApiClient,
  loggedInClient,
  setUserColumns,
  startWithAdmin,
  type TestServer,
} from "./harness.ts";
import {
  addLoopbackNode,
  fetchThrough,
  freePortRun,
  type Outcome,
  skipWithoutV2ray,
  V2RAY,
  V2rayProcesses,
  writeGeoip,
} from "./v2ray.ts";

const SKIP = skipWithoutV2ray("tests/v2ray-xray.test.ts");

const FILE = randomBytes(128 * 1024);
const DELIVER_TIMEOUT_MS = 20_000;
const REFUSED_TIMEOUT_MS = 3_000;

interface XrayConfig {
  remarks: string;
  inbounds: { tag: string; port: number; protocol: string }[];
  outbounds: { tag: string; protocol: string }[];
}

let workDir = "";
let v2ray: V2rayProcesses;
let server: TestServer;
let admin: ApiClient;
let customer: UserRow;
let agent: AgentRow;
let nodePort = 0;
let apiPort = 0;
let fileServer: ReturnType<typeof Bun.serve>;
let filePort = 0;
const savedAssetDir = process.env.V2RAY_LOCATION_ASSET;

const intact = (outcome: Outcome) =>
  outcome.kind === "delivered"
    ? outcome.bytes.equals(FILE) || `${outcome.bytes.length} other bytes`
    : outcome.reason;

/** The node's server config from what the panel holds (users with traffic left). */
async function serverConfig() {
  const ctx = server.context;
  const users: { id: string; uuid: string }[] = [];
  for (const user of await ctx.db.all<UserRow>(`${USER_ROW_SELECT} ORDER BY u.create_time`)) {
    const left = await trafficLeft(ctx, user);
    if (!user.disabled && (left.quota > 0 || left.permanent > 0))
      users.push({ id: user.id, uuid: user.proxy_secret });
  }
  const { config, warnings } = renderCoreConfig({
    agent: (await findAgentRow(ctx, agent.id)) as AgentRow,
    lines: await listLines(ctx, agent.id),
    users,
    dialect: "v2ray",
    apiPort,
    listen: "127.0.0.1",
  });
  expect(warnings).toEqual([]);
  return config;
}

/** The customer's Xray JSON subscription with the profile toggles set as given. */
async function xrayConfigs(toggles: { in_xinjiang: number; in_foreign: number }): Promise<XrayConfig[]> {
  await setUserColumns(server.context.db, customer.id, toggles);
  const response = await fetch(`${server.url}/api/subscript/json/${customer.id}/${customer.userkey}`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("application/json");
  return JSON.parse(await response.text()) as XrayConfig[];
}

/** `v2ray -test -config <file>`: its verdict, with the reason when it refuses. */
async function v2rayTest(name: string, config: XrayConfig): Promise<string> {
  const file = join(workDir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  const child = Bun.spawn([V2RAY, "-test", "-config", file], {
    env: { ...process.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  await child.exited;
  return child.exitCode === 0 && out.includes("Configuration OK") ? "OK" : `${out}${err}`.trim();
}

/** The config with its SOCKS and HTTP inbounds moved to free ports (several run side by side). */
async function withFreePorts(
  config: XrayConfig,
): Promise<{ config: XrayConfig; http: number; ports: number[] }> {
  const first = await freePortRun(2);
  const ports = config.inbounds.map((_, index) => first + index);
  const inbounds = config.inbounds.map((inbound, index) => ({ ...inbound, port: ports[index] as number }));
  const http = inbounds.find((inbound) => inbound.protocol === "http")?.port as number;
  return { config: { ...config, inbounds }, http, ports };
}

beforeAll(async () => {
  if (SKIP) return;
  workDir = mkdtempSync(join(tmpdir(), "ferry-xray-"));
  // A `cn` entry far from loopback, so geoip:cn rules load and never catch the test's traffic.
  writeGeoip(workDir, { cn: ["1.0.1.0/24"] });
  process.env.V2RAY_LOCATION_ASSET = workDir;
  v2ray = new V2rayProcesses(workDir);
  ({ server, admin } = await startWithAdmin());
  const made = await loggedInClient(server);
  customer = made.user;
  await tx(
    server.context.db,
    async () =>
      await changeTraffic(server.context.db, {
        userId: customer.id,
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
  filePort = fileServer.port as number;
});

afterAll(async () => {
  await v2ray?.stopAll();
  fileServer?.stop(true);
  await server?.close();
  if (savedAssetDir === undefined) delete process.env.V2RAY_LOCATION_ASSET;
  else process.env.V2RAY_LOCATION_ASSET = savedAssetDir;
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe.skipIf(SKIP)("the Xray JSON subscription in real v2ray", () => {
  test("v2ray accepts every config, for every combination of the DNS and abroad toggles", async () => {
    for (const in_xinjiang of [0, 1]) {
      for (const in_foreign of [0, 1]) {
        const configs = await xrayConfigs({ in_xinjiang, in_foreign });
        expect(configs.map((config) => config.remarks)).toEqual([
          "本机 TCP [1x]",
          "本机 WS [1x]",
          "本机 SS [1x]",
        ]);
        for (const [index, config] of configs.entries()) {
          const name = `test-${in_xinjiang}${in_foreign}-${index}`;
          expect({ name, verdict: await v2rayTest(name, config) }).toEqual({ name, verdict: "OK" });
        }
      }
    }
  }, 60_000);

  test("each config carries the file through the node; stopped, the node takes the proxied fetch with it", async () => {
    const node = await v2ray.start("node", await serverConfig(), [
      apiPort,
      nodePort,
      nodePort + 1,
      nodePort + 2,
    ]);
    // Released DNS: the client resolves nothing to pick a rule, so `localhost` goes to the proxy
    // and the node resolves it; an address in a private network meets the direct rule.
    const configs = await xrayConfigs({ in_xinjiang: 1, in_foreign: 0 });
    const clients = await Promise.all(configs.map(withFreePorts));
    expect(clients.map(({ config }) => config.outbounds[0]?.protocol)).toEqual([
      "vmess",
      "vmess",
      "shadowsocks",
    ]);
    await Promise.all(
      clients.map(({ config, ports }, index) => v2ray.start(`client-${index}`, config, ports)),
    );

    const proxied = `http://localhost:${filePort}/file.bin`;
    const direct = `http://127.0.0.1:${filePort}/file.bin`;
    const through = await Promise.all(
      clients.map(({ http }) => fetchThrough(http, proxied, DELIVER_TIMEOUT_MS)),
    );
    expect(through.map(intact)).toEqual([true, true, true]);

    await v2ray.stop(node);
    const cut = await Promise.all(clients.map(({ http }) => fetchThrough(http, proxied, REFUSED_TIMEOUT_MS)));
    expect(cut.map((outcome) => outcome.kind)).toEqual(["failed", "failed", "failed"]);
    const privateNet = await Promise.all(
      clients.map(({ http }) => fetchThrough(http, direct, DELIVER_TIMEOUT_MS)),
    );
    expect(privateNet.map(intact)).toEqual([true, true, true]);
  }, 90_000);
});
