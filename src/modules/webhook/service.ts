/**
 * The back office's side of webhooks (issue 30 §3): the delivery log and 发送测试. The setting itself
 * is saved through 配置管理's set_config (settings/service.ts keeps masked secrets, refuses private
 * targets).
 */
import type { AppContext } from "../../context.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { insertDelivery, webhookBody } from "./outbox.ts";
import {
  type DeliveryState,
  WEBHOOK_PING,
  type WebhookDelivery,
  type WebhookLog,
  type WebhookSummary,
  type WebhookTestResult,
  type webhookLogInput,
} from "./schema.ts";
import { postWebhook, WEBHOOK_TIMINGS } from "./sender.ts";

interface DeliveryRow {
  id: string;
  event_id: string;
  webhook_id: string;
  url: string;
  type: string;
  event_time: number;
  attempts: number;
  next_try_time: number;
  last_try_time: number;
  last_status: number;
  last_error: string;
  delivered_time: number;
  given_up_time: number;
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  const state: DeliveryState =
    row.delivered_time > 0 ? "delivered" : row.given_up_time > 0 ? "given_up" : "pending";
  return {
    _id: row.id,
    eventId: row.event_id,
    webhookId: row.webhook_id,
    url: row.url,
    type: row.type,
    eventTime: row.event_time,
    attempts: row.attempts,
    state,
    lastStatus: row.last_status,
    lastError: row.last_error,
    lastTryTime: row.last_try_time,
    nextTryTime: state === "pending" ? row.next_try_time : 0,
    doneTime: row.delivered_time || row.given_up_time,
  };
}

const DELIVERY_COLUMNS = `id, event_id, webhook_id, url, type, event_time, attempts, next_try_time, last_try_time,
  last_status, last_error, delivered_time, given_up_time`;

/** Per webhook of the setting: its latest attempt and its waiting deliveries; then a page of deliveries, newest first. */
export async function webhookLog(
  ctx: AppContext,
  input: ReturnType<typeof webhookLogInput.parse>,
): Promise<WebhookLog> {
  const summaries: WebhookSummary[] = [];
  for (const webhook of await ctx.settings.get("webhooks")) {
    const last = await ctx.db.get<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? AND last_try_time > 0
         ORDER BY last_try_time DESC, id DESC LIMIT 1`,
      webhook.id,
    );
    const pending = await ctx.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND delivered_time = 0 AND given_up_time = 0",
      webhook.id,
    );
    summaries.push({
      webhookId: webhook.id,
      lastStatus: last?.last_status ?? 0,
      lastError: last?.last_error ?? "",
      lastTryTime: last?.last_try_time ?? 0,
      lastDelivered: (last?.delivered_time ?? 0) > 0,
      pending: Number(pending?.n ?? 0),
    });
  }
  const filter = "CAST(? AS TEXT) = '' OR webhook_id = ?";
  const total = await ctx.db.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE ${filter}`,
    input.webhookId,
    input.webhookId,
  );
  const rows = await ctx.db.all<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE ${filter}
       ORDER BY event_time DESC, id DESC LIMIT ? OFFSET ?`,
    input.webhookId,
    input.webhookId,
    input.size,
    (input.page - 1) * input.size,
  );
  return { summaries, list: rows.map(toDelivery), total: Number(total?.n ?? 0) };
}

/**
 * 发送测试: posts a `ping` event to the saved webhook now (its URL and secret as stored), waits for
 * the answer (at most the sender's timeout) and logs the attempt as a delivery that is never retried.
 */
export async function sendTestWebhook(ctx: AppContext, id: string): Promise<WebhookTestResult> {
  const webhook = (await ctx.settings.get("webhooks")).find((candidate) => candidate.id === id);
  if (!webhook) throw new RpcError(Code.notFound, "Webhook 不存在，请先保存");
  const now = Date.now();
  const eventId = newId(now);
  const body = webhookBody(eventId, WEBHOOK_PING, now, {
    webhookId: webhook.id,
    message: "飞渡 Webhook 测试",
  });
  const attempt = await postWebhook(ctx, webhook, body, WEBHOOK_TIMINGS.timeoutMs);
  const ok = attempt.status >= 200 && attempt.status < 300;
  await insertDelivery(
    ctx,
    webhook,
    { id: eventId, type: WEBHOOK_PING, time: now, body },
    { attempt: Date.now(), status: attempt.status, error: attempt.error, delivered: ok },
  );
  return { ...attempt, ok, eventId };
}
