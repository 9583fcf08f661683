import { z } from "zod";
import { optionalId, recordId } from "../../lib/id-schema.ts";

/** Seed 001 §9. */
export const NODE_TYPES = ["v2ray", "h2", "reality"] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const SERVER_TYPES = [
  "apine",
  "ubuntu_x86",
  "ubuntu_arm",
  "ubuntu_guonei",
  "ubuntu_reality",
  "alpine_reality",
] as const;
export type ServerType = (typeof SERVER_TYPES)[number];

/** How the back office names each install flavour; the wire names stay (seed 001 spells alpine "apine"). */
export const SERVER_TYPE_LABELS: Record<ServerType, string> = {
  apine: "Alpine",
  ubuntu_x86: "Ubuntu x86",
  ubuntu_arm: "Ubuntu ARM",
  ubuntu_guonei: "Ubuntu 国内",
  ubuntu_reality: "Ubuntu Reality",
  alpine_reality: "Alpine Reality",
};

/**
 * Shadowsocks ciphers a node may use: the classic AEAD three every client accepts, and the two
 * AES 2022 methods (subscription-formats.md §2). aes-192-gcm and 2022-chacha are left out on purpose.
 */
export const SS_METHODS = [
  "aes-256-gcm",
  "aes-128-gcm",
  "chacha20-ietf-poly1305",
  "2022-blake3-aes-128-gcm",
  "2022-blake3-aes-256-gcm",
] as const;
export type SsMethod = (typeof SS_METHODS)[number];
export const isSs2022 = (method: string) => method.startsWith("2022-");

export interface Country {
  code: string;
  name: string;
  flag: string;
}

/** The node as the back office sees it (seed 001 §3 Agent). Secrets are never part of it. */
export interface Agent {
  _id: string;
  index: number;
  name: string;
  country: Country;
  type: NodeType;
  ip: string;
  host: string;
  ctrl_port: number;
  zz_port: number;
  port: number;
  public_port: number;
  desc: string;
  warp: boolean;
  open_log: boolean;
  serverType: ServerType;
  ssh_port: number;
  ssh_username: string;
  /** The SSH password is write-only: the list only says whether one is stored. */
  hasSshPassword: boolean;
  ss_method: SsMethod;
  ws_path: string;
  /** Public half of the Reality key pair (the private half stays on the server and the node). */
  reality_public_key: string;
  reality_short_id: string;
  /** Normal while the node agent's heartbeats arrive (issue 5). */
  status: boolean;
  agent_version: string;
  updateConfigTimes: number;
  /** The node's integer id for the node API and its install command. */
  nodeNo: number;
  /** When the node last called the node API (ms; 0 = never). */
  lastSeenTime: number;
  /** Users with traffic in the node's last report. */
  onlineUsers: number;
  /** Latency from the panel in ms; 0 = not measured yet. */
  speed: number;
  /** Anomalies kept (one per user and day, 30 days): traffic it reported for users it was not given. */
  anomalies: number;
}

/**
 * Why a node's report for a user was not charged: the user exists but was not on the node's list,
 * no user has that id, or the row sums the users past the node's daily cap.
 */
export type AnomalyReason = "not_admitted" | "unknown_user" | "others";

/** Traffic a node reported for a user it was not given, summed per business day (issue 11). */
export interface NodeAnomaly {
  day: string;
  /** The user id as the node reported it; 0 for the "others" row. */
  userNo: number;
  /** The user's e-mail; empty when no user has that id. */
  email: string;
  reason: AnomalyReason;
  upload: number;
  download: number;
  reports: number;
  firstTime: number;
  lastTime: number;
}

/** What a customer sees of a node on /agents (seed 000 §3 Agent node). */
export interface PublicAgent {
  name: string;
  desc: string;
  country: { name: string; flag: string };
  speed: number;
  orderID: number;
}

/**
 * How a node is doing: 正常 while its agent's calls arrive, 异常 once they stopped, 未连接 while it
 * has never called the panel (just added, agent not installed yet).
 */
export type NodeState = "ok" | "error" | "never";
export const NODE_STATE_LABELS: Record<NodeState, string> = { ok: "正常", error: "异常", never: "未连接" };
export const nodeState = (agent: Pick<Agent, "status" | "lastSeenTime">): NodeState =>
  agent.status ? "ok" : agent.lastSeenTime === 0 ? "never" : "error";

type NodeSetup = Pick<Agent, "ctrl_port" | "zz_port" | "port" | "public_port" | "serverType">;

/** Form defaults when the type changes (seed 001 §2.3.1). Fields a type does not name stay as typed. */
export function typeDefaults(type: NodeType): Partial<NodeSetup> {
  if (type === "h2") return { ctrl_port: 999, zz_port: 443, serverType: "ubuntu_x86" };
  if (type === "reality") {
    return { ctrl_port: 888, zz_port: 443, port: 443, public_port: 443, serverType: "ubuntu_reality" };
  }
  return { ctrl_port: 888, serverType: "ubuntu_x86" };
}

/** The ports the seed leaves to the implementation: the core's port and the relay port. */
const UNNAMED_DEFAULTS: NodeSetup = {
  ctrl_port: 888,
  zz_port: 20_000,
  port: 10_000,
  public_port: 10_000,
  serverType: "ubuntu_x86",
};

/**
 * Every port and the install flavour of a new node of `type` (the back-office form and
 * `ferry node add`): the type's seed defaults, the rest from UNNAMED_DEFAULTS; clients dial the
 * core's port directly unless the type names a public port.
 */
export function newNodeDefaults(type: NodeType): NodeSetup {
  const named = typeDefaults(type);
  const port = named.port ?? UNNAMED_DEFAULTS.port;
  return { ...UNNAMED_DEFAULTS, ...named, port, public_port: named.public_port ?? port };
}

const port = z.number().int().min(1, "端口必须在 1-65535 之间").max(65_535, "端口必须在 1-65535 之间");
const id = recordId();
const address = z
  .string()
  .trim()
  .min(1, "IP 不能为空")
  .max(253)
  .regex(/^[0-9A-Za-z.:[\]-]+$/, "IP 或域名格式错误");
const hostName = z
  .string()
  .trim()
  .max(253)
  .regex(/^[0-9A-Za-z.-]*$/, "域名格式错误");

/** `/api/admin/agents/update`: without `_id` it creates a node (and its secrets). */
export const agentInput = z
  .object({
    _id: optionalId,
    index: z.number().int().min(0).max(1_000_000).default(0),
    name: z.string().trim().min(1, "名称不能为空").max(100),
    country: z.object({ code: z.string().trim().max(8).default("") }).default({ code: "" }),
    type: z.enum(NODE_TYPES, "节点类型错误"),
    ip: address,
    host: hostName.default(""),
    ctrl_port: port,
    zz_port: port,
    port,
    public_port: port,
    desc: z.string().max(500).default(""),
    warp: z.boolean().default(false),
    open_log: z.boolean().default(false),
    serverType: z.enum(SERVER_TYPES, "服务器类型错误"),
    ssh_port: port.default(22),
    ssh_username: z.string().trim().max(100).default(""),
    /** Empty keeps the stored password. */
    ssh_password: z.string().max(200).default(""),
    ss_method: z.enum(SS_METHODS, "加密方式错误").default("aes-256-gcm"),
  })
  .refine((agent) => agent.type !== "reality" || agent.host !== "", {
    message: "Reality 节点需要填写伪装域名（host）",
    path: ["host"],
  });
export type AgentInput = z.output<typeof agentInput>;

/**
 * One node named by its id: `id`, the node itself (`_id`, seed: upgrade_agentserver sends the
 * agent) or `agentid` (seed: manual_update_agent).
 */
export const agentRefInput = z
  .object({ id: id.optional(), _id: id.optional(), agentid: id.optional() })
  .refine((ref) => (ref.id ?? ref._id ?? ref.agentid) !== undefined, "缺少节点 id")
  .transform((ref) => ({ id: (ref.id ?? ref._id ?? ref.agentid) as string }));
