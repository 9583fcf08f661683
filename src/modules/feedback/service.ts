/**
 * Support tickets (seed 000 §2 Feedback, §4, §5). A customer opens a ticket and writes back; only an
 * admin answers and closes (seed 000 §6). Every write is one transaction with what it causes: the
 * customer's bell notice and bot message on an answer, the admins' bot message on a new ticket or
 * a customer's reply.
 */
import type { z } from "zod";
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { recordAudit } from "../audit/service.ts";
import { downloadPath } from "../file/schema.ts";
import { requireOwnUpload } from "../file/service.ts";
import { createNotice } from "../notice/service.ts";
import { siteOrigin } from "../settings/schema.ts";
import { queueAdminMessage, queueUserMessage } from "../telegram/outbox.ts";
import { queueWebhookEvent } from "../webhook/outbox.ts";
import {
  type CommentType,
  type createTicketInput,
  type replyTicketInput,
  TICKET_LIST_LIMIT,
  TICKETS_PER_DAY,
  type Ticket,
  type TicketComment,
  TicketMsg,
  type TicketStatus,
} from "./schema.ts";

/**
 * Who acts: an account of the web (`admin` when its role is admin), or the operator at the CLI
 * (userId null, admin: the shell of the server is trusted like every other CLI command).
 */
export interface TicketActor {
  userId: string | null;
  admin: boolean;
}

export type NewTicket = z.output<typeof createTicketInput>;
export type TicketReply = z.output<typeof replyTicketInput>;

interface TicketRow {
  id: string;
  user_id: string;
  email: string;
  title: string;
  desc: string;
  image: string;
  status: TicketStatus;
  create_time: number;
  update_time: number;
  close_time: number | null;
}

interface CommentRow {
  ticket_id: string;
  author: CommentType;
  text: string;
  image: string;
  create_time: number;
  /** The answering admin's e-mail; null from the command line (or a deleted account). */
  staff_email: string | null;
}

/** How much of a ticket's text a bot message quotes. */
const QUOTE_CHARS = 300;

const imageUrlOf = (image: string) => (image === "" ? "" : downloadPath(image));

/** The page link of a ticket: relative for the bell, absolute (trusted origin) for the bot. */
const ticketHref = (id: string) => `/#/feedback?id=${id}`;

async function ticketLink(ctx: AppContext, id: string): Promise<string> {
  const origin = siteOrigin(await ctx.settings.all());
  return origin ? `\n${origin}${ticketHref(id)}` : "";
}

function quote(text: string): string {
  const chars = Array.from(text);
  return chars.length <= QUOTE_CHARS ? text : `${chars.slice(0, QUOTE_CHARS).join("")}…`;
}

const TICKET_COLUMNS = `t.id, t.user_id, u.email, t.title, t.desc, t.image, t.status, t.create_time, t.update_time,
  t.close_time FROM tickets t JOIN users u ON u.id = t.user_id`;

async function ticketRow(ctx: AppContext, id: string): Promise<TicketRow | null> {
  return await ctx.db.get<TicketRow>(`SELECT ${TICKET_COLUMNS} WHERE t.id = ?`, id);
}

/**
 * Tickets with their comments, oldest comment first. `forStaff`: an admin is looking, who also
 * learns which admin wrote each answer (customers never see staff accounts).
 */
async function withComments(ctx: AppContext, rows: TicketRow[], forStaff: boolean): Promise<Ticket[]> {
  if (rows.length === 0) return [];
  const comments = new Map<string, TicketComment[]>(rows.map((row) => [row.id, []]));
  const ids = rows.map((row) => row.id);
  const commentRows = await ctx.db.all<CommentRow>(
    `SELECT c.ticket_id, c.author, c.text, c.image, c.create_time, s.email AS staff_email
       FROM ticket_comments c LEFT JOIN users s ON s.id = c.author_id
       WHERE c.ticket_id IN (${ids.map(() => "?").join(", ")}) ORDER BY c.create_time, c.id`,
    ...ids,
  );
  for (const comment of commentRows) {
    comments.get(comment.ticket_id)?.push({
      type: comment.author,
      text: comment.text,
      imageUrl: imageUrlOf(comment.image),
      updateTime: comment.create_time,
      ...(forStaff && comment.author === "ADMIN" ? { staff: comment.staff_email ?? "" } : {}),
    });
  }
  return rows.map((row) => ({
    _id: row.id,
    title: row.title,
    desc: row.desc,
    imageUrl: imageUrlOf(row.image),
    status: row.status,
    createTime: row.create_time,
    updateTime: row.update_time,
    closeTime: row.close_time ?? 0,
    email: row.email,
    comments: comments.get(row.id) ?? [],
  }));
}

const toTicket = async (ctx: AppContext, row: TicketRow, forStaff: boolean) =>
  (await withComments(ctx, [row], forStaff))[0] as Ticket;

/** A ticket the actor may see; someone else's is "not found", exactly like one that does not exist. */
async function visibleTicketRow(ctx: AppContext, actor: TicketActor, id: string): Promise<TicketRow> {
  const row = await ticketRow(ctx, id);
  if (!row || (!actor.admin && row.user_id !== actor.userId)) {
    throw new RpcError(Code.notFound, TicketMsg.notFound);
  }
  return row;
}

export interface TicketFilter {
  /** Only this account's tickets (a customer's list); every ticket when absent. */
  userId?: string;
  status?: TicketStatus;
}

/** Tickets with the latest activity first, at most TICKET_LIST_LIMIT; every ticket is a staff view. */
export async function listTickets(ctx: AppContext, filter: TicketFilter = {}): Promise<Ticket[]> {
  const where: string[] = [];
  const params: string[] = [];
  if (filter.userId !== undefined) {
    where.push("t.user_id = ?");
    params.push(filter.userId);
  }
  if (filter.status !== undefined) {
    where.push("t.status = ?");
    params.push(filter.status);
  }
  const rows = await ctx.db.all<TicketRow>(
    `SELECT ${TICKET_COLUMNS} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY t.update_time DESC, t.id DESC LIMIT ?`,
    ...params,
    TICKET_LIST_LIMIT,
  );
  return await withComments(ctx, rows, filter.userId === undefined);
}

/** my_list: an admin sees every ticket, anyone else their own. */
export async function listVisibleTickets(ctx: AppContext, actor: TicketActor): Promise<Ticket[]> {
  return await listTickets(ctx, actor.admin ? {} : { userId: actor.userId ?? "" });
}

/** One ticket the actor may see (refresh, `ferry ticket show`); else 1004. */
export async function findTicket(ctx: AppContext, actor: TicketActor, id: string): Promise<Ticket> {
  return await toTicket(ctx, await visibleTicketRow(ctx, actor, id), actor.admin);
}

/** Opens a ticket; 1005 past TICKETS_PER_DAY in 24 h; the image must be the customer's own upload. */
export async function createTicket(ctx: AppContext, userId: string, input: NewTicket): Promise<Ticket> {
  return await tx(ctx.db, async () => {
    const now = Date.now();
    const recent =
      (
        await ctx.db.get<{ n: number }>(
          "SELECT COUNT(*) AS n FROM tickets WHERE user_id = ? AND create_time > ?",
          userId,
          now - DAY_MS,
        )
      )?.n ?? 0;
    if (recent >= TICKETS_PER_DAY) throw new RpcError(Code.tooManyRequests, TicketMsg.tooMany);
    await requireOwnUpload(ctx, userId, input.imageUrl);
    const id = newId(now);
    await ctx.db.run(
      `INSERT INTO tickets (id, user_id, title, "desc", image, status, create_time, update_time)
         VALUES (?, ?, ?, ?, ?, 'open', ?, ?)`,
      id,
      userId,
      input.title,
      input.desc,
      input.imageUrl,
      now,
      now,
    );
    const ticket = await toTicket(ctx, (await ticketRow(ctx, id)) as TicketRow, false);
    await queueAdminMessage(
      ctx,
      `新工单「${ticket.title}」（${ticket.email}）\n${quote(ticket.desc)}${await ticketLink(ctx, id)}`,
      `ticket-new:${id}`,
    );
    await queueWebhookEvent(
      ctx,
      "ticket.created",
      { ticketId: id, userId, email: ticket.email, title: ticket.title, desc: ticket.desc, createTime: now },
      now,
    );
    return ticket;
  });
}

/**
 * Adds a reply: ADMIN from an admin (status responsed, a bell notice and a bot message for the
 * customer), USER from the owner (status open, a bot message for the admins). Someone else's
 * ticket is 1004; a closed one 1035.
 */
export async function replyTicket(ctx: AppContext, actor: TicketActor, input: TicketReply): Promise<Ticket> {
  return await tx(ctx.db, async () => {
    const ticket = await visibleTicketRow(ctx, actor, input.id);
    if (ticket.status === "close") throw new RpcError(Code.ticketClosed, TicketMsg.closed);
    // The CLI (no account) sends no image; "" as the owner refuses any.
    await requireOwnUpload(ctx, actor.userId ?? "", input.imageUrl);
    const author: CommentType = actor.admin ? "ADMIN" : "USER";
    // Strictly after the last activity, so comments keep their order whatever the clock does.
    const now = Math.max(Date.now(), ticket.update_time + 1);
    const commentId = newId(now);
    await ctx.db.run(
      `INSERT INTO ticket_comments (id, ticket_id, author, author_id, text, image, create_time)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      commentId,
      ticket.id,
      author,
      actor.userId,
      input.desc,
      input.imageUrl,
      now,
    );
    await ctx.db.run(
      "UPDATE tickets SET status = ?, update_time = ? WHERE id = ?",
      author === "ADMIN" ? "responsed" : "open",
      now,
      ticket.id,
    );
    await queueWebhookEvent(
      ctx,
      "ticket.replied",
      {
        ticketId: ticket.id,
        commentId,
        title: ticket.title,
        userId: ticket.user_id,
        email: ticket.email,
        author,
        text: input.desc,
        createTime: now,
      },
      now,
    );
    const link = await ticketLink(ctx, ticket.id);
    if (author === "ADMIN") {
      await recordAudit(ctx.db, {
        action: "ticket.reply",
        target: ticket.id,
        diff: { status: { old: ticket.status, new: "responsed" }, reply: { new: input.desc } },
      });
      await createNotice(ctx, {
        userId: ticket.user_id,
        desc: `您的工单「${ticket.title}」有新回复`,
        href: ticketHref(ticket.id),
      });
      await queueUserMessage(
        ctx,
        ticket.user_id,
        `您的工单「${ticket.title}」有新回复：\n${quote(input.desc)}${link}`,
        `ticket-reply:${commentId}`,
      );
    } else {
      await queueAdminMessage(
        ctx,
        `工单「${ticket.title}」有用户回复（${ticket.email}）\n${quote(input.desc)}${link}`,
        `ticket-reply:${commentId}`,
      );
    }
    return await toTicket(ctx, (await ticketRow(ctx, ticket.id)) as TicketRow, actor.admin);
  });
}

/** Closes a ticket (admin only, 1003 for anyone else); closing a closed ticket changes nothing. */
export async function closeTicket(ctx: AppContext, actor: TicketActor, id: string): Promise<Ticket> {
  if (!actor.admin) throw new RpcError(Code.forbidden, TicketMsg.forbidden);
  return await tx(ctx.db, async () => {
    const ticket = await visibleTicketRow(ctx, actor, id);
    if (ticket.status !== "close") {
      const now = Math.max(Date.now(), ticket.update_time + 1);
      await ctx.db.run(
        "UPDATE tickets SET status = 'close', close_time = ?, update_time = ? WHERE id = ?",
        now,
        now,
        id,
      );
      await recordAudit(ctx.db, {
        action: "ticket.close",
        target: id,
        diff: { status: { old: ticket.status, new: "close" }, title: { old: ticket.title } },
      });
    }
    return await toTicket(ctx, (await ticketRow(ctx, id)) as TicketRow, true);
  });
}
