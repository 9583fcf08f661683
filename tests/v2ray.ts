/**
 * Helpers for tests against Debian's real v2ray: free loopback ports, v2ray processes started from
 * a config and awaited until they listen, a v2rayN-style decoding of the `v2ray` subscription
 * into a client config (one http inbound per share), and fetches through such a client.
 */

import { expect } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { acceptsConnections } from "../src/lib/tcp.ts";
import type { AgentLine } from "../src/modules/line/schema.ts";
import type { Agent } from "../src/modules/node-record/schema.ts";
import { type AgentRow, findAgentRow } from "../src/modules/node-record/service.ts";
import type { ApiClient, TestServer } from "./harness.ts";

export const V2RAY = "/usr/bin/v2ray";

/** CI installs v2ray (.ci/run), so only a local machine without it may skip; says so once. */
export function skipWithoutV2ray(file: string): boolean {
  const skip = !existsSync(V2RAY) && !process.env.CI;
  if (skip) console.warn(`${file} skipped: ${V2RAY} is not installed (apt-get install v2ray)`);
  return skip;
}

// ---- v2rayN's decoding of a subscription (written from v2rayN's Fmt handlers, not our code) ----

/** v2rayN Utils.Base64Decode: whitespace dropped, URL-safe alphabet accepted, padding restored. */
export function v2raynBase64(text: string): string {
  let s = text.trim().replace(/\s/g, "").replace(/-/g, "+").replace(/_/g, "/");
  if (s.length % 4 > 0) s += "=".repeat(4 - (s.length % 4));
  return Buffer.from(s, "base64").toString("utf8");
}

export interface VmessShare {
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
export interface SsShare {
  kind: "ss";
  name: string;
  address: string;
  port: number;
  method: string;
  password: string;
}
export type Share = VmessShare | SsShare;

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

/**
 * The subscription body: base64 of one share link a line. The `#key: value` profile lines on top
 * are no share link: v2rayN's FmtHandler.ResolveConfig gives null for them and the line is skipped.
 */
export function decodeSubscription(body: string): Share[] {
  return v2raynBase64(body)
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
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

export function clientConfig(shares: Share[], httpPorts: number[]) {
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

// ---- ports ----

export async function portIsFree(port: number): Promise<boolean> {
  try {
    const listener = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    listener.stop(true);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ports are drawn below Linux's ephemeral range (32768 and up), so no outgoing connection can take
 * one as its local port between the check and the server binding it; none is handed out twice.
 */
const PORT_RANGE = { low: 20_000, high: 32_000 };
const handedOut = new Set<number>();

/** A port p with p+1 … p+length-1 also free (a node's inbounds sit at fixed offsets). */
export async function freePortRun(length: number): Promise<number> {
  for (;;) {
    const first = PORT_RANGE.low + Math.floor(Math.random() * (PORT_RANGE.high - PORT_RANGE.low - length));
    const ports = Array.from({ length }, (_, i) => first + i);
    if (ports.some((port) => handedOut.has(port))) continue;
    if (!(await Promise.all(ports.map(portIsFree))).every(Boolean)) continue;
    for (const port of ports) handedOut.add(port);
    return first;
  }
}

export const freePort = () => freePortRun(1);

// ---- v2ray processes ----

/** v2ray processes of one test file, each with its config and log in the work directory. */
export class V2rayProcesses {
  readonly running = new Set<Subprocess>();

  constructor(readonly workDir: string) {}

  /** Starts `v2ray -config <file>` and waits until every port accepts connections. */
  async start(name: string, config: unknown, ports: number[]): Promise<Subprocess> {
    const file = join(this.workDir, `${name}.json`);
    const log = join(this.workDir, `${name}.log`);
    writeFileSync(file, JSON.stringify(config, null, 2));
    writeFileSync(log, "");
    const child = Bun.spawn([V2RAY, "-config", file], {
      // This process's environment as it is now (V2RAY_LOCATION_ASSET set by a test).
      env: { ...process.env },
      stdout: Bun.file(log),
      stderr: Bun.file(`${log}.err`),
    });
    this.running.add(child);
    const deadline = Date.now() + 15_000;
    for (const port of ports) {
      while (!(await acceptsConnections(port))) {
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

  async stop(child: Subprocess) {
    child.kill();
    await child.exited;
    this.running.delete(child);
  }

  async stopAll() {
    for (const child of this.running) child.kill();
    await Promise.all([...this.running].map((child) => child.exited));
    this.running.clear();
  }
}

// ---- traffic through a client ----

export type Outcome = { kind: "delivered"; bytes: Buffer } | { kind: "failed"; reason: string };

/** GET `url` through the client's http inbound on `proxyPort`, on a fresh connection. */
export async function fetchThrough(proxyPort: number, url: string, timeoutMs: number): Promise<Outcome> {
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

// ---- geo assets ----

/** Protobuf: a varint, and a length-delimited field. */
function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  bytes.push(rest);
  return bytes;
}
const lengthDelimited = (field: number, bytes: number[]) => [
  (field << 3) | 2,
  ...varint(bytes.length),
  ...bytes,
];

/**
 * A `geoip.dat` (v2ray's GeoIPList: entries of country code and CIDRs) in `dir`, so a config with
 * `geoip:<code>` rules loads in Debian's v2ray, which ships no geo files: point V2RAY_LOCATION_ASSET
 * at `dir`. IPv4 CIDRs only.
 */
export function writeGeoip(dir: string, entries: Record<string, string[]>): void {
  const list = Object.entries(entries).flatMap(([code, cidrs]) => {
    const geoip = [
      ...lengthDelimited(1, [...Buffer.from(code.toUpperCase())]),
      ...cidrs.flatMap((cidr) => {
        const [address, prefix] = cidr.split("/") as [string, string];
        const ip = address.split(".").map(Number);
        return lengthDelimited(2, [...lengthDelimited(1, ip), 2 << 3, ...varint(Number(prefix))]);
      }),
    ];
    return lengthDelimited(1, geoip);
  });
  writeFileSync(join(dir, "geoip.dat"), Uint8Array.from(list));
}

/** An envelope call that must answer code 0; its data. */
export async function ok<T>(client: ApiClient, path: string, payload: unknown = {}): Promise<T> {
  const answer = await client.call<T>(path, payload);
  expect({ path, code: answer.code, msg: answer.msg }).toEqual({ path, code: 0, msg: "ok" });
  return answer.data;
}

/**
 * A v2ray node on this machine, added by the admin as an operator would: three free loopback
 * ports from nodePort for its inbounds, one for its stats API, and a VMess TCP, a VMess WS and a
 * Shadowsocks line on it.
 */
export async function addLoopbackNode(
  server: TestServer,
  admin: ApiClient,
): Promise<{ agent: AgentRow; nodePort: number; apiPort: number }> {
  const nodePort = await freePortRun(3);
  const apiPort = await freePortRun(1);
  const node = await ok<Agent>(admin, "/api/admin/agents/update", {
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
      agentID: node._id,
      protocol,
      bridge: "none",
    });
  }
  return { agent: (await findAgentRow(server.context, node._id)) as AgentRow, nodePort, apiPort };
}
