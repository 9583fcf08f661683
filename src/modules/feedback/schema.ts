/**
 * Support tickets (工单, seed 000 §2 Feedback, §3, §4, §5): the wire shape, the inputs and their
 * messages, and the status a viewer sees. Shared by the server, the CLI and the SPA.
 */
import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";
import { imageRef } from "../file/schema.ts";

export const TICKET_STATUSES = ["open", "responsed", "close"] as const;
/** open: waiting for support; responsed: support answered last; close: closed by an admin. */
export type TicketStatus = (typeof TICKET_STATUSES)[number];
export type CommentType = "USER" | "ADMIN";

export const TICKET_TITLE_MAX = 60;
export const TICKET_DESC_MAX = 2000;
/** New tickets one account may open in 24 hours (replies are limited per minute instead). */
export const TICKETS_PER_DAY = 10;
/** my_list answers the tickets with the most recent activity, at most this many. */
export const TICKET_LIST_LIMIT = 200;
/** The page polls the list and the open ticket this often (seed 000 §9). */
export const TICKET_POLL_MS = 30_000;

export const TicketMsg = {
  titleEmpty: "标题不能为空",
  titleTooLong: `标题不能超过${TICKET_TITLE_MAX}字`,
  descEmpty: "描述不能为空",
  descTooLong: `描述不能超过${TICKET_DESC_MAX}字`,
  closed: "该工单已关闭",
  notFound: "工单不存在",
  forbidden: "没有权限",
  tooMany: `24小时内最多提交${TICKETS_PER_DAY}个工单，请稍后再试`,
  badId: "工单编号错误",
  // SPA
  empty: "暂无工单",
  created: "工单已提交",
  replied: "回复已发送",
  closedOk: "工单已关闭",
  closeConfirm: "关闭后双方都不能再回复该工单，确定关闭吗？",
  loadFailed: "加载失败，请稍后重试",
} as const;

/** The badge texts (seed 000 §4: in progress, has reply, closed). */
export const TICKET_STATUS_TEXT: Record<TicketStatus, string> = {
  open: "处理中",
  responsed: "已回复",
  close: "已关闭",
};

/** One message after the opening one (seed 000 §3). */
export interface TicketComment {
  type: CommentType;
  text: string;
  /** The image's download path, or "". */
  imageUrl: string;
  updateTime: number;
  /** Admins only, on an ADMIN comment: who answered (the admin's e-mail; "" from the command line). */
  staff?: string;
}

/** A ticket on the wire (seed 000 §3 Feedback ticket); `updateTime` (last activity) is added. */
export interface Ticket {
  _id: string;
  title: string;
  desc: string;
  imageUrl: string;
  /** As stored: from the customer's side (responsed = support answered last). */
  status: TicketStatus;
  createTime: number;
  updateTime: number;
  /** When an admin closed it; 0 while open. */
  closeTime: number;
  /** The creator's e-mail (an admin's list shows it; a customer sees only their own). */
  email: string;
  comments: TicketComment[];
}

export type TicketViewer = "admin" | "user";

/**
 * The status a viewer sees (seed 000 §4): closed stays closed; otherwise "responsed" when the last
 * message comes from the other party — for a customer the last one is ADMIN, for an admin the last
 * one is USER — and "open" else. The opening message counts as the customer's, so a new ticket is
 * 处理中 for its customer and 已回复 (something to answer) for an admin.
 */
export function viewerStatus(
  ticket: Pick<Ticket, "status" | "comments">,
  viewer: TicketViewer,
): TicketStatus {
  if (ticket.status === "close") return "close";
  const last: CommentType = ticket.comments[ticket.comments.length - 1]?.type ?? "USER";
  const other: CommentType = viewer === "admin" ? "USER" : "ADMIN";
  return last === other ? "responsed" : "open";
}

const ticketId = recordId(TicketMsg.badId);
const desc = z.string().trim().min(1, TicketMsg.descEmpty).max(TICKET_DESC_MAX, TicketMsg.descTooLong);

export const createTicketInput = z.object({
  title: z.string().trim().min(1, TicketMsg.titleEmpty).max(TICKET_TITLE_MAX, TicketMsg.titleTooLong),
  desc,
  imageUrl: imageRef.default(""),
});
export const replyTicketInput = z.object({ id: ticketId, desc, imageUrl: imageRef.default("") });
export const ticketIdInput = z.object({ id: ticketId });
