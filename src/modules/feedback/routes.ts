import { type CallContext, defineCall } from "../../rpc/call.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { createTicketInput, replyTicketInput, ticketIdInput } from "./schema.ts";
import {
  closeTicket,
  createTicket,
  findTicket,
  listVisibleTickets,
  replyTicket,
  type TicketActor,
} from "./service.ts";

/** Replies per account; opening tickets has its own daily quota in the service. */
const REPLIES: RateRule = { name: "ticket-replies", max: 30, windowMs: 10 * 60_000 };

/** The calls are not under /api/admin: the admin's powers come from the caller's role here. */
const actorOf = (ctx: CallContext): TicketActor => ({
  userId: (ctx.user as UserRow).id,
  admin: ctx.role === "admin",
});

export const feedbackCalls = [
  defineCall({
    path: "/api/feedback/my_list",
    access: "user",
    input: emptyInput,
    handle: async (ctx) => await listVisibleTickets(ctx.app, actorOf(ctx)),
  }),
  defineCall({
    path: "/api/feedback/create",
    access: "user",
    input: createTicketInput,
    handle: async (ctx, input) => await createTicket(ctx.app, (ctx.user as UserRow).id, input),
  }),
  defineCall({
    path: "/api/feedback/response",
    access: "user",
    input: replyTicketInput,
    limits: [{ rule: REPLIES, key: (_input, ctx) => (ctx.user as UserRow).id }],
    handle: async (ctx, input) => await replyTicket(ctx.app, actorOf(ctx), input),
  }),
  defineCall({
    path: "/api/feedback/close",
    access: "user",
    input: ticketIdInput,
    handle: async (ctx, input) => await closeTicket(ctx.app, actorOf(ctx), input.id),
  }),
  defineCall({
    path: "/api/feedback/refresh",
    access: "user",
    input: ticketIdInput,
    handle: async (ctx, input) => await findTicket(ctx.app, actorOf(ctx), input.id),
  }),
];
