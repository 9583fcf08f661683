/**
 * 配置管理 → Webhook (issue 30 §3): the webhooks of the setting `webhooks` (add, edit, remove: each
 * saves the whole list through set_config at once), 发送测试 per webhook, and the delivery log (the
 * last status per webhook, then the latest deliveries). Secrets come masked; a webhook saved with
 * the mask keeps its secret (the server matches it by id).
 */
import { useCallback, useEffect, useState } from "react";
import { SECRET_MASK } from "../../../src/modules/settings/schema.ts";
import {
  type DeliveryState,
  WEBHOOK_EVENT_LABELS,
  WEBHOOK_EVENTS,
  type Webhook,
  type WebhookDelivery,
  type WebhookLog,
  type WebhookSummary,
  webhookSchema,
} from "../../../src/modules/webhook/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminTable, editDeleteColumn } from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { savedToast, toastFailure, toastResult } from "../../components/admin/feedback.ts";
import { schemaErrors, useFormErrors } from "../../components/admin/formErrors.ts";
import { CheckListField } from "../../components/admin/inputs.tsx";
import { Field } from "../../components/Field.tsx";
import { formatDateTime } from "../../components/format.ts";
import type { Column } from "../../components/Table.tsx";
import { toast } from "../../components/Toast.tsx";

export const WebhookMsg = {
  title: "Webhook",
  saveFailed: "Webhook 保存失败",
  deleted: "Webhook 已删除",
  deleteFailed: "Webhook 删除失败",
  testOk: (status: number) => `测试事件已送达（HTTP ${status}）`,
  testFailed: (error: string) => `测试事件未送达：${error}`,
} as const;

/** How many of the latest deliveries the log shows. */
const LOG_SIZE = 100;

const EVENT_OPTIONS = WEBHOOK_EVENTS.map((value) => ({
  value,
  label: `${WEBHOOK_EVENT_LABELS[value]}（${value}）`,
}));

const STATE_TEXT: Record<DeliveryState, string> = {
  delivered: "已送达",
  pending: "重试中",
  given_up: "已放弃",
};
const STATE_CLASS: Record<DeliveryState, string> = {
  delivered: "admin-status-ok",
  pending: "admin-status-wait",
  given_up: "webhook-status-failed",
};

type Draft = Webhook & { index: number | null };
const NEW_WEBHOOK: Draft = { index: null, id: "", url: "", secret: "", events: [] };

const eventLabel = (type: string) => WEBHOOK_EVENT_LABELS[type as Webhook["events"][number]] ?? type;

function lastResult(summary: WebhookSummary | undefined) {
  if (!summary || summary.lastTryTime === 0) return <span className="admin-hint">尚未投递</span>;
  const state: DeliveryState = summary.lastDelivered ? "delivered" : "given_up";
  return (
    <span className="webhook-last">
      <span className={`badge ${STATE_CLASS[state]}`}>
        {summary.lastStatus > 0 ? `HTTP ${summary.lastStatus}` : "无应答"}
      </span>{" "}
      {formatDateTime(summary.lastTryTime)}
      {summary.lastError ? <span className="webhook-error">{summary.lastError}</span> : null}
    </span>
  );
}

const logColumns: Column<WebhookDelivery>[] = [
  { key: "eventTime", title: "事件时间", render: (d) => formatDateTime(d.eventTime) },
  { key: "type", title: "事件", render: (d) => (d.type === "ping" ? "测试（ping）" : eventLabel(d.type)) },
  { key: "url", title: "地址", className: "admin-wrap webhook-url", render: (d) => d.url },
  {
    key: "state",
    title: "状态",
    render: (d) => <span className={`badge ${STATE_CLASS[d.state]}`}>{STATE_TEXT[d.state]}</span>,
  },
  { key: "attempts", title: "尝试次数", className: "admin-num", render: (d) => d.attempts },
  {
    key: "last",
    title: "最后结果",
    className: "admin-wrap",
    render: (d) =>
      d.lastTryTime === 0
        ? "等待发送"
        : `${d.lastStatus > 0 ? `HTTP ${d.lastStatus}` : "无应答"}${d.lastError ? `：${d.lastError}` : ""}`,
  },
];

export function WebhookSection({ initial }: { initial: Webhook[] }) {
  const [webhooks, setWebhooks] = useState<Webhook[]>(initial);
  const [log, setLog] = useState<WebhookLog | null>(null);
  const [logFailed, setLogFailed] = useState(false);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState(false);
  const [testing, setTesting] = useState<string | null>(null);
  const { errors, formRef, check } = useFormErrors(WebhookMsg.saveFailed);

  const loadLog = useCallback(async () => {
    const answer = await call("/api/admin/webhooks/log", { webhookId: "", page: 1, size: LOG_SIZE });
    setLogFailed(answer.code !== Code.ok);
    if (answer.code === Code.ok) setLog(answer.data);
  }, []);
  useEffect(() => {
    void loadLog();
  }, [loadLog]);

  /** Saves the whole list; answers whether it was saved. */
  const saveList = async (next: Webhook[]) => {
    const answer = await call("/api/admin/config/set_config", { webhooks: next });
    if (answer.code !== Code.ok) return answer;
    setWebhooks(answer.data.webhooks);
    void loadLog();
    return answer;
  };
  const { confirmDelete, dialog: confirmDialog } = useConfirmedCall(loadLog);

  const open = (next: Draft) => {
    check({});
    setDraft(next);
  };

  const save = async () => {
    if (!draft) return;
    const { index, ...webhook } = draft;
    if (!check(schemaErrors(webhookSchema, webhook))) return;
    const next =
      index === null ? [...webhooks, webhook] : webhooks.map((old, i) => (i === index ? webhook : old));
    setBusy(true);
    const answer = await saveList(next);
    setBusy(false);
    if (toastResult(answer, savedToast({ _id: webhook.id || undefined }), WebhookMsg.saveFailed))
      setDraft(null);
  };

  const remove = (webhook: Webhook) =>
    confirmDelete(
      `Webhook ${webhook.url} 将被删除，尚未送达的事件不再发送。`,
      () => saveList(webhooks.filter((other) => other.id !== webhook.id)),
      WebhookMsg,
    );

  const sendTest = async (webhook: Webhook) => {
    setTesting(webhook.id);
    const answer = await call("/api/admin/webhooks/test", { id: webhook.id });
    setTesting(null);
    void loadLog();
    if (answer.code !== Code.ok) return toastFailure(answer, WebhookMsg.testFailed(answer.msg));
    if (answer.data.ok) toast.success(WebhookMsg.testOk(answer.data.status));
    else toast.error(WebhookMsg.testFailed(answer.data.error));
  };

  const summaryOf = (id: string) => log?.summaries.find((summary) => summary.webhookId === id);
  const columns: Column<Webhook & { index: number }>[] = [
    { key: "url", title: "地址", className: "admin-wrap webhook-url", render: (w) => w.url },
    {
      key: "events",
      title: "事件",
      className: "admin-wrap webhook-events",
      render: (w) => w.events.map(eventLabel).join("、"),
    },
    { key: "last", title: "最近投递", className: "admin-wrap", render: (w) => lastResult(summaryOf(w.id)) },
    { key: "pending", title: "待发送", className: "admin-num", render: (w) => summaryOf(w.id)?.pending ?? 0 },
    {
      ...editDeleteColumn<Webhook & { index: number }>(
        (w) => open({ ...w }),
        (w) => void remove(w),
        [{ label: testing === null ? "发送测试" : "测试中…", onClick: (w) => void sendTest(w) }],
      ),
      className: "admin-sticky-actions",
    },
  ];
  const rows = webhooks.map((webhook, index) => ({ ...webhook, index }));
  const logRows = log?.list ?? [];

  return (
    <section className="card admin-section webhook-section" aria-labelledby="webhook-title">
      <div className="webhook-head">
        <h2 id="webhook-title" className="card-title">
          {WebhookMsg.title}
        </h2>
        <button type="button" className="btn btn-primary" onClick={() => open(NEW_WEBHOOK)}>
          添加 Webhook
        </button>
      </div>
      <p className="card-note">
        事件发生时向这些地址 POST JSON {"{id, type, time, data}"}，请求头 X-Ferry-Signature 带时间戳与
        HMAC-SHA256 签名（校验方法见 README）。接收方返回 2xx 即为送达；否则按退避间隔重试，24
        小时后放弃并记入运维日志。
      </p>
      <AdminTable
        list={{ rows, loading: false, loaded: true, failed: false }}
        columns={columns}
        rowKey={(w) => w.id || String(w.index)}
        caption="Webhook 列表"
      />
      <div className="webhook-head">
        <h3 className="webhook-log-title">投递记录</h3>
        <button type="button" className="btn btn-small" onClick={() => void loadLog()}>
          刷新
        </button>
      </div>
      <AdminTable
        list={{ rows: logRows, loading: false, loaded: log !== null || logFailed, failed: logFailed }}
        columns={logColumns}
        rowKey={(d) => d._id}
        caption={`最近 ${LOG_SIZE} 条投递记录`}
      />
      <FormDialog
        open={draft !== null}
        title={draft?.index === null ? "添加 Webhook" : "编辑 Webhook"}
        onClose={() => setDraft(null)}
        onSubmit={save}
        busy={busy}
        formRef={formRef}
      >
        {draft ? (
          <>
            <Field
              label="地址"
              value={draft.url}
              error={errors.url}
              placeholder="https://hooks.example.com/ferry"
              data-autofocus
              onChange={(event) => setDraft({ ...draft, url: event.target.value })}
            />
            <div className="admin-field">
              <Field
                label="密钥"
                type="password"
                autoComplete="new-password"
                value={draft.secret}
                error={errors.secret}
                onChange={(event) => setDraft({ ...draft, secret: event.target.value })}
              />
              <p className="admin-hint">
                {draft.id
                  ? `已设置时显示 ${SECRET_MASK}，不修改则保留原值`
                  : "至少 8 个字符，用于计算签名；保存后不再显示"}
              </p>
            </div>
            <CheckListField
              label="事件"
              selected={draft.events}
              options={EVENT_OPTIONS}
              error={errors.events}
              onChange={(events) => setDraft({ ...draft, events: events as Webhook["events"] })}
            />
          </>
        ) : null}
      </FormDialog>
      {confirmDialog}
    </section>
  );
}
