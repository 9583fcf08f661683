import { defineCall } from "../../rpc/call.ts";
import { emptyInput } from "../user/schema.ts";
import type { UserRow } from "../user/service.ts";
import { listMyPermissions } from "./service.ts";

export const permissionCalls = [
  defineCall({
    path: "/api/permission/mypermissions",
    access: "user",
    input: emptyInput,
    handle: (ctx) => listMyPermissions(ctx.app, (ctx.user as UserRow).id),
  }),
];
