import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { recordAudit, recordDelete, recordSave } from "../audit/service.ts";
import { findAgentRow } from "../node-record/service.ts";
import {
  type AgentLine,
  type Bridge,
  type LineInput,
  type LineProtocol,
  NO_PERMISSION,
  PROTOCOLS_BY_NODE_TYPE,
} from "./schema.ts";

export interface LineRow {
  id: string;
  sort_index: number;
  name: string;
  agent_id: string;
  protocol: LineProtocol;
  bridge: Bridge;
  entry_id: string | null;
  scale: number;
  num: number;
  public: number;
  fix_name: number;
  disable_for_agency: number;
  permission_require: string | null;
  hot: number;
  msg: string;
  bridge_addr: string;
  create_time: number;
}

export function toLine(row: LineRow): AgentLine {
  return {
    _id: row.id,
    index: row.sort_index,
    name: row.name,
    agentID: row.agent_id,
    protocol: row.protocol,
    bridge: row.bridge,
    entryID: row.entry_id ?? "",
    scale: row.scale,
    num: row.num,
    public: row.public === 1,
    fixName: row.fix_name === 1,
    disableForAgency: row.disable_for_agency === 1,
    permissionRequire: row.permission_require ?? NO_PERMISSION,
    hot: row.hot,
    msg: row.msg,
    bridgeAddr: row.bridge_addr,
  };
}

export async function findLine(ctx: AppContext, id: string): Promise<AgentLine | null> {
  const row = await ctx.db.get<LineRow>("SELECT * FROM agent_lines WHERE id = ?", id);
  return row ? toLine(row) : null;
}

/** Every line, or one node's, in the order subscriptions list them. */
export async function listLines(ctx: AppContext, agentId?: string): Promise<AgentLine[]> {
  const order = "ORDER BY sort_index, create_time";
  const rows = agentId
    ? await ctx.db.all<LineRow>(`SELECT * FROM agent_lines WHERE agent_id = ? ${order}`, agentId)
    : await ctx.db.all<LineRow>(`SELECT * FROM agent_lines ${order}`);
  return rows.map(toLine);
}

/** Checks what the schema cannot: the node, its protocols, the entry and the permission exist. */
async function checkReferences(ctx: AppContext, input: LineInput) {
  const agent = await findAgentRow(ctx, input.agentID);
  if (!agent) throw new RpcError(Code.badInput, "节点不存在");
  if (!PROTOCOLS_BY_NODE_TYPE[agent.type].includes(input.protocol)) {
    throw new RpcError(Code.badInput, `${agent.type} 节点不支持 ${input.protocol} 协议`);
  }
  if (input.bridge === "report") {
    const entry = await ctx.db.get("SELECT 1 FROM entries WHERE id = ?", input.entryID ?? "");
    if (!entry) throw new RpcError(Code.badInput, "入口不存在");
  }
  if (input.permissionRequire) {
    const permission = await ctx.db.get("SELECT 1 FROM permissions WHERE id = ?", input.permissionRequire);
    if (!permission) throw new RpcError(Code.badInput, "权限不存在");
  }
}

export async function saveLine(ctx: AppContext, input: LineInput, now = Date.now()): Promise<AgentLine> {
  const fields = {
    sort_index: input.index,
    name: input.name,
    agent_id: input.agentID,
    protocol: input.protocol,
    bridge: input.bridge,
    entry_id: input.bridge === "report" ? (input.entryID ?? null) : null,
    scale: input.scale,
    num: input.num,
    public: input.public ? 1 : 0,
    fix_name: input.fixName ? 1 : 0,
    disable_for_agency: input.disableForAgency ? 1 : 0,
    permission_require: input.permissionRequire ?? null,
    msg: input.msg,
    bridge_addr: input.bridge === "cf_cdn" ? input.bridgeAddr : "",
  };
  return await tx(ctx.db, async () => {
    const before = input._id ? await findLine(ctx, input._id) : null;
    const id = await writeLine(ctx, input, fields, now);
    const saved = (await findLine(ctx, id)) as AgentLine;
    await recordSave(ctx.db, "line", id, before, saved, ["hot"]);
    return saved;
  });
}

async function writeLine(
  ctx: AppContext,
  input: LineInput,
  fields: Record<string, string | number | null>,
  now: number,
): Promise<string> {
  const columns = Object.keys(fields);
  const values = Object.values(fields);

  await checkReferences(ctx, input);
  if (input._id) {
    const changed = (
      await ctx.db.run(
        `UPDATE agent_lines SET ${columns.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`,
        ...values,
        input._id,
      )
    ).changes;
    if (!changed) throw new RpcError(Code.notFound, "线路不存在");
    return input._id;
  }
  const id = newId(now);
  await ctx.db.run(
    `INSERT INTO agent_lines (id, ${columns.join(", ")}, create_time) VALUES (?, ${columns.map(() => "?").join(", ")}, ?)`,
    id,
    ...values,
    now,
  );
  return id;
}

export async function deleteLine(ctx: AppContext, id: string): Promise<void> {
  await tx(ctx.db, async () => {
    const removed = await findLine(ctx, id);
    if (!removed) throw new RpcError(Code.notFound, "线路不存在");
    await ctx.db.run("DELETE FROM agent_lines WHERE id = ?", id);
    await recordDelete(ctx.db, "line", id, { name: removed.name, agentID: removed.agentID });
  });
}

/** `reset_hot`: every line's heat back to 0; answers how many lines were reset. */
export async function resetHeat(ctx: AppContext): Promise<number> {
  return await tx(ctx.db, async () => {
    const reset = (await ctx.db.run("UPDATE agent_lines SET hot = 0 WHERE hot <> 0")).changes;
    await recordAudit(ctx.db, { action: "line.reset_hot", diff: { linesReset: { new: reset } } });
    return reset;
  });
}

/**
 * SQL condition: line `l` is visible to a user (public, the required permission held and
 * unexpired — or the user's normalPermission, which stands for every permission —, not barred for
 * agency users). The arguments are SQL expressions for the user's id, its is_agency and
 * normal_permission flags and the current time, so subscriptions and node user lists apply one rule.
 */
export function lineVisibleSql(
  userId: string,
  isAgency: string,
  normalPermission: string,
  now: string,
): string {
  return `l.public = 1
    AND NOT (l.disable_for_agency = 1 AND ${isAgency} = 1)
    AND (l.permission_require IS NULL OR ${normalPermission} = 1 OR EXISTS (
      SELECT 1 FROM user_permissions p
      WHERE p.user_id = ${userId} AND p.permission_id = l.permission_require AND p.expire_time > ${now}))`;
}
