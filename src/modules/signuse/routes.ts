import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { SIGN_USE_CALL, SIGN_USE_INFO_CALL } from "./schema.ts";
import { signUse, signUseInfo } from "./service.ts";

const userId = (user: UserRow | null) => (user as UserRow).id;

export const signUseCalls = [
  defineCall({
    path: SIGN_USE_CALL,
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await signUse(ctx.app, userId(ctx.user), Date.now()),
  }),
  defineCall({
    path: SIGN_USE_INFO_CALL,
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await signUseInfo(ctx.app, userId(ctx.user), Date.now()),
  }),
];
