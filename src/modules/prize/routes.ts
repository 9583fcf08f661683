import { idInput } from "../../lib/id-schema.ts";
import { type CallContext, defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { prizeInput } from "./schema.ts";
import { deletePrize, drawBoard, drawPrize, listPrizes, myDraws, savePrize } from "./service.ts";

const userIdOf = (ctx: CallContext) => (ctx.user as UserRow).id;

export const prizeCalls = [
  defineCall({
    path: "/api/yunying/prize/list",
    access: "yunying",
    input: emptyInput,
    handle: async (ctx) => await listPrizes(ctx.app),
  }),
  defineCall({
    path: "/api/yunying/prize/update",
    access: "yunying",
    input: prizeInput,
    handle: async (ctx, input) => await savePrize(ctx.app, userIdOf(ctx), input),
  }),
  defineCall({
    path: "/api/yunying/prize/delete",
    access: "yunying",
    input: idInput,
    handle: async (ctx, input) => await deletePrize(ctx.app, input.id),
  }),
  defineCall({
    path: "/api/prize/board",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await drawBoard(ctx.app, userIdOf(ctx)),
  }),
  defineCall({
    path: "/api/prize/draw",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await drawPrize(ctx.app, userIdOf(ctx)),
  }),
  defineCall({
    path: "/api/prize/my_draws",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await myDraws(ctx.app, userIdOf(ctx)),
  }),
];
