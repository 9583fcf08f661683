import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import {
  adminWalletInput,
  changeAddressInput,
  chargeListInput,
  chargeMessageInput,
  checkoutChargeInput,
  refuseChargeInput,
} from "./schema.ts";
import {
  adminWallet,
  changeAddress,
  getWallet,
  listCharges,
  listSpendEntries,
  listWithdrawals,
  messageCharge,
  refuseCharge,
  requestWithdrawal,
  settleCharge,
} from "./service.ts";

const me = (user: UserRow | null) => (user as UserRow).id;

/** Seed 000 §7 /api/wallet/* (the customer's own wallet only). */
export const walletCalls = [
  defineCall({
    path: "/api/wallet/mywallet",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await getWallet(ctx.app, me(ctx.user)),
  }),
  defineCall({
    path: "/api/wallet/change_reward_adress",
    access: "user",
    input: changeAddressInput,
    handle: async (ctx, input) => await changeAddress(ctx.app, me(ctx.user), input),
  }),
  defineCall({
    path: "/api/wallet/make_charge",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await requestWithdrawal(ctx.app, me(ctx.user)),
  }),
  defineCall({
    path: "/api/wallet/charge_list",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await listWithdrawals(ctx.app, me(ctx.user)),
  }),
  defineCall({
    path: "/api/wallet/spend_list",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await listSpendEntries(ctx.app, me(ctx.user)),
  }),
];

/** Seed 001 §7 /api/admin/charge/*, plus refuse_charge (the money goes back to the wallet). */
export const chargeAdminCalls = [
  defineCall({
    path: "/api/admin/charge/charge_list",
    access: "admin",
    input: chargeListInput,
    handle: async (ctx, input) => await listCharges(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/charge/checkout_charge",
    access: "admin",
    input: checkoutChargeInput,
    handle: async (ctx, input) => await settleCharge(ctx.app, input.charge_id, input.txid ?? ""),
  }),
  defineCall({
    path: "/api/admin/charge/wallet",
    access: "admin",
    input: adminWalletInput,
    handle: async (ctx, input) => await adminWallet(ctx.app, input.uid),
  }),
  defineCall({
    path: "/api/admin/charge/message",
    access: "admin",
    input: chargeMessageInput,
    handle: async (ctx, input) => await messageCharge(ctx.app, input.charge_id, input.msg),
  }),
  defineCall({
    path: "/api/admin/charge/refuse_charge",
    access: "admin",
    input: refuseChargeInput,
    handle: async (ctx, input) => await refuseCharge(ctx.app, input.charge_id, input.reason),
  }),
];
