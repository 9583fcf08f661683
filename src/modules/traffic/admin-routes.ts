import { defineCall } from "../../rpc/call.ts";
import { listAllTrafficRecords } from "./admin.ts";
import { allTrafficRecordsInput } from "./admin-schema.ts";

export const trafficAdminCalls = [
  defineCall({
    path: "/api/admin/traffic_spend/traffic_records",
    access: "admin",
    input: allTrafficRecordsInput,
    handle: async (ctx, input) => await listAllTrafficRecords(ctx.app, input),
  }),
];
