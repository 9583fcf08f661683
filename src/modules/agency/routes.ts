import { type CallContext, defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { allocateInput, attachCustomerInput, setAgencyInput, unsetAgencyInput } from "./schema.ts";
import {
  agencyCustomers,
  allocateTraffic,
  attachCustomer,
  detachCustomer,
  listAgencies,
  setAgency,
  unsetAgency,
} from "./service.ts";

const me = (ctx: CallContext) => (ctx.user as UserRow).id;

export const agencyCalls = [
  defineCall({
    path: "/api/admin/agency/list",
    access: "admin",
    input: emptyInput,
    handle: async (ctx) => await listAgencies(ctx.app),
  }),
  defineCall({
    path: "/api/admin/agency/set",
    access: "admin",
    input: setAgencyInput,
    handle: async (ctx, input) => await setAgency(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/agency/unset",
    access: "admin",
    input: unsetAgencyInput,
    handle: async (ctx, input) => await unsetAgency(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/agency/attach",
    access: "admin",
    input: attachCustomerInput,
    handle: async (ctx, input) => await attachCustomer(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/agency/detach",
    access: "admin",
    input: attachCustomerInput,
    handle: async (ctx, input) => await detachCustomer(ctx.app, input),
  }),
  defineCall({
    path: "/api/agency/customers",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await agencyCustomers(ctx.app, me(ctx)),
  }),
  defineCall({
    path: "/api/agency/allocate",
    access: "user",
    input: allocateInput,
    handle: async (ctx, input) => await allocateTraffic(ctx.app, me(ctx), input),
  }),
];
