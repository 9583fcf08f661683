import { z } from "zod";
import { optionalId, recordId } from "../../lib/id-schema.ts";
import type { NodeType } from "../node-record/schema.ts";

/** Seed 001 §9 and DESIGN §7. */
export const LINE_PROTOCOLS = ["vmesh_tcp", "vmesh_ws", "ss", "compat", "h2", "reality"] as const;
export type LineProtocol = (typeof LINE_PROTOCOLS)[number];
export const BRIDGES = ["none", "cf_cdn", "report"] as const;
export type Bridge = (typeof BRIDGES)[number];

/** Which line protocols a node of each type serves. */
export const PROTOCOLS_BY_NODE_TYPE: Record<NodeType, readonly LineProtocol[]> = {
  v2ray: ["vmesh_tcp", "vmesh_ws", "ss", "compat"],
  h2: ["h2"],
  reality: ["reality"],
};

export const PROTOCOL_LABELS: Record<LineProtocol, string> = {
  vmesh_tcp: "VMess TCP",
  vmesh_ws: "VMess WebSocket",
  ss: "Shadowsocks",
  compat: "Shadowsocks（兼容 SSR）",
  h2: "Hysteria2",
  reality: "VLESS Reality",
};

export const BRIDGE_LABELS: Record<Bridge, string> = {
  none: "直连",
  cf_cdn: "CDN",
  report: "中转",
};

/**
 * Where each protocol listens, as an offset from the node's ports (docs/decisions.md): the core
 * listens on port + offset, direct clients dial public_port + offset, relayed clients an entry IP
 * on zz_port + offset. compat is the ss inbound published again in SSR form, so it shares ss's port.
 */
export const PORT_OFFSET: Record<LineProtocol, number> = {
  vmesh_tcp: 0,
  vmesh_ws: 1,
  ss: 2,
  compat: 2,
  h2: 0,
  reality: 0,
};

/** Seed 001 §5. */
export const FIX_NAME_REFUSAL = "固定名字，就不要配置多个，否则会出现重名";

/** An agent line as the back office sees it (seed 001 §3 Agent line). Heat is in bytes. */
export interface AgentLine {
  _id: string;
  index: number;
  name: string;
  agentID: string;
  protocol: LineProtocol;
  bridge: Bridge;
  /** "" when the line is not relayed. */
  entryID: string;
  scale: number;
  num: number;
  public: boolean;
  fixName: boolean;
  disableForAgency: boolean;
  /** The permission a user must hold to see the line, or NO_PERMISSION. */
  permissionRequire: string;
  hot: number;
  msg: string;
  bridgeAddr: string;
}

/**
 * Seed 001 §2.9: an h2 node forces protocol h2 and bridge none; any other node starts on report,
 * when there is an entry to relay through, else direct (issue 26 D17: a relay without an entry
 * cannot be saved).
 */
export function lineDefaultsForNode(
  type: NodeType,
  hasEntry: boolean,
): Pick<AgentLine, "protocol" | "bridge"> {
  if (type === "h2") return { protocol: "h2", bridge: "none" };
  const bridge = hasEntry ? "report" : "none";
  return { protocol: type === "reality" ? "reality" : "vmesh_tcp", bridge };
}

/** Seed 001 §3 "permissionRequire, or none": the wire value of a line anyone may see. */
export const NO_PERMISSION = "none";

/** The permission a line requires, or null for none ("none", and "" as older clients send). */
export const requiredPermission = (line: Pick<AgentLine, "permissionRequire">): string | null =>
  line.permissionRequire === NO_PERMISSION || line.permissionRequire === "" ? null : line.permissionRequire;

/** `/api/admin/agent_line/update`: without `_id` it creates a line. */
export const lineInput = z
  .object({
    _id: optionalId,
    index: z.number().int().min(0).max(1_000_000).default(0),
    name: z.string().trim().min(1, "线路名称不能为空").max(60),
    agentID: recordId(),
    protocol: z.enum(LINE_PROTOCOLS, "协议错误"),
    bridge: z.enum(BRIDGES, "桥接方式错误"),
    entryID: optionalId,
    scale: z.number().min(0, "倍率不能为负").max(100).default(1),
    num: z.number().int().min(1, "数量至少为 1").max(50).default(1),
    public: z.boolean().default(true),
    fixName: z.boolean().default(false),
    disableForAgency: z.boolean().default(false),
    permissionRequire: optionalId.or(z.literal(NO_PERMISSION).transform(() => undefined)),
    msg: z.string().max(500).default(""),
    bridgeAddr: z
      .string()
      .trim()
      .max(253)
      .regex(/^[0-9A-Za-z.:[\]-]*$/, "桥接地址格式错误")
      .default(""),
  })
  .refine((line) => !(line.fixName && line.num > 1), { message: FIX_NAME_REFUSAL, path: ["num"] })
  .refine((line) => line.bridge !== "report" || line.entryID, {
    message: "中转线路需要选择入口",
    path: ["entryID"],
  })
  .refine((line) => line.bridge !== "cf_cdn" || line.protocol === "vmesh_ws", {
    message: "CDN 只能用于 VMess WebSocket 线路",
    path: ["bridge"],
  })
  .refine((line) => line.protocol !== "h2" || line.bridge === "none", {
    message: "Hysteria2 走 UDP，只能直连",
    path: ["bridge"],
  });
export type LineInput = z.output<typeof lineInput>;
export const lineListInput = z.object({
  agentID: optionalId,
});
