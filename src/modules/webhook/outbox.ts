/**
 * The webhook outbox (issue 30 §3). The code that makes an event calls queueWebhookEvent inside the
 * event's own transaction, so a delivery exists exactly when the event does (a rolled-back payment
 * queues nothing); the webhook-sender job (sender.ts) posts it later, off every request's path.
 */
import type { AppContext } from "../../context.ts";
import { newId } from "../../rpc/ids.ts";
import type { Webhook, WebhookEvent } from "./schema.ts";

/** The webhooks that want `type` (none: the event costs nothing more than this look at the settings). */
export async function webhooksFor(ctx: AppContext, type: WebhookEvent): Promise<Webhook[]> {
  const webhooks = await ctx.settings.get("webhooks");
  return webhooks.length === 0 ? [] : webhooks.filter((webhook) => webhook.events.includes(type));
}

/** What every delivery posts: `{id, type, time, data}` (time in ms since the epoch). */
export function webhookBody(id: string, type: string, time: number, data: unknown): string {
  return JSON.stringify({ id, type, time, data });
}

/** Writes one outbox row for a webhook; answers the row's id. */
export async function insertDelivery(
  ctx: AppContext,
  webhook: Webhook,
  event: { id: string; type: string; time: number; body: string },
  fields: { nextTryTime: number } | { attempt: number; status: number; error: string; delivered: boolean },
): Promise<string> {
  const id = newId(event.time);
  if ("nextTryTime" in fields) {
    await ctx.db.run(
      `INSERT INTO webhook_deliveries (id, event_id, webhook_id, url, type, event_time, body, next_try_time)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      event.id,
      webhook.id,
      webhook.url,
      event.type,
      event.time,
      event.body,
      fields.nextTryTime,
    );
  } else {
    // An attempt already made (发送测试): logged as done, never retried.
    await ctx.db.run(
      `INSERT INTO webhook_deliveries (id, event_id, webhook_id, url, type, event_time, body, attempts, next_try_time,
           last_try_time, last_status, last_error, delivered_time, given_up_time)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?8, ?9, ?10, ?11, ?12)`,
      id,
      event.id,
      webhook.id,
      webhook.url,
      event.type,
      event.time,
      event.body,
      fields.attempt,
      fields.status,
      fields.error,
      fields.delivered ? fields.attempt : 0,
      fields.delivered ? 0 : fields.attempt,
    );
  }
  return id;
}

/**
 * Queues `type` with `data` for every webhook that wants it, in the caller's transaction (plain
 * INSERTs join it). A no-op, without a write, when no webhook wants the type. `data` may be a
 * function, called only then: lookups the body alone needs are not made for nothing.
 */
export async function queueWebhookEvent(
  ctx: AppContext,
  type: WebhookEvent,
  data: unknown | (() => Promise<unknown>),
  now = Date.now(),
): Promise<void> {
  const webhooks = await webhooksFor(ctx, type);
  if (webhooks.length === 0) return;
  const payload = typeof data === "function" ? await (data as () => Promise<unknown>)() : data;
  const id = newId(now);
  const body = webhookBody(id, type, now, payload);
  for (const webhook of webhooks) {
    await insertDelivery(ctx, webhook, { id, type, time: now, body }, { nextTryTime: now });
  }
}
