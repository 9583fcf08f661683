import { emptyInput } from "../modules/user/schema.ts";
import { defineCall } from "../rpc/call.ts";
import { listReplicas } from "./replica.ts";

export const clusterCalls = [
  defineCall({
    path: "/api/admin/replicas",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await listReplicas(ctx.app.db),
  }),
];
