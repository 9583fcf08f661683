/** `/api/admin/users/*` of user management (seed 001 §7); channels are in channel/routes.ts. */
import { defineCall } from "../../rpc/call.ts";
import { changeUserPassword, getAdminUser, listAdminUsers, updateUser } from "./admin.ts";
import { adminChangePasswordInput, updateUserInput, userInput, userListInput } from "./admin-schema.ts";
import type { UserRow } from "./row.ts";

const adminId = (user: unknown) => (user as UserRow).id;

export const adminUserCalls = [
  defineCall({
    path: "/api/admin/users/userlist",
    access: "admin",
    input: userListInput,
    handle: async (ctx, input) => await listAdminUsers(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/users/user",
    access: "admin",
    input: userInput,
    handle: async (ctx, input) => await getAdminUser(ctx.app, input.uid),
  }),
  defineCall({
    path: "/api/admin/users/update_user",
    access: "admin",
    input: updateUserInput,
    handle: async (ctx, input) => await updateUser(ctx.app, adminId(ctx.user), input),
  }),
  defineCall({
    path: "/api/admin/users/change_password",
    access: "admin",
    input: adminChangePasswordInput,
    handle: (ctx, input) => changeUserPassword(ctx.app, input.email, input.password),
  }),
];
