/**
 * 问题反馈 /feedback (seed 000 §2 Feedback, §4, §5): the ticket list, the open ticket's conversation
 * with a reply box, the create dialog, and for admins every customer's tickets and closing them.
 * The open ticket is in the URL (`#/feedback?id=…`), where the bell notice of an answer points.
 */
import { useState } from "react";
import {
  TICKET_STATUS_TEXT,
  type Ticket,
  TicketMsg,
  type TicketStatus,
  type TicketViewer,
  viewerStatus,
} from "../../src/modules/feedback/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { type Answer, call } from "../api.ts";
import { useConfirm } from "../components/admin/ConfirmDialog.tsx";
import { openTicket, useOpenTicketId } from "../components/feedback/openTicketUrl.ts";
import {
  CreateTicketDialog,
  ReplyForm,
  Thread,
  TicketBadge,
  type TicketForm,
  TicketList,
  threadOf,
} from "../components/feedback/TicketParts.tsx";
import { useTickets } from "../components/feedback/useTickets.ts";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { DEFAULT_PAGE_SIZE, Pager, usePaged } from "../components/Pager.tsx";
import { Segmented } from "../components/Segmented.tsx";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { useSession } from "../session.ts";

type Filter = "all" | TicketStatus;
const FILTERS: { key: Filter; label: string }[] = [
  { key: "all", label: "全部" },
  { key: "open", label: TICKET_STATUS_TEXT.open },
  { key: "responsed", label: TICKET_STATUS_TEXT.responsed },
  { key: "close", label: TICKET_STATUS_TEXT.close },
];

/** A failure toast for a refused call; network failures and expired sessions toasted already. */
function toastRefusal(answer: Answer<unknown>) {
  if (answer.code !== Code.ok && answer.code !== Code.network && answer.code !== Code.notLoggedIn)
    toast.error(answer.msg, TOAST_SHORT);
}

function Intro({ viewer }: { viewer: TicketViewer }) {
  return (
    <p className="card-note">
      工单一般在一个工作日内回复。连接、订阅类问题可以先看看 <a href="#/windows_errors">常见问题</a>。
      {viewer === "admin" ? " 管理员视角：「已回复」表示用户发来了新消息，等待处理。" : null}
    </p>
  );
}

function TicketDetail({
  ticket,
  viewer,
  busy,
  onReply,
  onClose,
}: {
  ticket: Ticket;
  viewer: TicketViewer;
  busy: boolean;
  onReply: (reply: { desc: string; imageUrl: string }) => Promise<boolean>;
  onClose: () => void;
}) {
  const closed = ticket.status === "close";
  return (
    <article className="card ticket-detail" aria-label={`工单：${ticket.title}`}>
      <button type="button" className="btn btn-small btn-ghost ticket-back" onClick={() => openTicket("")}>
        ‹ 返回列表
      </button>
      <header className="ticket-detail-head">
        <div className="ticket-detail-title">
          <h2 className="card-title">{ticket.title}</h2>
          <TicketBadge status={viewerStatus(ticket, viewer)} />
        </div>
        {viewer === "admin" && !closed ? (
          <button type="button" className="btn btn-small admin-danger" onClick={onClose}>
            关闭工单
          </button>
        ) : null}
      </header>
      <p className="card-note ticket-detail-meta">
        {viewer === "admin" ? <span>{ticket.email}</span> : null}
        <span>提交于 {formatDateTime(ticket.createTime)}</span>
        <span>工单号 {ticket._id}</span>
      </p>
      <Thread messages={threadOf(ticket, viewer)} />
      {closed ? (
        <p className="ticket-closed" role="status">
          {TicketMsg.closed}
          {ticket.closeTime ? `，关闭时间 ${formatDateTime(ticket.closeTime)}` : null}
        </p>
      ) : (
        <ReplyForm key={ticket._id} ticketId={ticket._id} viewer={viewer} busy={busy} onSubmit={onReply} />
      )}
    </article>
  );
}

function ListPane({
  tickets,
  viewer,
  openId,
}: {
  tickets: readonly Ticket[];
  viewer: TicketViewer;
  openId: string;
}) {
  const [filter, setFilter] = useState<Filter>("all");
  const shown = filter === "all" ? tickets : tickets.filter((t) => viewerStatus(t, viewer) === filter);
  const { slice, pager } = usePaged(shown);
  return (
    <section className="ticket-pane ticket-list-pane" aria-label="工单列表">
      <Segmented legend="工单状态" items={FILTERS} value={filter} onChange={setFilter} />
      {shown.length === 0 ? (
        <p className="ticket-empty">{TicketMsg.empty}</p>
      ) : (
        <TicketList tickets={slice} viewer={viewer} openId={openId} onOpen={openTicket} />
      )}
      {shown.length > DEFAULT_PAGE_SIZE ? <Pager {...pager} /> : null}
    </section>
  );
}

export function FeedbackPage() {
  const session = useSession();
  const user = session.user;
  const viewer: TicketViewer = user?.type === "admin" ? "admin" : "user";
  const openId = useOpenTicketId();
  const { tickets, open, update } = useTickets(user?._id ?? "", openId);
  const [creating, setCreating] = useState(false);
  const [busy, setBusy] = useState(false);
  const [confirm, confirmDialog] = useConfirm();

  async function create(form: TicketForm) {
    setBusy(true);
    const answer = await call("/api/feedback/create", form);
    setBusy(false);
    if (answer.code !== Code.ok) return toastRefusal(answer);
    setCreating(false);
    toast.success(TicketMsg.created, TOAST_SHORT);
    update(answer.data);
    openTicket(answer.data._id);
  }

  async function reply(id: string, body: { desc: string; imageUrl: string }): Promise<boolean> {
    setBusy(true);
    const answer = await call("/api/feedback/response", { id, ...body });
    setBusy(false);
    if (answer.code === Code.ok) {
      update(answer.data);
      toast.success(TicketMsg.replied, TOAST_SHORT);
      return true;
    }
    toastRefusal(answer);
    // Closed meanwhile: show it closed.
    if (answer.code === Code.ticketClosed) {
      const fresh = await call("/api/feedback/refresh", { id });
      if (fresh.code === Code.ok) update(fresh.data);
    }
    return false;
  }

  async function close(ticket: Ticket) {
    const confirmed = await confirm({
      title: "关闭工单",
      message: `「${ticket.title}」：${TicketMsg.closeConfirm}`,
      confirmText: "关闭工单",
    });
    if (!confirmed) return;
    const answer = await call("/api/feedback/close", { id: ticket._id });
    if (answer.code !== Code.ok) return toastRefusal(answer);
    update(answer.data);
    toast.success(TicketMsg.closedOk, TOAST_SHORT);
  }

  const head = (
    <div className="ticket-page-head">
      <h1 className="page-title">问题反馈</h1>
      {user ? (
        <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
          提交工单
        </button>
      ) : null}
    </div>
  );

  if (session.ready && !user) {
    return (
      <div className="page">
        {head}
        <Intro viewer="user" />
        <LoginPrompt
          title="登录后提交和查看工单"
          note="遇到使用问题可以提交工单，客服一般在一个工作日内回复。"
        />
      </div>
    );
  }
  if (!session.ready || tickets === null) {
    return (
      <div className="page">
        {head}
        <div className="spinner page-spinner" role="status" aria-label="加载中" />
      </div>
    );
  }

  const shown = open?.state === "ok" ? open.ticket : tickets.find((t) => t._id === openId);
  return (
    <div className="page">
      {head}
      <Intro viewer={viewer} />
      <div className={`ticket-layout${openId ? " ticket-layout-open" : ""}`}>
        <ListPane tickets={tickets} viewer={viewer} openId={openId} />
        <section className="ticket-pane ticket-detail-pane" aria-label="工单详情">
          {!openId ? (
            <p className="ticket-placeholder">选择左侧的工单查看对话</p>
          ) : shown ? (
            <TicketDetail
              ticket={shown}
              viewer={viewer}
              busy={busy}
              onReply={(body) => reply(shown._id, body)}
              onClose={() => void close(shown)}
            />
          ) : open?.state === "missing" ? (
            <div className="card ticket-missing">
              <p>{TicketMsg.notFound}</p>
              <button type="button" className="btn btn-small" onClick={() => openTicket("")}>
                返回列表
              </button>
            </div>
          ) : (
            <div className="spinner page-spinner" role="status" aria-label="加载中" />
          )}
        </section>
      </div>
      {creating ? (
        <CreateTicketDialog
          busy={busy}
          onSubmit={(form) => void create(form)}
          onClose={() => setCreating(false)}
        />
      ) : null}
      {confirmDialog}
    </div>
  );
}
