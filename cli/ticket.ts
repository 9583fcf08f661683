/**
 * Operator commands for support tickets: `ferry ticket list|show|reply|close`. They call the
 * services the /feedback page calls, as an admin: a reply is an ADMIN comment (no account behind
 * it) that gives the customer the same bell notice and bot message as an answer from the web.
 */
import { type Command, Option } from "commander";
import type { AppContext } from "../src/context.ts";
import { ID_PATTERN } from "../src/lib/id-schema.ts";
import {
  replyTicketInput,
  TICKET_STATUSES,
  type Ticket,
  type TicketComment,
  type TicketStatus,
} from "../src/modules/feedback/schema.ts";
import {
  closeTicket,
  findTicket,
  listTickets,
  replyTicket,
  type TicketActor,
} from "../src/modules/feedback/service.ts";
import { Code, RpcError } from "../src/rpc/codes.ts";
import {
  dataOption,
  die,
  type PrintTime,
  parseOrDie,
  printJsonOr,
  printListOr,
  timePrinter,
  withContext,
} from "./shared.ts";

/** The operator at the server's shell, trusted as an admin like every other CLI command. */
const OPERATOR: TicketActor = { userId: null, admin: true };

const STATUS_MEANING: Record<TicketStatus, string> = {
  open: "waiting for support",
  responsed: "answered, waiting for the customer",
  close: "closed",
};

function checkId(id: string): string {
  if (!ID_PATTERN.test(id)) die(`not a ticket id: ${id}`);
  return id;
}

/** Runs a ticket service call; its expected refusals become English one-line errors. */
async function ticketCall<T>(
  dataDir: string | undefined,
  id: string,
  run: (ctx: AppContext) => Promise<T>,
): Promise<T> {
  return await withContext(dataDir, async (ctx) => {
    try {
      return await run(ctx);
    } catch (error) {
      if (error instanceof RpcError && error.code === Code.notFound) die(`no ticket ${id}`);
      if (error instanceof RpcError && error.code === Code.ticketClosed) die(`ticket ${id} is closed`);
      throw error;
    }
  });
}

const ticketLine = (t: Ticket, at: PrintTime) =>
  [
    t._id,
    t.status.padEnd(9),
    at(t.updateTime),
    t.email,
    `${t.comments.length} repl${t.comments.length === 1 ? "y" : "ies"}`,
    t.title,
  ].join("  ");

/** USER, or ADMIN with the admin who answered (`ADMIN (command line)` for `ferry ticket reply`). */
const commentAuthor = (c: TicketComment) =>
  c.type === "USER" ? "USER" : `ADMIN ${c.staff ? c.staff : "(command line)"}`;

function ticketText(t: Ticket, at: PrintTime): string {
  const message = (when: number, who: string, text: string, imageUrl: string) =>
    [`${at(when)}  ${who}`, text, ...(imageUrl ? [`[image ${imageUrl}]`] : [])].join("\n");
  return [
    `id       ${t._id}`,
    `title    ${t.title}`,
    `status   ${t.status} (${STATUS_MEANING[t.status]})`,
    `from     ${t.email}`,
    `created  ${at(t.createTime)}`,
    `updated  ${at(t.updateTime)}`,
    ...(t.closeTime ? [`closed   ${at(t.closeTime)}`] : []),
    "",
    message(t.createTime, `USER ${t.email}`, t.desc, t.imageUrl),
    ...t.comments.map((c) => `\n${message(c.updateTime, commentAuthor(c), c.text, c.imageUrl)}`),
  ].join("\n");
}

export function registerTicketCommands(program: Command) {
  const ticket = program.command("ticket").description("support tickets (问题反馈)");

  ticket
    .command("list")
    .description("list tickets, latest activity first (at most 200)")
    .addOption(
      new Option("--status <status>", "only tickets in this status (open = waiting for support)").choices(
        TICKET_STATUSES,
      ),
    )
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { status?: TicketStatus; data?: string; json?: boolean }) => {
      const { tickets, at } = await withContext(options.data, async (ctx) => ({
        tickets: await listTickets(ctx, { status: options.status }),
        at: await timePrinter(ctx),
      }));
      printListOr(options.json ?? false, tickets, (t) => ticketLine(t, at), "no tickets");
    });

  ticket
    .command("show")
    .description("one ticket with its whole conversation")
    .argument("<id>", "the ticket's id")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (id: string, options: { data?: string; json?: boolean }) => {
      checkId(id);
      const { found, at } = await ticketCall(options.data, id, async (ctx) => ({
        found: await findTicket(ctx, OPERATOR, id),
        at: await timePrinter(ctx),
      }));
      printJsonOr(options.json ?? false, found, (t) => ticketText(t, at));
    });

  ticket
    .command("reply")
    .description("answer as support: the customer gets a bell notice and a bot message")
    .argument("<id>", "the ticket's id")
    .argument("<text>", "the answer")
    .addOption(dataOption())
    .option("--json", "print the ticket as JSON")
    .action(async (id: string, text: string, options: { data?: string; json?: boolean }) => {
      const input = parseOrDie(
        replyTicketInput,
        { id: checkId(id), desc: text, imageUrl: "" },
        { id: "<id>", desc: "<text>" },
      );
      const answered = await ticketCall(
        options.data,
        id,
        async (ctx) => await replyTicket(ctx, OPERATOR, input),
      );
      printJsonOr(
        options.json ?? false,
        answered,
        (t) => `replied to ticket ${t._id} (${t.title}) of ${t.email}`,
      );
    });

  ticket
    .command("close")
    .description("close a ticket: nobody can reply to it any more")
    .argument("<id>", "the ticket's id")
    .addOption(dataOption())
    .option("--json", "print the ticket as JSON")
    .action(async (id: string, options: { data?: string; json?: boolean }) => {
      checkId(id);
      const closed = await ticketCall(options.data, id, async (ctx) => await closeTicket(ctx, OPERATOR, id));
      printJsonOr(options.json ?? false, closed, (t) => `closed ticket ${t._id} (${t.title})`);
    });
}
