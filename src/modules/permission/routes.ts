import { z } from "zod";
import { idInput, optionalId } from "../../lib/id-schema.ts";
import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { deletePermission, listMyPermissions, listPermissions, savePermission } from "./service.ts";

const permissionInput = z.object({
  _id: optionalId,
  name: z.string().trim().min(1, "名称不能为空").max(64),
  desc: z.string().trim().max(500).default(""),
});

export const permissionCalls = [
  defineCall({
    path: "/api/permission/mypermissions",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await listMyPermissions(ctx.app, (ctx.user as UserRow).id),
  }),
  defineCall({
    path: "/api/admin/permissions/list",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await listPermissions(ctx.app),
  }),
  defineCall({
    path: "/api/admin/permissions/update",
    access: "admin",
    input: permissionInput,
    handle: async (ctx, input) => await savePermission(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/permissions/delete",
    access: "admin",
    input: idInput,
    handle: async (ctx, input) => await deletePermission(ctx.app, input.id),
  }),
];
