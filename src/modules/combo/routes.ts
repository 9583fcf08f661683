import { idInput } from "../../lib/id-schema.ts";
import { defineCall } from "../../rpc/call.ts";
import { emptyInput } from "../user/schema.ts";
import { comboInput } from "./schema.ts";
import { deleteCombo, listAllCombos, listShopCombos, saveCombo } from "./service.ts";

export const comboCalls = [
  defineCall({
    path: "/api/shop/list",
    access: "public",
    input: emptyInput,
    // A logged-in user's stored channel code decides; a visitor's comes from the channel_code cookie.
    handle: async (ctx) =>
      await listShopCombos(ctx.app, ctx.user ? ctx.user.channel_code : (ctx.cookies.channel_code ?? "")),
  }),
  defineCall({
    // Every combo, whatever the admin's own channel code (the shop list applies the price filter).
    path: "/api/admin/combo/list",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await listAllCombos(ctx.app),
  }),
  defineCall({
    path: "/api/admin/combo/update_combo",
    access: "admin",
    input: comboInput,
    handle: async (ctx, input) => await saveCombo(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/combo/delete_combo",
    access: "admin",
    input: idInput,
    handle: async (ctx, input) => await deleteCombo(ctx.app, input.id),
  }),
];
