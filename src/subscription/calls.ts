/** Envelope calls about a customer's subscription (the links themselves are plain GETs in routes.ts). */
import type { UserRow } from "../modules/user/row.ts";
import { emptyInput } from "../modules/user/schema.ts";
import { defineCall } from "../rpc/call.ts";
import { ssrLineCount } from "./service.ts";

export const subscriptionCalls = [
  defineCall({
    // The dashboard shows 全部节点链接（SSR） as a link only while the listing has links (issue 26 D16).
    path: "/api/user/ssr_lines",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => ({ lines: await ssrLineCount(ctx.app, ctx.user as UserRow) }),
  }),
];
