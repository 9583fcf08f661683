import { idInput } from "../../lib/id-schema.ts";
import { defineCall } from "../../rpc/call.ts";
import { emptyInput } from "../user/schema.ts";
import { lineInput, lineListInput } from "./schema.ts";
import { deleteLine, listLines, resetHeat, saveLine } from "./service.ts";

export const lineCalls = [
  defineCall({
    path: "/api/admin/agent_line/list",
    access: "admin",
    input: lineListInput,
    handle: async (ctx, input) => await listLines(ctx.app, input.agentID),
  }),
  defineCall({
    path: "/api/admin/agent_line/update",
    access: "admin",
    input: lineInput,
    handle: async (ctx, input) => await saveLine(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/agent_line/delete_agent",
    access: "admin",
    input: idInput,
    handle: async (ctx, input) => await deleteLine(ctx.app, input.id),
  }),
  defineCall({
    path: "/api/admin/agent_line/reset_hot",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => ({ count: await resetHeat(ctx.app) }),
  }),
];
