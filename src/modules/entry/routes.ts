import { idInput } from "../../lib/id-schema.ts";
import { defineCall } from "../../rpc/call.ts";
import { emptyInput } from "../user/schema.ts";
import { entryInput } from "./schema.ts";
import { deleteEntry, listEntries, saveEntry } from "./service.ts";

export const entryCalls = [
  defineCall({
    path: "/api/admin/entrys/list",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await listEntries(ctx.app),
  }),
  defineCall({
    path: "/api/admin/entrys/update",
    access: "admin",
    input: entryInput,
    handle: async (ctx, input) => await saveEntry(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/entrys/delete",
    access: "admin",
    input: idInput,
    handle: async (ctx, input) => await deleteEntry(ctx.app, input.id),
  }),
];
