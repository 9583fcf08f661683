import { defineCall } from "../../rpc/call.ts";
import { BASIC_STASTIC_CALL, basicStasticInput } from "./schema.ts";
import { basicStastic } from "./service.ts";

export const statsCalls = [
  defineCall({
    path: BASIC_STASTIC_CALL,
    access: "admin",
    input: basicStasticInput,
    handle: async (ctx, input) => await basicStastic(ctx.app, input.num, Date.now()),
  }),
];
