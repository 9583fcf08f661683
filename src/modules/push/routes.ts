import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { createPushInput, pushCodeInput } from "./schema.ts";
import { cancelPush, createPush, listPushes, receivePush } from "./service.ts";

/** Seed 000 §7 /api/push/*, plus cancel (撤回) for a transfer nobody has received. */
export const pushCalls = [
  defineCall({
    path: "/api/push/list",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await listPushes(ctx.app, (ctx.user as UserRow).id),
  }),
  defineCall({
    path: "/api/push/create",
    access: "user",
    input: createPushInput,
    handle: async (ctx, input) => await createPush(ctx.app, ctx.user as UserRow, input.pushNumber),
  }),
  defineCall({
    path: "/api/push/receive",
    access: "user",
    input: pushCodeInput,
    handle: async (ctx, input) => await receivePush(ctx.app, (ctx.user as UserRow).id, input.code),
  }),
  defineCall({
    path: "/api/push/cancel",
    access: "user",
    input: pushCodeInput,
    handle: async (ctx, input) => await cancelPush(ctx.app, (ctx.user as UserRow).id, input.code),
  }),
];
