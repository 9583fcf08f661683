import { defineCall } from "../../rpc/call.ts";
import { idInput } from "../combo/schema.ts";
import { emptyInput } from "../user/schema.ts";
import { agentInput } from "./schema.ts";
import { deleteAgent, listAgents, listPublicAgents, saveAgent } from "./service.ts";

export const agentCalls = [
  defineCall({
    // The /agents page is open to visitors too (seed 000 §2: same roles as the shop).
    path: "/api/agent/agent_list",
    access: "public",
    input: emptyInput,
    handle: (ctx) => listPublicAgents(ctx.app),
  }),
  defineCall({
    path: "/api/admin/agents/list",
    access: "admin",
    input: emptyInput,
    handle: (ctx) => listAgents(ctx.app),
  }),
  defineCall({
    path: "/api/admin/agents/update",
    access: "admin",
    input: agentInput,
    handle: (ctx, input) => saveAgent(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/agents/delete",
    access: "admin",
    input: idInput,
    handle: (ctx, input) => deleteAgent(ctx.app, input.id),
  }),
];
