import { idInput } from "../../lib/id-schema.ts";
import { type CallContext, defineCall, requestOrigin } from "../../rpc/call.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { listAnomalies } from "../node-api/anomalies.ts";
import { installCommand, panelUrl } from "../node-api/install.ts";
import { clearUpdateCounts } from "../node-api/service.ts";
import { upgradeNode } from "../node-api/upgrade.ts";
import { reconcileDays } from "../traffic/reconcile.ts";
import { emptyInput } from "../user/schema.ts";
import { agentInput, agentRefInput } from "./schema.ts";
import { deleteAgent, findAgentRow, listAgents, listPublicAgents, saveAgent } from "./service.ts";

/** The panel's address for nodes: the setting panel_url, else the origin the admin is using. */
const panelFor = async (ctx: CallContext) =>
  (await panelUrl(ctx.app, { fallback: requestOrigin(ctx.request) })) ?? requestOrigin(ctx.request);

export const agentCalls = [
  defineCall({
    // The /agents page is open to visitors too (seed 000 §2: same roles as the shop).
    path: "/api/agent/agent_list",
    access: "public",
    input: emptyInput,
    handle: async (ctx) => await listPublicAgents(ctx.app),
  }),
  defineCall({
    path: "/api/admin/agents/list",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await listAgents(ctx.app),
  }),
  defineCall({
    path: "/api/admin/agents/update",
    access: "admin",
    input: agentInput,
    handle: async (ctx, input) => await saveAgent(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/agents/delete",
    access: "admin",
    input: idInput,
    handle: async (ctx, input) => await deleteAgent(ctx.app, input.id),
  }),
  defineCall({
    path: "/api/admin/agents/upgrade_agentserver",
    access: "admin",
    input: agentRefInput,
    handle: async (ctx, input) => upgradeNode(ctx.app, input.id, await panelFor(ctx)),
  }),
  defineCall({
    // Seed 001 §7: answers {cmd}, the one-line install / update command (it holds the node's token).
    path: "/api/admin/agents/manual_update_agent",
    access: "admin",
    input: agentRefInput,
    handle: async (ctx, input) => ({ cmd: await installCommand(ctx.app, input.id, await panelFor(ctx)) }),
  }),
  defineCall({
    // Issue 11: traffic the node reported for users it was not given (not charged), 30 days.
    path: "/api/admin/agents/anomalies",
    access: "admin",
    input: agentRefInput,
    handle: async (ctx, input) => {
      if (!(await findAgentRow(ctx.app, input.id))) throw new RpcError(Code.notFound, "节点不存在");
      return await listAnomalies(ctx.app, input.id);
    },
  }),
  defineCall({
    // Issue 32: 对账, the node's last 30 business days, newest first.
    path: "/api/admin/agents/reconcile",
    access: "admin",
    input: agentRefInput,
    handle: async (ctx, input) => {
      if (!(await findAgentRow(ctx.app, input.id))) throw new RpcError(Code.notFound, "节点不存在");
      return await reconcileDays(ctx.app, { nodeId: input.id });
    },
  }),
  defineCall({
    path: "/api/admin/agents/clear_updatetimes",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => {
      await clearUpdateCounts(ctx.app);
      return null;
    },
  }),
];
