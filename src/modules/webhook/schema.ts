/**
 * Webhooks (issue 30 §3): what the setting `webhooks` holds and what the back office's Webhook
 * section sends and gets. Shared with the SPA; imports nothing of the server.
 */
import { z } from "zod";

/** The events a webhook may ask for (README "Webhooks" gives each one's data). */
export const WEBHOOK_EVENTS = [
  "order.paid",
  "user.registered",
  "withdrawal.requested",
  "withdrawal.settled",
  "ticket.created",
  "ticket.replied",
  "node.down",
  "node.up",
  "traffic.exhausted",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** What 发送测试 sends: no webhook subscribes to it, it goes only where the test is asked for. */
export const WEBHOOK_PING = "ping";

export const WEBHOOK_EVENT_LABELS: Record<WebhookEvent, string> = {
  "order.paid": "订单支付",
  "user.registered": "用户注册",
  "withdrawal.requested": "提现申请",
  "withdrawal.settled": "提现处理（已打款或已拒绝）",
  "ticket.created": "新工单",
  "ticket.replied": "工单回复",
  "node.down": "节点离线",
  "node.up": "节点恢复",
  "traffic.exhausted": "用户流量用完",
};

export const MAX_WEBHOOKS = 20;

/** http(s)://host[:port][/path][?query]: no credentials, no fragment. */
export function isWebhookUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (
      (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password && !url.hash
    );
  } catch {
    return false;
  }
}

export const webhookSchema = z.object({
  /** Given by the server when a webhook is first saved (""); keeps a webhook's secret and log across URL edits. */
  id: z
    .string()
    .max(64)
    .regex(/^[\w-]*$/, "Webhook ID 只能含字母、数字、- 和 _")
    .default(""),
  url: z.string().trim().max(500).refine(isWebhookUrl, "须为 http(s):// 开头的地址，不含用户名、密码和 #"),
  /** The HMAC key of X-Ferry-Signature; the settings' mask keeps the stored one. */
  secret: z.string().min(8, "密钥至少 8 个字符").max(200, "密钥最多 200 个字符"),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1, "请至少选择一个事件").max(WEBHOOK_EVENTS.length),
});
export type Webhook = z.infer<typeof webhookSchema>;

export const webhooksSchema = z
  .array(webhookSchema)
  .max(MAX_WEBHOOKS, `最多 ${MAX_WEBHOOKS} 个 Webhook`)
  .refine((list) => {
    const ids = list.map((webhook) => webhook.id).filter(Boolean);
    return new Set(ids).size === ids.length;
  }, "Webhook ID 重复");

/** `/api/admin/webhooks/test`: the saved webhook to send a ping to. */
export const webhookTestInput = z.object({ id: z.string().min(1).max(64) });

/** The outcome of one attempt (a test or the last of a delivery). */
export interface WebhookAttempt {
  /** The HTTP status of the answer; 0 when none came (refused, timed out, not resolvable). */
  status: number;
  /** '' on a 2xx; else what went wrong. */
  error: string;
}

export type WebhookTestResult = WebhookAttempt & { ok: boolean; eventId: string };

export const webhookLogInput = z.object({
  /** One webhook's deliveries; "" = all. */
  webhookId: z.string().max(64).default(""),
  page: z.number().int().min(1).max(100_000).default(1),
  size: z.number().int().min(1).max(100).default(20),
});

export type DeliveryState = "pending" | "delivered" | "given_up";

export interface WebhookDelivery {
  _id: string;
  eventId: string;
  webhookId: string;
  url: string;
  type: string;
  eventTime: number;
  attempts: number;
  state: DeliveryState;
  lastStatus: number;
  lastError: string;
  lastTryTime: number;
  /** When the next attempt is due (pending only). */
  nextTryTime: number;
  doneTime: number;
}

/** Per webhook: its latest attempt and how many deliveries wait. */
export interface WebhookSummary {
  webhookId: string;
  lastStatus: number;
  lastError: string;
  lastTryTime: number;
  lastDelivered: boolean;
  pending: number;
}

export interface WebhookLog {
  summaries: WebhookSummary[];
  list: WebhookDelivery[];
  total: number;
}
