/**
 * "Upgrade node" (seed 001 §2.3): the panel asks the node's agent, on its control port, to fetch
 * the panel's executable, check its SHA-256 and swap itself (protocol: src/node-program/control.ts).
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { recordAudit } from "../audit/service.ts";
import { type AgentRow, findAgentRow } from "../node-record/service.ts";
import { agentBinary, agentDownloadUrl, NO_AGENT_BINARY } from "./install.ts";

/** How long a node has to answer at all (its /status). */
const REACH_TIMEOUT_MS = 5000;
/** The agent answers /upgrade once it has downloaded the executable (it allows itself 300 s). */
const UPGRADE_TIMEOUT_MS = 310_000;

export interface UpgradeResult {
  version: string;
  sha256: string;
}

/** `http://ip:port` with IPv6 literals bracketed. */
const controlOrigin = (ip: string, port: number) =>
  `http://${ip.includes(":") && !ip.startsWith("[") ? `[${ip}]` : ip}:${port}`;

interface ControlAnswer {
  status: number;
  body: { ok?: unknown; error?: unknown; version?: unknown } | null;
}

async function controlCall(row: AgentRow, path: string, init: RequestInit, timeoutMs: number) {
  let response: Response;
  try {
    response = await fetch(`${controlOrigin(row.ip, row.ctrl_port)}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${row.api_token}`, "content-type": "application/json" },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch {
    throw new RpcError(Code.badInput, `节点无法连接（${row.ip}:${row.ctrl_port}）`);
  }
  const body = (await response.json().catch(() => null)) as ControlAnswer["body"];
  return { status: response.status, body };
}

const reasonOf = ({ status, body }: ControlAnswer) =>
  (typeof body?.error === "string" ? body.error : `HTTP ${status}`).slice(0, 300);

/**
 * Sends the upgrade to the node and resolves once the agent has the new executable in place (it
 * then restarts). A node that does not answer within 5 s is 节点无法连接; otherwise the failure is
 * the agent's own reason (e.g. "sha256 mismatch").
 */
export async function upgradeNode(ctx: AppContext, id: string, panel: string): Promise<UpgradeResult> {
  const row = await findAgentRow(ctx, id);
  if (!row) throw new RpcError(Code.notFound, "节点不存在");
  const binary = await agentBinary();
  if (!binary) throw new RpcError(Code.badInput, NO_AGENT_BINARY);
  const reached = await controlCall(row, "/status", { method: "GET" }, REACH_TIMEOUT_MS);
  if (reached.status === 401) throw new RpcError(Code.badInput, "节点拒绝了面板的令牌");
  if (reached.status !== 200 || typeof reached.body?.version !== "string") {
    throw new RpcError(Code.badInput, `节点控制端口上不是 ferry 节点程序（HTTP ${reached.status}）`);
  }
  const upgrade = { url: agentDownloadUrl(panel, row), sha256: binary.sha256, version: binary.version };
  const answer = await controlCall(
    row,
    "/upgrade",
    { method: "POST", body: JSON.stringify(upgrade) },
    UPGRADE_TIMEOUT_MS,
  );
  if (answer.status !== 200 || answer.body?.ok !== true) throw new RpcError(Code.badInput, reasonOf(answer));
  // The node changed outside the database: the row records that it was told to, once it agreed.
  await tx(ctx.db, () =>
    recordAudit(ctx.db, {
      action: "node.upgrade",
      target: id,
      diff: { agent_version: { old: reached.body?.version ?? row.agent_version, new: binary.version } },
    }),
  );
  return { version: binary.version, sha256: binary.sha256 };
}
