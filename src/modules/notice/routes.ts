import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { noticeClickedInput } from "./schema.ts";
import { listNotices, markNoticeClicked } from "./service.ts";

export const noticeCalls = [
  defineCall({
    path: "/api/user_notive/list",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await listNotices(ctx.app, (ctx.user as UserRow).id),
  }),
  defineCall({
    path: "/api/user_notive/clicked",
    access: "user",
    input: noticeClickedInput,
    async handle(ctx, input) {
      await markNoticeClicked(ctx.app, (ctx.user as UserRow).id, input.noticeId);
      return null;
    },
  }),
];
