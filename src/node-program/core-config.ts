/**
 * The proxy core's server config for one node (node-protocol.md §3, §5, §7), rendered from panel
 * data: one inbound per distinct protocol among the node's lines, each carrying every user, plus
 * the API inbound, stats and policy the node agent reads per-user traffic through.
 *
 * Two dialects: Debian's v2ray 4.34 (no REALITY, no Hysteria2, no SS-2022, one Shadowsocks user
 * per inbound) and xray-core. What a dialect cannot serve is left out with a warning.
 */

import { type LineProtocol, PORT_OFFSET, PROTOCOLS_BY_NODE_TYPE } from "../modules/line/schema.ts";
import type { LineRow } from "../modules/line/service.ts";
import { isSs2022 } from "../modules/node-record/schema.ts";
import { type AgentRow, ssServerKey } from "../modules/node-record/service.ts";
import { ssUserKey } from "../subscription/proxies.ts";

export type CoreDialect = "v2ray" | "xray";

/** The node columns a core config is made from (secrets included: it is the node's own file). */
export type CoreAgent = Pick<
  AgentRow,
  | "type"
  | "ip"
  | "host"
  | "port"
  | "ss_method"
  | "ws_path"
  | "reality_private_key"
  | "reality_short_id"
  | "hy2_obfs_password"
  | "ss_server_key"
>;

/** A user the node admits: panel id (for the stats e-mail) and proxy UUID (users.proxy_secret). */
export interface CoreUser {
  id: string;
  uuid: string;
}

export interface CoreConfigInput {
  agent: CoreAgent;
  /** The node's lines; only their protocols matter (several lines share one inbound). */
  lines: Pick<LineRow, "protocol">[];
  users: CoreUser[];
  dialect: CoreDialect;
  /** Loopback port of the gRPC API (StatsService, HandlerService). */
  apiPort?: number;
  /** Address the proxy inbounds listen on. */
  listen?: string;
  /** TLS certificate files on the node, needed by Hysteria2 (QUIC always runs TLS). */
  certificate?: { certificateFile: string; keyFile: string };
  /** File v2ray writes accepted connections to (the agent reads online IPs from it, §3). */
  accessLog?: string;
}

export interface CoreInbound {
  tag: string;
  listen: string;
  port: number;
  protocol: string;
  settings: Record<string, unknown>;
  streamSettings?: Record<string, unknown>;
}

export interface CoreConfig {
  log: { loglevel: "warning"; access?: string };
  api: { tag: "api"; services: string[] };
  stats: Record<string, never>;
  policy: { levels: { "0": { statsUserUplink: true; statsUserDownlink: true } } };
  inbounds: CoreInbound[];
  outbounds: { tag: string; protocol: string; settings: Record<string, never> }[];
  routing: { rules: { type: "field"; inboundTag: string[]; outboundTag: string }[] };
}

/** The lab's API port (node-protocol.md §5). */
export const DEFAULT_API_PORT = 10085;
export const API_TAG = "api";

/**
 * The inbound serving each line protocol; compat lines are the ss inbound published again in SSR
 * form. Stats e-mails are `<tag>|<userId>`, so the tag also names what the traffic went through.
 */
export const INBOUND_TAG: Record<LineProtocol, string> = {
  vmesh_tcp: "vmesh_tcp",
  vmesh_ws: "vmesh_ws",
  ss: "ss",
  compat: "ss",
  reality: "reality",
  h2: "h2",
};

/** The Shadowsocks ciphers v2ray 4.34 has (node-protocol.md §4). */
const V2RAY_SS_METHODS: readonly string[] = ["aes-128-gcm", "aes-256-gcm", "chacha20-ietf-poly1305"];

export const userEmail = (tag: string, userId: string) => `${tag}|${userId}`;

type InboundResult = { inbound: CoreInbound } | { warning: string };
type Context = Required<Pick<CoreConfigInput, "listen">> & CoreConfigInput;

function inbound(ctx: Context, protocol: LineProtocol, fields: Omit<CoreInbound, "tag" | "listen" | "port">) {
  return {
    inbound: {
      tag: INBOUND_TAG[protocol],
      listen: ctx.listen,
      port: ctx.agent.port + PORT_OFFSET[protocol],
      ...fields,
    },
  };
}

function vmessClients(ctx: Context, tag: string) {
  return ctx.users.map((user) => ({ id: user.uuid, alterId: 0, level: 0, email: userEmail(tag, user.id) }));
}

function vmessTcp(ctx: Context): InboundResult {
  return inbound(ctx, "vmesh_tcp", {
    protocol: "vmess",
    settings: { clients: vmessClients(ctx, INBOUND_TAG.vmesh_tcp) },
    streamSettings: { network: "tcp", security: "none" },
  });
}

/** Plain ws: with the cf_cdn bridge, TLS ends at the CDN, which forwards to the node unencrypted. */
function vmessWs(ctx: Context): InboundResult {
  const { agent } = ctx;
  return inbound(ctx, "vmesh_ws", {
    protocol: "vmess",
    settings: { clients: vmessClients(ctx, INBOUND_TAG.vmesh_ws) },
    streamSettings: {
      network: "ws",
      security: "none",
      wsSettings: { path: agent.ws_path, headers: { Host: agent.host || agent.ip } },
    },
  });
}

function shadowsocks(ctx: Context): InboundResult {
  const { agent, users } = ctx;
  const tag = INBOUND_TAG.ss;
  const method = agent.ss_method;
  if (ctx.dialect === "v2ray") {
    if (!V2RAY_SS_METHODS.includes(method)) {
      return { warning: `v2ray 4.34 不支持 Shadowsocks 加密方式 ${method}，已省略 Shadowsocks 入站` };
    }
    const [user] = users;
    if (users.length !== 1 || !user) {
      return {
        warning: `v2ray 4.34 的 Shadowsocks 入站只能有一个用户（现有 ${users.length} 个），已省略 Shadowsocks 入站`,
      };
    }
    return inbound(ctx, "ss", {
      protocol: "shadowsocks",
      settings: {
        method,
        password: ssUserKey(method, user.uuid),
        email: userEmail(tag, user.id),
        level: 0,
        network: "tcp,udp",
      },
    });
  }
  // xray multi-user: classic AEAD names the cipher per client; 2022 puts the server key on the
  // inbound and each user's own key on the client (the client joins them as serverKey:userKey).
  const ss2022 = isSs2022(method);
  const clients = users.map((user) => ({
    ...(ss2022 ? {} : { method }),
    password: ssUserKey(method, user.uuid),
    level: 0,
    email: userEmail(tag, user.id),
  }));
  return inbound(ctx, "ss", {
    protocol: "shadowsocks",
    settings: {
      method,
      ...(ss2022 ? { password: ssServerKey(agent) } : {}),
      clients,
      network: "tcp,udp",
    },
  });
}

function vlessReality(ctx: Context): InboundResult {
  if (ctx.dialect === "v2ray") return { warning: "v2ray 4.34 不支持 VLESS Reality，已省略 Reality 入站" };
  const { agent } = ctx;
  const tag = INBOUND_TAG.reality;
  return inbound(ctx, "reality", {
    protocol: "vless",
    settings: {
      decryption: "none",
      clients: ctx.users.map((user) => ({
        id: user.uuid,
        flow: "xtls-rprx-vision",
        level: 0,
        email: userEmail(tag, user.id),
      })),
    },
    streamSettings: {
      network: "tcp",
      security: "reality",
      realitySettings: {
        show: false,
        dest: `${agent.host}:443`,
        xver: 0,
        serverNames: [agent.host],
        privateKey: agent.reality_private_key,
        shortIds: [agent.reality_short_id],
      },
    },
  });
}

/** Xray's own hysteria inbound (node-protocol.md §7), salamander obfuscation via finalmask. */
function hysteria2(ctx: Context): InboundResult {
  if (ctx.dialect === "v2ray") return { warning: "v2ray 4.34 不支持 Hysteria2，已省略 Hysteria2 入站" };
  if (!ctx.certificate) return { warning: "Hysteria2 需要 TLS 证书文件，未提供，已省略 Hysteria2 入站" };
  const { agent } = ctx;
  const tag = INBOUND_TAG.h2;
  return inbound(ctx, "h2", {
    protocol: "hysteria",
    settings: {
      version: 2,
      users: ctx.users.map((user) => ({ auth: user.uuid, level: 0, email: userEmail(tag, user.id) })),
    },
    streamSettings: {
      network: "hysteria",
      security: "tls",
      tlsSettings: {
        ...(agent.host ? { serverName: agent.host } : {}),
        alpn: ["h3"],
        certificates: [ctx.certificate],
      },
      hysteriaSettings: { version: 2 },
      finalmask: { udp: [{ type: "salamander", settings: { password: agent.hy2_obfs_password } }] },
    },
  });
}

/** compat lines are served by the ss inbound. */
type InboundProtocol = Exclude<LineProtocol, "compat">;

const RENDER_INBOUND: Record<InboundProtocol, (ctx: Context) => InboundResult> = {
  vmesh_tcp: vmessTcp,
  vmesh_ws: vmessWs,
  ss: shadowsocks,
  reality: vlessReality,
  h2: hysteria2,
};

/** The node's distinct inbounds, in line order; lines the node's type cannot serve are reported. */
function inboundProtocols(input: CoreConfigInput, warnings: string[]): InboundProtocol[] {
  const served = PROTOCOLS_BY_NODE_TYPE[input.agent.type];
  const protocols = new Set<InboundProtocol>();
  for (const { protocol } of input.lines) {
    if (served.includes(protocol)) protocols.add(protocol === "compat" ? "ss" : protocol);
    else warnings.push(`${input.agent.type} 节点不支持 ${protocol} 协议的线路，已忽略`);
  }
  return [...protocols];
}

export function renderCoreConfig(input: CoreConfigInput): { config: CoreConfig; warnings: string[] } {
  const ctx: Context = { ...input, listen: input.listen ?? "0.0.0.0" };
  const warnings: string[] = [];
  const inbounds: CoreInbound[] = [
    {
      tag: API_TAG,
      listen: "127.0.0.1",
      port: input.apiPort ?? DEFAULT_API_PORT,
      protocol: "dokodemo-door",
      settings: { address: "127.0.0.1" },
    },
  ];
  for (const protocol of inboundProtocols(input, warnings)) {
    const result = RENDER_INBOUND[protocol](ctx);
    if ("warning" in result) warnings.push(result.warning);
    else inbounds.push(result.inbound);
  }
  const config: CoreConfig = {
    log: input.accessLog ? { loglevel: "warning", access: input.accessLog } : { loglevel: "warning" },
    api: { tag: API_TAG, services: ["HandlerService", "StatsService"] },
    stats: {},
    policy: { levels: { "0": { statsUserUplink: true, statsUserDownlink: true } } },
    inbounds,
    outbounds: [
      { tag: "direct", protocol: "freedom", settings: {} },
      { tag: "blocked", protocol: "blackhole", settings: {} },
    ],
    routing: { rules: [{ type: "field", inboundTag: [API_TAG], outboundTag: API_TAG }] },
  };
  return { config, warnings: [...new Set(warnings)] };
}
