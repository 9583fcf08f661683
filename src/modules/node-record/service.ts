import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId, randomHex } from "../../rpc/ids.ts";
import { type AuditDiff, createDiff, editDiff, recordAudit, recordDelete } from "../audit/service.ts";
import { anomalyCounts } from "../node-api/anomalies.ts";
import { SECRET_MASK } from "../settings/schema.ts";
import { countryOf } from "./countries.ts";
import type { Agent, AgentInput, NodeType, PublicAgent, ServerType, SsMethod } from "./schema.ts";

/** A node row, secrets included: only the panel and the node's own config may see all of it. */
export interface AgentRow {
  id: string;
  sort_index: number;
  name: string;
  country_code: string;
  type: NodeType;
  ip: string;
  host: string;
  ctrl_port: number;
  zz_port: number;
  port: number;
  public_port: number;
  desc: string;
  warp: number;
  open_log: number;
  server_type: ServerType;
  ssh_port: number;
  ssh_username: string;
  ssh_password: string;
  ss_method: SsMethod;
  ws_path: string;
  api_token: string;
  reality_private_key: string;
  reality_public_key: string;
  reality_short_id: string;
  hy2_obfs_password: string;
  ss_server_key: string;
  last_seen_time: number;
  agent_version: string;
  update_config_times: number;
  speed: number;
  create_time: number;
  /** The node's integer id on the node API (UniProxy `node_id`). */
  node_no: number;
  last_push_time: number;
  online_users: number;
  /** ETag of the user list the node holds now (node/admission.ts). */
  served_users_etag: string;
  /** When the webhook sender found the node silent (node.down); 0 while it is not (webhook/node-states.ts). */
  down_since: number;
}

/** A node counts as normal while it was heard from within this many update intervals (issue 5). */
export const MISSED_INTERVALS = 3;

export function agentStatus(row: AgentRow, updateSeconds: number, now = Date.now()): boolean {
  return row.last_seen_time > 0 && now - row.last_seen_time <= MISSED_INTERVALS * updateSeconds * 1000;
}

export function toAgent(row: AgentRow, updateSeconds: number, now: number, anomalies: number): Agent {
  return {
    _id: row.id,
    index: row.sort_index,
    name: row.name,
    country: countryOf(row.country_code),
    type: row.type,
    ip: row.ip,
    host: row.host,
    ctrl_port: row.ctrl_port,
    zz_port: row.zz_port,
    port: row.port,
    public_port: row.public_port,
    desc: row.desc,
    warp: row.warp === 1,
    open_log: row.open_log === 1,
    serverType: row.server_type,
    ssh_port: row.ssh_port,
    ssh_username: row.ssh_username,
    hasSshPassword: row.ssh_password !== "",
    ss_method: row.ss_method,
    ws_path: row.ws_path,
    reality_public_key: row.reality_public_key,
    reality_short_id: row.reality_short_id,
    status: agentStatus(row, updateSeconds, now),
    agent_version: row.agent_version,
    updateConfigTimes: row.update_config_times,
    nodeNo: row.node_no,
    lastSeenTime: row.last_seen_time,
    onlineUsers: row.online_users,
    speed: row.speed,
    anomalies,
  };
}

export async function findAgentRow(ctx: AppContext, id: string): Promise<AgentRow | null> {
  return await ctx.db.get<AgentRow>("SELECT * FROM agents WHERE id = ?", id);
}

export async function listAgentRows(ctx: AppContext): Promise<AgentRow[]> {
  return await ctx.db.all<AgentRow>("SELECT * FROM agents ORDER BY sort_index, create_time");
}

export async function listAgents(ctx: AppContext, now = Date.now()): Promise<Agent[]> {
  const updateSeconds = await ctx.settings.get("updateV2rayDuration");
  const anomalies = await anomalyCounts(ctx, now);
  return (await listAgentRows(ctx)).map((row) =>
    toAgent(row, updateSeconds, now, anomalies.get(row.id) ?? 0),
  );
}

/** One node as the back office sees it, with its anomaly count. */
export async function findAgent(ctx: AppContext, id: string, now = Date.now()): Promise<Agent | null> {
  const row = await findAgentRow(ctx, id);
  if (!row) return null;
  return toAgent(
    row,
    await ctx.settings.get("updateV2rayDuration"),
    now,
    (await anomalyCounts(ctx, now)).get(id) ?? 0,
  );
}

/** Nodes that carry at least one public line, for the customer's /agents page. */
export async function listPublicAgents(ctx: AppContext): Promise<PublicAgent[]> {
  return (
    await ctx.db.all<AgentRow>(`SELECT * FROM agents WHERE id IN (SELECT agent_id FROM agent_lines WHERE public = 1)
       ORDER BY sort_index, create_time`)
  ).map((row) => {
    const country = countryOf(row.country_code);
    return {
      name: row.name,
      desc: row.desc,
      country: { name: country.name, flag: country.flag },
      speed: row.speed,
      orderID: row.sort_index,
    };
  });
}

/** base64url of raw bytes, as Xray and every client write Reality keys. */
const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

/** A fresh X25519 key pair in Xray's encoding (`xray x25519`): 43 base64url characters each. */
export function realityKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync("x25519");
  const priv = privateKey.export({ format: "jwk" }).d;
  const pub = publicKey.export({ format: "jwk" }).x;
  if (!priv || !pub) throw new Error("x25519 key export failed");
  return { privateKey: priv, publicKey: pub };
}

/** Everything a node keeps secret, made here and never typed by hand. */
function newSecrets() {
  const { privateKey, publicKey } = realityKeyPair();
  return {
    api_token: randomHex(32),
    reality_private_key: privateKey,
    reality_public_key: publicKey,
    reality_short_id: randomHex(8),
    hy2_obfs_password: base64url(randomBytes(18)),
    // 32 random bytes; 2022-blake3-aes-128-gcm uses the first 16 (see ssServerKey).
    ss_server_key: randomBytes(32).toString("base64"),
    ws_path: `/${randomHex(6)}`,
  };
}

export async function saveAgent(ctx: AppContext, input: AgentInput, now = Date.now()): Promise<Agent> {
  const fields = {
    sort_index: input.index,
    name: input.name,
    country_code: input.country.code.toUpperCase(),
    type: input.type,
    ip: input.ip,
    host: input.host,
    ctrl_port: input.ctrl_port,
    zz_port: input.zz_port,
    port: input.port,
    public_port: input.public_port,
    desc: input.desc,
    warp: input.type === "v2ray" && input.warp ? 1 : 0,
    open_log: input.type === "v2ray" && input.open_log ? 1 : 0,
    server_type: input.serverType,
    ssh_port: input.ssh_port,
    ssh_username: input.ssh_username,
    ss_method: input.ss_method,
  };
  const id = await tx(ctx.db, async () => {
    const before = input._id ? await findAgentRow(ctx, input._id) : null;
    const id = await writeAgent(ctx, input, fields, now);
    await recordAgentSave(ctx, id, before, (await findAgentRow(ctx, id)) as AgentRow);
    return id;
  });
  return (await findAgent(ctx, id, now)) as Agent;
}

const AGENT_KEYS = ["_id", "hasSshPassword"];

/** What the audit trail shows of a node: what an admin sets, the SSH password masked. */
function auditedAgent(row: AgentRow): Record<string, unknown> {
  const { status, agent_version, updateConfigTimes, lastSeenTime, onlineUsers, speed, anomalies, ...set } =
    toAgent(row, 0, 0, 0);
  return { ...set, ssh_password: row.ssh_password ? SECRET_MASK : "" };
}

async function recordAgentSave(ctx: AppContext, id: string, before: AgentRow | null, after: AgentRow) {
  if (!before) {
    await recordAudit(ctx.db, {
      action: "node.create",
      target: id,
      diff: createDiff(auditedAgent(after), AGENT_KEYS),
    });
    return;
  }
  const diff: AuditDiff = editDiff(auditedAgent(before), auditedAgent(after), AGENT_KEYS);
  if (before.ssh_password !== after.ssh_password) {
    diff.ssh_password = {
      old: before.ssh_password ? SECRET_MASK : "",
      new: after.ssh_password ? SECRET_MASK : "",
    };
  }
  if (Object.keys(diff).length > 0) await recordAudit(ctx.db, { action: "node.update", target: id, diff });
}

async function writeAgent(
  ctx: AppContext,
  input: AgentInput,
  fields: Record<string, string | number>,
  now: number,
): Promise<string> {
  if (input._id) {
    const existing = await findAgentRow(ctx, input._id);
    if (!existing) throw new RpcError(Code.notFound, "节点不存在");
    const password = input.ssh_password || existing.ssh_password;
    const columns = Object.keys(fields);
    await ctx.db.run(
      `UPDATE agents SET ${columns.map((c) => `"${c}" = ?`).join(", ")}, ssh_password = ? WHERE id = ?`,
      ...(Object.values(fields) as (string | number)[]),
      password,
      input._id,
    );
    return input._id;
  }
  const row = {
    id: newId(now),
    ...fields,
    ssh_password: input.ssh_password,
    ...newSecrets(),
    create_time: now,
  };
  const columns = Object.keys(row);
  await ctx.db.run(
    `INSERT INTO agents (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
    ...(Object.values(row) as (string | number)[]),
  );
  return row.id;
}

/** Deleting a node deletes its lines (they cannot exist without it). */
export async function deleteAgent(ctx: AppContext, id: string): Promise<void> {
  await tx(ctx.db, async () => {
    const removed = await findAgentRow(ctx, id);
    if (!removed) throw new RpcError(Code.notFound, "节点不存在");
    await ctx.db.run("DELETE FROM agents WHERE id = ?", id);
    await recordDelete(ctx.db, "node", id, { name: removed.name, ip: removed.ip, nodeNo: removed.node_no });
  });
}

/** The SS-2022 server PSK for the node's cipher: 16 bytes for aes-128, 32 otherwise. */
export function ssServerKey(row: Pick<AgentRow, "ss_server_key" | "ss_method">): string {
  const bytes = Buffer.from(row.ss_server_key, "base64");
  return bytes.subarray(0, row.ss_method === "2022-blake3-aes-128-gcm" ? 16 : 32).toString("base64");
}
