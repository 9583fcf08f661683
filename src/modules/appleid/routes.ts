import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { APPLE_ID_SHARE_CALL } from "./schema.ts";
import { appleIdShareLink } from "./service.ts";

export const appleIdCalls = [
  defineCall({
    path: APPLE_ID_SHARE_CALL,
    access: "user",
    input: emptyInput,
    handle: async (ctx) => appleIdShareLink(await ctx.app.settings.all(), ctx.user as UserRow),
  }),
];
