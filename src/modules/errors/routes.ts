import { z } from "zod";
import { defineCall } from "../../rpc/call.ts";
import { emptyInput } from "../user/schema.ts";
import { clearErrors, listErrors } from "./service.ts";

export const errorCalls = [
  defineCall({
    path: "/api/admin/errors/list",
    access: "admin",
    input: z.object({ num: z.number().int().min(1).max(3650).default(7) }),
    handle: async (ctx, input) => await listErrors(ctx.app.db, input.num),
  }),
  defineCall({
    path: "/api/admin/errors/clear",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => ({ deletedCount: await clearErrors(ctx.app.db) }),
  }),
];
