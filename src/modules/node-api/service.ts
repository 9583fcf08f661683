/**
 * The node API's data (node-protocol.md §1, issue 5): which node is calling, what it serves, which
 * users it admits, and the online IPs nodes report for device limits.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { businessDay } from "../../lib/time.ts";
import { DEFAULT_DAILY_LIMIT } from "../../lib/traffic.ts";
import { type CoreAgent, INBOUND_TAG } from "../../node-program/core-config.ts";
import { sameSecret } from "../../rpc/ids.ts";
import { recordAudit } from "../audit/service.ts";
import { type LineProtocol, PORT_OFFSET } from "../line/schema.ts";
import { lineVisibleSql } from "../line/service.ts";
import type { AgentRow } from "../node-record/service.ts";
import { expireDueTrials } from "../trial/service.ts";
import { dailyQuotaSql } from "../user/limits.ts";
import { markNodeHeard } from "../webhook/node-states.ts";
import { admittedUserNos, recordServedList } from "./admission.ts";
import { recordAliveIps } from "./alive-ips.ts";
import type { AliveReport } from "./report.ts";
import { fullList, keepAndDiff, type NodeUser } from "./user-delta.ts";

/** The agent's own node type: the whole node (every inbound) in one config. */
export const FERRY_NODE_TYPE = "ferry";

/** UniProxy node types (with their aliases) and the line protocol each maps to on our nodes. */
const UNIPROXY_TYPES: Record<string, readonly LineProtocol[]> = {
  vmess: ["vmesh_tcp", "vmesh_ws"],
  v2ray: ["vmesh_tcp", "vmesh_ws"],
  shadowsocks: ["ss", "compat"],
  vless: ["reality"],
  hysteria: ["h2"],
  hysteria2: ["h2"],
};

export type NodeType = typeof FERRY_NODE_TYPE | keyof typeof UNIPROXY_TYPES;

export function isNodeType(value: string): value is NodeType {
  return value === FERRY_NODE_TYPE || Object.hasOwn(UNIPROXY_TYPES, value);
}

/** The node a call is from: `node_id` is its integer id (or its _id) and `token` its own API token. */
export async function authenticateNode(
  ctx: AppContext,
  nodeId: string,
  token: string,
): Promise<AgentRow | null> {
  const row = /^\d{1,15}$/.test(nodeId)
    ? await ctx.db.get<AgentRow>("SELECT * FROM agents WHERE node_no = ?", Number(nodeId))
    : await ctx.db.get<AgentRow>("SELECT * FROM agents WHERE id = ?", nodeId.toLowerCase());
  if (!row) return null;
  return sameSecret(token, row.api_token) ? row : null;
}

/** Version the calling agent runs: `ferry-agent/<v>` from our agent, else the client's User-Agent. */
export function agentVersionFrom(userAgent: string): string {
  const ours = /^ferry-agent\/(\S+)/.exec(userAgent);
  return (ours?.[1] ?? userAgent).slice(0, 40);
}

/** A call from the node: it is alive, and this is the version it runs. */
export async function touchNode(ctx: AppContext, row: AgentRow, version: string, now = Date.now()) {
  if (now - row.last_seen_time < 5000 && row.agent_version === version && row.down_since === 0) return;
  const touch = async () =>
    await ctx.db.run(
      "UPDATE agents SET last_seen_time = ?, agent_version = ? WHERE id = ?",
      now,
      version,
      row.id,
    );
  if (row.down_since === 0) return void (await touch());
  // Heard again after an outage: node.up goes with the write (webhook/node-states.ts).
  await tx(ctx.db, async () => {
    await touch();
    await markNodeHeard(ctx, row, now);
  });
}

/** The node received a changed config or user list (seed 001 §2.3 update count). */
export async function countConfigUpdate(ctx: AppContext, agentId: string) {
  await ctx.db.run("UPDATE agents SET update_config_times = update_config_times + 1 WHERE id = ?", agentId);
}

export async function clearUpdateCounts(ctx: AppContext) {
  await tx(ctx.db, async () => {
    const cleared = (
      await ctx.db.run("UPDATE agents SET update_config_times = 0 WHERE update_config_times <> 0")
    ).changes;
    await recordAudit(ctx.db, { action: "node.clear_updatetimes", diff: { nodesCleared: { new: cleared } } });
  });
}

interface NodeLine {
  protocol: LineProtocol;
}

async function nodeLines(ctx: AppContext, agentId: string): Promise<NodeLine[]> {
  return await ctx.db.all<NodeLine>(
    "SELECT DISTINCT protocol FROM agent_lines WHERE agent_id = ? ORDER BY protocol",
    agentId,
  );
}

const CORE_COLUMNS = [
  "type",
  "ip",
  "host",
  "port",
  "ss_method",
  "ws_path",
  "reality_private_key",
  "reality_short_id",
  "hy2_obfs_password",
  "ss_server_key",
] as const satisfies readonly (keyof CoreAgent)[];

/** What our agent needs to render the core's config (secrets included: it is the node's own). */
export interface FerryNodeConfig {
  protocol: typeof FERRY_NODE_TYPE;
  node_id: number;
  name: string;
  ctrl_port: number;
  node: CoreAgent;
  lines: NodeLine[];
  /** Inbound tags, so the agent can label its reports. */
  inbounds: string[];
  base_config: { push_interval: number; pull_interval: number };
}

async function baseConfig(ctx: AppContext) {
  return {
    push_interval: await ctx.settings.get("trafficStasticDuration"),
    pull_interval: await ctx.settings.get("updateV2rayDuration"),
  };
}

/**
 * The `config` answer. For `ferry` the whole node; for a UniProxy type the one inbound of that
 * protocol in Xboard's shape (node-protocol.md §1.3), or null when the node serves none.
 */
export async function nodeConfig(ctx: AppContext, row: AgentRow, type: NodeType): Promise<object | null> {
  const lines = await nodeLines(ctx, row.id);
  if (type === FERRY_NODE_TYPE) {
    const node = Object.fromEntries(
      CORE_COLUMNS.map((column) => [column, row[column]]),
    ) as unknown as CoreAgent;
    const config: FerryNodeConfig = {
      protocol: FERRY_NODE_TYPE,
      node_id: row.node_no,
      name: row.name,
      ctrl_port: row.ctrl_port,
      node,
      lines,
      inbounds: [...new Set(lines.map((line) => INBOUND_TAG[line.protocol]))],
      base_config: await baseConfig(ctx),
    };
    return config;
  }
  const wanted = UNIPROXY_TYPES[type] ?? [];
  const protocol = wanted.find((candidate) => lines.some((line) => line.protocol === candidate));
  if (!protocol) return null;
  return await uniproxyConfig(ctx, row, protocol);
}

async function uniproxyConfig(ctx: AppContext, row: AgentRow, protocol: LineProtocol): Promise<object> {
  const common = {
    listen_ip: "0.0.0.0",
    server_port: row.port + PORT_OFFSET[protocol],
    base_config: await baseConfig(ctx),
  };
  switch (protocol) {
    case "vmesh_tcp":
      return { protocol: "vmess", ...common, network: "tcp", networkSettings: null, tls: 0, multiplex: null };
    case "vmesh_ws": {
      const networkSettings = { path: row.ws_path, headers: { Host: row.host || row.ip } };
      return { protocol: "vmess", ...common, network: "ws", networkSettings, tls: 0, multiplex: null };
    }
    case "ss":
    case "compat":
      return {
        protocol: "shadowsocks",
        ...common,
        network: null,
        networkSettings: null,
        cipher: row.ss_method,
        plugin: null,
        plugin_opts: null,
        server_key: row.ss_method.startsWith("2022-") ? row.ss_server_key : null,
      };
    case "reality": {
      const tls_settings = {
        server_name: row.host,
        server_port: "443",
        public_key: row.reality_public_key,
        private_key: row.reality_private_key,
        short_id: row.reality_short_id,
        allow_insecure: false,
      };
      return {
        protocol: "vless",
        ...common,
        network: "tcp",
        networkSettings: null,
        network_settings: null,
        tls: 2,
        flow: "xtls-rprx-vision",
        decryption: null,
        tls_settings,
        multiplex: null,
      };
    }
    case "h2":
      return {
        protocol: "hysteria",
        ...common,
        network: null,
        networkSettings: null,
        version: 2,
        host: row.host,
        server_name: row.host,
        tls_settings: { server_name: row.host, allow_insecure: false },
        up_mbps: 0,
        down_mbps: 0,
        obfs: "salamander",
        "obfs-password": row.hy2_obfs_password,
      };
  }
}

export type { NodeUser };

/**
 * The users a node admits: not disabled, with permanent traffic or today's time-package quota
 * (user/limits.ts dailyQuota) left, and able to see at least one of the node's lines (the
 * subscription's visibility rule).
 */
export async function nodeUsers(ctx: AppContext, agentId: string, now = Date.now()): Promise<NodeUser[]> {
  const settings = await ctx.settings.all();
  const today = businessDay(now, settings.timezone);
  const vipSpeed = settings.vip_traffic_thred_rate_limit > 0 ? settings.vip_traffic_thred_rate_limit : null;
  const onQuota = `u.vip_expire_time > ?2
    AND ${dailyQuotaSql("u", "?3")} > CASE WHEN b.daily_usage_day = ?4 THEN b.daily_usage ELSE 0 END`;
  return await ctx.db.all<NodeUser>(
    `SELECT u.node_uid AS id, u.proxy_secret AS uuid,
         CASE WHEN ${onQuota} THEN ?5 END AS speed_limit, NULL AS device_limit
       FROM users u JOIN balances b ON b.user_id = u.id
       WHERE u.disabled = 0
         AND (b.traffic > 0 OR (${onQuota}))
         AND EXISTS (
           SELECT 1 FROM agent_lines l
           WHERE l.agent_id = ?1 AND ${lineVisibleSql("u.id", "u.is_agency", "u.normal_permission", "?2")})
       ORDER BY u.node_uid`,
    agentId,
    now,
    DEFAULT_DAILY_LIMIT,
    today,
    vipSpeed,
  );
}

/** sha1 of the exact body: the ETag of the `config` and `user` answers (Xboard's rule). */
export function bodyEtag(body: string): string {
  return new Bun.CryptoHasher("sha1").update(body).digest("hex");
}

/** The `user` answer: the full list, or (when the node asked with a version this process holds) a delta. */
export type ServedUsers =
  | { kind: "full"; body: string; etag: string }
  | { kind: "delta"; body: string; etag: string };

/**
 * The `user` answer for a node; the node holds this list from now on (admission.ts). Trial traffic
 * due by now is expired first, so a customer whose only traffic it was is not on the list. With
 * `since` (the version the node holds, user-delta.ts) the answer is what changed since, when this
 * process can say it exactly; else, and without `since`, the full list as before.
 */
export async function servedUserList(
  ctx: AppContext,
  row: AgentRow,
  now = Date.now(),
  since = "",
): Promise<ServedUsers> {
  await expireDueTrials(ctx, now);
  const list = fullList(await nodeUsers(ctx, row.id, now));
  await recordServedList(
    ctx,
    row,
    list.users.map((user) => user.id),
    list.version,
    now,
  );
  const delta = keepAndDiff(list, since);
  if (delta) return { kind: "delta", body: JSON.stringify(delta), etag: list.version };
  return { kind: "full", body: list.body, etag: list.version };
}

/** Keeps a node's checked alive report for the users it may report (the others are dropped). */
export async function keepAlive(ctx: AppContext, agentId: string, report: AliveReport, now = Date.now()) {
  const admitted = await admittedUserNos(ctx, agentId, [...report.keys()], now);
  await recordAliveIps(
    ctx.db,
    agentId,
    [...report].filter(([userNo]) => admitted.has(userNo)),
    now,
  );
}
