/**
 * The webhook-sender job (issue 30 §3), under its lease (cluster/leases.ts): every poll it takes the
 * due outbox rows of each webhook and posts them, signed, through the outbound rule
 * (lib/outbound.ts). At least once: a row is claimed (attempts + 1, next try scheduled) before its
 * post, marked delivered only on a 2xx, and retried with capped exponential backoff until
 * giveUpAfterMs after the event, then given up, written to the error log and told to the admins' bot. Each webhook has at
 * most perWebhook posts in flight, so a receiver that hangs holds its own slots and no one else's.
 * The same scan marks nodes that went silent (node.down, node-states.ts).
 */
import { createHmac } from "node:crypto";
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { outboundFetch } from "../../lib/outbound.ts";
import { cutUtf8 } from "../../lib/text.ts";
import { DAY_MS, HOUR_MS } from "../../lib/time.ts";
import { recordError } from "../errors/service.ts";
import { queueAdminMessage } from "../telegram/outbox.ts";
import { scanSilentNodes } from "./node-states.ts";
import type { Webhook, WebhookAttempt } from "./schema.ts";

export interface WebhookTimings {
  /** How often due deliveries are looked for. */
  pollMs: number;
  /** One post, answer included, may take this long. */
  timeoutMs: number;
  /** The wait after the first failed attempt; each next one doubles it… */
  firstRetryMs: number;
  /** …up to this. */
  maxRetryMs: number;
  /** A delivery not made this long after its event is given up. */
  giveUpAfterMs: number;
  /** Posts in flight to one webhook. */
  perWebhook: number;
  /** Posts in flight in all. */
  maxInFlight: number;
  /** How often nodes are checked for silence (node.down). */
  nodeScanMs: number;
}

export const WEBHOOK_TIMINGS: WebhookTimings = {
  pollMs: 1_000,
  timeoutMs: 10_000,
  firstRetryMs: 30_000,
  maxRetryMs: HOUR_MS,
  giveUpAfterMs: 24 * HOUR_MS,
  perWebhook: 2,
  maxInFlight: 16,
  nodeScanMs: 15_000,
};

/** What of a receiver's answer is read (for the log): the rest is not waited for. */
const ANSWER_READ_BYTES = 1024;
const ERROR_TEXT_BYTES = 300;
export const SIGNATURE_HEADER = "X-Ferry-Signature";

/** `t=<unix seconds>, v1=<hex HMAC-SHA256 of "<t>.<body>">` */
export function signatureHeader(secret: string, body: string, seconds: number): string {
  const mac = createHmac("sha256", secret).update(`${seconds}.${body}`).digest("hex");
  return `t=${seconds}, v1=${mac}`;
}

/** The wait after the `attempts`-th failed attempt. */
export function retryDelay(attempts: number, timings: Pick<WebhookTimings, "firstRetryMs" | "maxRetryMs">) {
  return Math.min(timings.maxRetryMs, timings.firstRetryMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
}

/** Reads at most `limit` bytes of a body, then lets the rest go. */
async function readSome(response: Response, limit: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit));
}

function errorText(error: unknown): string {
  if (error instanceof DOMException && error.name === "TimeoutError") return "超时未应答";
  const message = error instanceof Error ? error.message : String(error);
  return cutUtf8(message, ERROR_TEXT_BYTES);
}

/** Posts one body to a webhook, signed; 2xx is success. Never throws. */
export async function postWebhook(
  ctx: AppContext,
  webhook: Webhook,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WebhookAttempt> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await outboundFetch(
      webhook.url,
      {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "user-agent": "Ferry-Webhook/1",
          [SIGNATURE_HEADER]: signatureHeader(webhook.secret, body, Math.floor(Date.now() / 1000)),
        },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      },
      ctx.allowPrivateUrls,
    );
    const answer = await readSome(response, ANSWER_READ_BYTES).catch(() => "");
    if (response.status >= 200 && response.status < 300) return { status: response.status, error: "" };
    return {
      status: response.status,
      error: cutUtf8(`HTTP ${response.status} ${answer.trim()}`.trim(), ERROR_TEXT_BYTES),
    };
  } catch (error) {
    return { status: 0, error: errorText(error) };
  }
}

interface DueRow {
  id: string;
  event_id: string;
  type: string;
  event_time: number;
  body: string;
  attempts: number;
}

export interface WebhookSender {
  stop(): Promise<void>;
}

/** Starts the job; `signal` (the lease's) aborts every post in flight and stops the polls at once. */
export function startWebhookSender(
  ctx: AppContext,
  options: Partial<WebhookTimings> = {},
  signal?: AbortSignal,
): WebhookSender {
  const timings = { ...WEBHOOK_TIMINGS, ...options };
  const abort = new AbortController();
  signal?.addEventListener("abort", () => abort.abort(), { once: true });
  /** Delivery id → its post, per webhook id. */
  const inFlight = new Map<string, Map<string, Promise<void>>>();
  let polling: Promise<void> | null = null;
  let scanning: Promise<void> | null = null;
  const count = () => [...inFlight.values()].reduce((sum, posts) => sum + posts.size, 0);

  async function finish(row: DueRow, webhook: Webhook, attempt: WebhookAttempt, tryTime: number) {
    const now = Date.now();
    if (attempt.status >= 200 && attempt.status < 300) {
      await ctx.db.run(
        "UPDATE webhook_deliveries SET delivered_time = ?, last_status = ?, last_error = '' WHERE id = ?",
        now,
        attempt.status,
        row.id,
      );
      return;
    }
    const deadline = row.event_time + timings.giveUpAfterMs;
    const givenUp = tryTime >= deadline;
    const failed = async () =>
      await ctx.db.run(
        "UPDATE webhook_deliveries SET last_status = ?, last_error = ?, given_up_time = ? WHERE id = ?",
        attempt.status,
        attempt.error,
        givenUp ? now : 0,
        row.id,
      );
    if (!givenUp) return void (await failed());
    const what = `Webhook 投递已放弃：${row.type} 事件 ${row.event_id} 发往 ${webhook.url}，${row.attempts + 1} 次均失败；最后一次：${attempt.error}`;
    // The admins' bot hears of a webhook giving up once a day at most, however many events it drops.
    await tx(ctx.db, async () => {
      await failed();
      await queueAdminMessage(ctx, what, `webhook-given-up:${webhook.id}:${Math.floor(now / DAY_MS)}`);
    });
    await recordError(ctx.db, "webhook sender", new Error(what));
  }

  /** Claims the row (another replica's sender may have it) and posts it. */
  async function deliver(row: DueRow, webhook: Webhook) {
    const now = Date.now();
    const deadline = row.event_time + timings.giveUpAfterMs;
    const next = Math.min(now + retryDelay(row.attempts + 1, timings), Math.max(deadline, now));
    const claimed = (
      await ctx.db.run(
        `UPDATE webhook_deliveries SET attempts = attempts + 1, last_try_time = ?, next_try_time = ?
           WHERE id = ? AND attempts = ? AND delivered_time = 0 AND given_up_time = 0`,
        now,
        next,
        row.id,
        row.attempts,
      )
    ).changes;
    if (claimed !== 1) return;
    const attempt = await postWebhook(ctx, webhook, row.body, timings.timeoutMs, abort.signal);
    // Stopped mid-post: the claim stands and the row is tried again when it is due.
    if (abort.signal.aborted) return;
    await finish(row, webhook, attempt, now);
  }

  function launch(row: DueRow, webhook: Webhook) {
    const posts = inFlight.get(webhook.id) ?? new Map<string, Promise<void>>();
    inFlight.set(webhook.id, posts);
    const post = deliver(row, webhook)
      .catch(async (error) => {
        if (!abort.signal.aborted) await recordError(ctx.db, "webhook sender", error).catch(() => {});
      })
      .finally(() => {
        posts.delete(row.id);
        if (posts.size === 0 && inFlight.get(webhook.id) === posts) inFlight.delete(webhook.id);
      });
    posts.set(row.id, post);
  }

  async function poll() {
    const webhooks = await ctx.settings.get("webhooks");
    const now = Date.now();
    for (const webhook of webhooks) {
      if (abort.signal.aborted) return;
      const posts = inFlight.get(webhook.id);
      const free = Math.min(timings.perWebhook - (posts?.size ?? 0), timings.maxInFlight - count());
      if (free <= 0) continue;
      const due = await ctx.db.all<DueRow>(
        `SELECT id, event_id, type, event_time, body, attempts FROM webhook_deliveries
           WHERE webhook_id = ? AND delivered_time = 0 AND given_up_time = 0 AND next_try_time <= ?
           ORDER BY next_try_time, id LIMIT ?`,
        webhook.id,
        now,
        free + (posts?.size ?? 0),
      );
      for (const row of due.filter((candidate) => !posts?.has(candidate.id)).slice(0, free)) {
        launch(row, webhook);
      }
    }
    await giveUpOrphans(webhooks, now);
  }

  /** Deliveries of a webhook no longer in the setting have nowhere to go. */
  let knownWebhooks: readonly Webhook[] | null = null;
  async function giveUpOrphans(webhooks: readonly Webhook[], now: number) {
    if (knownWebhooks === webhooks) return;
    knownWebhooks = webhooks;
    const ids = webhooks.map((webhook) => webhook.id);
    const pending = await ctx.db.all<{ webhook_id: string }>(
      "SELECT DISTINCT webhook_id FROM webhook_deliveries WHERE delivered_time = 0 AND given_up_time = 0",
    );
    for (const { webhook_id } of pending.filter((row) => !ids.includes(row.webhook_id))) {
      await ctx.db.run(
        `UPDATE webhook_deliveries SET given_up_time = ?, last_error = 'Webhook 已删除'
           WHERE webhook_id = ? AND delivered_time = 0 AND given_up_time = 0`,
        now,
        webhook_id,
      );
    }
  }

  const tick = (what: "poll" | "scan") => {
    if (abort.signal.aborted) return;
    if (what === "poll" && !polling) {
      polling = poll()
        .catch(async (error) => {
          if (!abort.signal.aborted) await recordError(ctx.db, "webhook sender", error).catch(() => {});
        })
        .finally(() => {
          polling = null;
        });
    }
    if (what === "scan" && !scanning) {
      scanning = scanSilentNodes(ctx)
        .then(() => {})
        .catch(async (error) => {
          if (!abort.signal.aborted) await recordError(ctx.db, "webhook node scan", error).catch(() => {});
        })
        .finally(() => {
          scanning = null;
        });
    }
  };
  const pollTimer = setInterval(() => tick("poll"), timings.pollMs);
  const scanTimer = setInterval(() => tick("scan"), timings.nodeScanMs);
  tick("poll");
  tick("scan");
  return {
    async stop() {
      clearInterval(pollTimer);
      clearInterval(scanTimer);
      abort.abort();
      await Promise.all([
        polling,
        scanning,
        ...[...inFlight.values()].flatMap((posts) => [...posts.values()]),
      ]);
    },
  };
}
