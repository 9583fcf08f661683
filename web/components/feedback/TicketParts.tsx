/** Pieces of the /feedback page: status badge, list, image viewer, message, create and reply forms. */
import { type FormEvent, useId, useState } from "react";
import {
  createTicketInput,
  replyTicketInput,
  TICKET_DESC_MAX,
  TICKET_STATUS_TEXT,
  TICKET_TITLE_MAX,
  type Ticket,
  type TicketComment,
  type TicketStatus,
  type TicketViewer,
  viewerStatus,
} from "../../../src/modules/feedback/schema.ts";
import { schemaErrors } from "../admin/formErrors.ts";
import { Dialog } from "../Dialog.tsx";
import { Field } from "../Field.tsx";
import { formatDateTime } from "../format.ts";
import { ImageUpload } from "../ImageUpload.tsx";
import { SubmitDialog } from "../SubmitDialog.tsx";

export function TicketBadge({ status }: { status: TicketStatus }) {
  return <span className={`badge ticket-status ticket-status-${status}`}>{TICKET_STATUS_TEXT[status]}</span>;
}

/** The newest message's text, for the list's one-line preview. */
const lastText = (ticket: Ticket) => ticket.comments[ticket.comments.length - 1]?.text ?? ticket.desc;

export function TicketList({
  tickets,
  viewer,
  openId,
  onOpen,
}: {
  tickets: readonly Ticket[];
  viewer: TicketViewer;
  openId: string;
  onOpen: (id: string) => void;
}) {
  return (
    <ul className="ticket-list">
      {tickets.map((ticket) => (
        <li key={ticket._id}>
          <button
            type="button"
            className={`ticket-item${ticket._id === openId ? " ticket-item-on" : ""}`}
            aria-current={ticket._id === openId ? "true" : undefined}
            onClick={() => onOpen(ticket._id)}
          >
            <span className="ticket-item-top">
              <span className="ticket-item-title">{ticket.title}</span>
              <TicketBadge status={viewerStatus(ticket, viewer)} />
            </span>
            <span className="ticket-item-preview">{lastText(ticket)}</span>
            <span className="ticket-item-meta">
              {viewer === "admin" ? <span className="ticket-item-email">{ticket.email}</span> : null}
              <time dateTime={new Date(ticket.updateTime).toISOString()}>
                {formatDateTime(ticket.updateTime)}
              </time>
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}

/** A thumbnail that opens the full-size image in a dialog. */
export function TicketImage({ url }: { url: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="ticket-thumb" aria-label="查看大图" onClick={() => setOpen(true)}>
        <img src={url} alt="工单图片" loading="lazy" />
      </button>
      <Dialog
        open={open}
        onClose={() => setOpen(false)}
        title="查看图片"
        size="lg"
        footer={
          <>
            <a className="btn" href={url} target="_blank" rel="noopener noreferrer">
              新窗口打开原图
            </a>
            <button type="button" className="btn btn-primary" onClick={() => setOpen(false)}>
              关闭
            </button>
          </>
        }
      >
        <img className="ticket-full-image" src={url} alt="工单图片（原图）" />
      </Dialog>
    </>
  );
}

export interface ThreadMessage {
  key: string;
  /** Who wrote it, as the viewer reads it: 我 / 客服 / the customer's e-mail. */
  author: string;
  mine: boolean;
  fromSupport: boolean;
  time: number;
  text: string;
  imageUrl: string;
}

/** 客服; an admin also sees who answered (「客服 · 命令行」 for `ferry ticket reply`). */
const supportLabel = (comment: TicketComment, viewer: TicketViewer) =>
  viewer === "admin" ? `客服 · ${comment.staff || "命令行"}` : "客服";

/** The opening message and the comments, oldest first, labelled for the viewer. */
export function threadOf(ticket: Ticket, viewer: TicketViewer): ThreadMessage[] {
  const customer = viewer === "user" ? "我" : ticket.email;
  const opening: ThreadMessage = {
    key: "opening",
    author: customer,
    mine: viewer === "user",
    fromSupport: false,
    time: ticket.createTime,
    text: ticket.desc,
    imageUrl: ticket.imageUrl,
  };
  return [
    opening,
    ...ticket.comments.map((comment, index) => {
      const fromSupport = comment.type === "ADMIN";
      return {
        key: String(index),
        author: fromSupport ? supportLabel(comment, viewer) : customer,
        mine: fromSupport === (viewer === "admin"),
        fromSupport,
        time: comment.updateTime,
        text: comment.text,
        imageUrl: comment.imageUrl,
      };
    }),
  ];
}

export function Thread({ messages }: { messages: readonly ThreadMessage[] }) {
  return (
    <ol className="ticket-thread" aria-label="对话记录">
      {messages.map((message) => (
        <li
          key={message.key}
          className={`ticket-message${message.mine ? " ticket-message-mine" : ""}${message.fromSupport ? " ticket-message-support" : ""}`}
        >
          <div className="ticket-message-head">
            <span className="ticket-message-author">{message.author}</span>
            <time dateTime={new Date(message.time).toISOString()}>{formatDateTime(message.time)}</time>
          </div>
          <p className="ticket-message-text">{message.text}</p>
          {message.imageUrl ? <TicketImage url={message.imageUrl} /> : null}
        </li>
      ))}
    </ol>
  );
}

/** A labelled textarea with its error line (Field is for one-line inputs). */
function DescField({
  label,
  value,
  error,
  placeholder,
  rows,
  onChange,
}: {
  label: string;
  value: string;
  error?: string;
  placeholder: string;
  rows: number;
  onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className={`field${error ? " field-invalid" : ""}`}>
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <textarea
        id={id}
        className="input ticket-textarea"
        rows={rows}
        maxLength={TICKET_DESC_MAX}
        placeholder={placeholder}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(event) => onChange(event.target.value)}
      />
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

export interface TicketForm {
  title: string;
  desc: string;
  imageUrl: string;
}

/** The create dialog: title, description, optional image; errors under their fields. */
export function CreateTicketDialog({
  busy,
  onSubmit,
  onClose,
}: {
  busy: boolean;
  onSubmit: (form: TicketForm) => void;
  onClose: () => void;
}) {
  const [form, setForm] = useState<TicketForm>({ title: "", desc: "", imageUrl: "" });
  const [errors, setErrors] = useState<Partial<Record<keyof TicketForm, string>>>({});
  /** Edits a field and drops its error: the message answered what was there before. */
  const edit = (field: keyof TicketForm, value: string) => {
    setForm({ ...form, [field]: value });
    setErrors({ ...errors, [field]: undefined });
  };

  function submit() {
    const found = schemaErrors(createTicketInput, form);
    setErrors(found);
    if (Object.keys(found).length === 0) onSubmit(form);
  }

  return (
    <SubmitDialog
      open
      onClose={onClose}
      title="提交工单"
      closeOnBackdrop={false}
      submitText="提交"
      busy={busy}
      onSubmit={submit}
    >
      <Field
        label="标题"
        name="title"
        placeholder="一句话说明问题，例如：香港节点全部超时"
        maxLength={TICKET_TITLE_MAX}
        value={form.title}
        error={errors.title}
        data-autofocus
        onChange={(event) => edit("title", event.target.value)}
      />
      <DescField
        label="描述"
        rows={5}
        placeholder="请描述遇到的问题：使用的客户端、节点、出现的时间和提示信息"
        value={form.desc}
        error={errors.desc}
        onChange={(desc) => edit("desc", desc)}
      />
      <ImageUpload
        label="截图（可选）"
        value={form.imageUrl}
        onChange={(imageUrl) => edit("imageUrl", imageUrl)}
      />
      {errors.imageUrl ? <p className="field-error">{errors.imageUrl}</p> : null}
    </SubmitDialog>
  );
}

/** The reply box under the conversation; the text is kept when sending fails. */
export function ReplyForm({
  ticketId,
  viewer,
  busy,
  onSubmit,
}: {
  ticketId: string;
  viewer: TicketViewer;
  busy: boolean;
  onSubmit: (reply: { desc: string; imageUrl: string }) => Promise<boolean>;
}) {
  const [desc, setDesc] = useState("");
  const [imageUrl, setImageUrl] = useState("");
  const [error, setError] = useState<string | undefined>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    const found = schemaErrors(replyTicketInput, { id: ticketId, desc, imageUrl });
    setError(found.desc ?? found.imageUrl);
    if (found.desc || found.imageUrl) return;
    if (await onSubmit({ desc, imageUrl })) {
      setDesc("");
      setImageUrl("");
    }
  }

  return (
    <form className="form ticket-reply" onSubmit={(event) => void submit(event)} noValidate>
      <DescField
        label="回复"
        rows={3}
        placeholder={viewer === "admin" ? "回复用户，用户会收到通知" : "补充说明或回复客服"}
        value={desc}
        error={error}
        onChange={(text) => {
          setDesc(text);
          setError(undefined);
        }}
      />
      <div className="ticket-reply-actions">
        <ImageUpload label="附图（可选）" value={imageUrl} onChange={setImageUrl} />
        <button type="submit" className="btn btn-primary" disabled={busy}>
          发送回复
        </button>
      </div>
    </form>
  );
}
