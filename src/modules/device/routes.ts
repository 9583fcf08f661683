/**
 * Devices (issue 29): the customer's own list and 移除 on 我的账户, and 用户管理's view of a
 * customer's devices, 全部移除 and the per-customer limit. A customer only ever names their own
 * devices: the account is the session's, never the input's.
 */
import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import {
  adminDevicesInput,
  adminRemoveDevicesInput,
  removeOwnDeviceInput,
  setDeviceLimitInput,
} from "./schema.ts";
import { listDevices, removeDevice, removeDevicesAsStaff, setDeviceLimit } from "./service.ts";

const ownId = (user: unknown) => (user as UserRow).id;

export const deviceCalls = [
  defineCall({
    path: "/api/user/devices",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await listDevices(ctx.app, ownId(ctx.user), { maskAddresses: true }),
  }),
  defineCall({
    path: "/api/user/remove_device",
    access: "user",
    input: removeOwnDeviceInput,
    handle: async (ctx, input) => await removeDevice(ctx.app, ownId(ctx.user), input.hwid),
  }),
  defineCall({
    path: "/api/admin/users/devices",
    access: "admin",
    input: adminDevicesInput,
    handle: async (ctx, input) => await listDevices(ctx.app, input.uid, { maskAddresses: false }),
  }),
  defineCall({
    path: "/api/admin/users/remove_devices",
    access: "admin",
    input: adminRemoveDevicesInput,
    async handle(ctx, input) {
      await removeDevicesAsStaff(ctx.app, input.uid, input.hwid || null);
      return await listDevices(ctx.app, input.uid, { maskAddresses: false });
    },
  }),
  defineCall({
    path: "/api/admin/users/set_device_limit",
    access: "admin",
    input: setDeviceLimitInput,
    handle: async (ctx, input) => await setDeviceLimit(ctx.app, input.uid, input.limit),
  }),
];
