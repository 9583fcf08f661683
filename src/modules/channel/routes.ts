import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { getUserChannelInput, updateChannelInput } from "./schema.ts";
import { channelInfo, getUserChannel, invitedUsers, rewardList, updateChannel } from "./service.ts";

const me = (user: unknown) => (user as UserRow).id;

export const channelCalls = [
  defineCall({
    path: "/api/channel/channel_info",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await channelInfo(ctx.app, me(ctx.user)),
  }),
  defineCall({
    path: "/api/channel/invited_users",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await invitedUsers(ctx.app, me(ctx.user)),
  }),
  defineCall({
    path: "/api/channel/reward_list",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await rewardList(ctx.app, me(ctx.user)),
  }),
  defineCall({
    path: "/api/admin/users/get_user_channel",
    access: "admin",
    input: getUserChannelInput,
    handle: async (ctx, input) => await getUserChannel(ctx.app, input.user_id),
  }),
  defineCall({
    path: "/api/admin/users/update_channel",
    access: "admin",
    input: updateChannelInput,
    // The service parses again: the CLI passes raw fields.
    handle: async (ctx, input) => await updateChannel(ctx.app, input),
  }),
];
