import { type CallContext, defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { trafficRecordsInput } from "./schema.ts";
import { listTrafficRecords } from "./service.ts";

const me = (ctx: CallContext) => (ctx.user as UserRow).id;

export const trafficCalls = [
  defineCall({
    path: "/api/traffic/my_traffic_records",
    access: "user",
    input: trafficRecordsInput,
    handle: async (ctx, input) => await listTrafficRecords(ctx.app, me(ctx), { type: input.type }),
  }),
];
