/**
 * The bot inside `ferry serve` (issue 13 §5): two loops that run while a token is set, reading the
 * settings every round, so setting or clearing the token needs no restart.
 * - The sender sends due outbox rows one by one, backs off when the Bot API fails (honouring a
 *   429's retry_after), gives up on a row the API refuses for good (400/403/404: blocked, chat not
 *   found), runs the alert scans, and keeps the outbox bounded.
 * - The receiver long-polls getUpdates (or, with the webhook setting, registers the webhook and
 *   leaves the updates to routes.ts) and handles each update in a transaction with the offset.
 * All Bot API I/O is here, off every panel request's path, with timeouts.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { DAY_MS } from "../../lib/time.ts";
import { recordError } from "../errors/service.ts";
import { siteOrigin } from "../settings/schema.ts";
import { scanAlerts } from "./alerts.ts";
import { type BotAnswer, type BotEndpoint, callBot, type TgUpdate, type TgUser } from "./api.ts";
import { botIdOf, rememberBotIdentity, WEBHOOK_PREFIX, webhookSecrets } from "./bot-state.ts";
import { BOUND_COMMANDS, handleUpdate } from "./commands.ts";

export interface BotTimings {
  /** How often the sender looks for due messages (and the loops for a token while none is set). */
  tickMs: number;
  /** getUpdates' long-poll timeout, in seconds. */
  pollTimeoutSeconds: number;
  /** Timeout of one Bot API request (getUpdates: its poll timeout plus this). */
  requestTimeoutMs: number;
  /** Waits after consecutive failures; the last one repeats. */
  retryDelaysMs: number[];
  /** How often the alert scans run. */
  scanIntervalMs: number;
}

export const DEFAULT_BOT_TIMINGS: BotTimings = {
  tickMs: 1_000,
  pollTimeoutSeconds: 25,
  requestTimeoutMs: 10_000,
  retryDelaysMs: [5_000, 30_000, 120_000, 600_000],
  scanIntervalMs: 60_000,
};

/** Sent and failed rows are deleted after this. */
const KEEP_DONE_MS = 30 * DAY_MS;
/** A message still unsent after this is given up (a stale alert is worse than none). */
const GIVE_UP_PENDING_MS = 7 * DAY_MS;
const PRUNE_INTERVAL_MS = 3_600_000;
/** Rows one sender round looks at. */
const SEND_BATCH = 20;
/** Statuses after which the same message will never go through. */
const REFUSED_FOR_GOOD = new Set([400, 403, 404]);

export interface RunningBot {
  /** Makes the sender look for due messages now. */
  wake(): void;
  stop(): Promise<void>;
}

const running = new WeakMap<AppContext, RunningBot>();

/** Wakes the server's sender (after a webhook update queued an answer); nothing when none runs. */
export function wakeSender(ctx: AppContext): void {
  running.get(ctx)?.wake();
}

/** A sleep that wake() or stop() ends early. */
class Napper {
  private wakeUp: (() => void) | null = null;
  private woken = false;
  nap(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
  wake() {
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }
}

export const endpointOf = async (ctx: AppContext): Promise<BotEndpoint> => ({
  base: await ctx.settings.get("telegram_api_base"),
  token: await ctx.settings.get("telegram_bot_token"),
  allowPrivate: ctx.allowPrivateUrls,
});

export function startTelegramBot(ctx: AppContext, options: Partial<BotTimings> = {}): RunningBot {
  const timings = { ...DEFAULT_BOT_TIMINGS, ...options };
  const abort = new AbortController();
  const senderNap = new Napper();
  const receiverNap = new Napper();
  const delay = (failures: number) =>
    timings.retryDelaysMs[Math.min(failures, timings.retryDelaysMs.length) - 1] ?? timings.tickMs;
  const stopped = () => abort.signal.aborted;

  /** A loop round that throws is recorded and retried after a pause; the loop itself never dies. */
  async function guard(name: string, round: () => Promise<void>, nap: Napper): Promise<void> {
    while (!stopped()) {
      try {
        await round();
      } catch (error) {
        if (!stopped()) await recordError(ctx.db, `telegram ${name}`, error);
        await nap.nap(timings.retryDelaysMs[0] ?? timings.tickMs);
      }
    }
  }

  // ---- sender ----
  let sendFailures = 0;
  let pausedUntil = 0;
  let lastScan = 0;
  let lastPrune = 0;

  async function senderRound(): Promise<void> {
    const endpoint = await endpointOf(ctx);
    const now = Date.now();
    if (endpoint.token && now >= pausedUntil) {
      if (now - lastScan >= timings.scanIntervalMs) {
        lastScan = now;
        await scanAlerts(ctx, now);
      }
      if (now - lastPrune >= PRUNE_INTERVAL_MS) {
        lastPrune = now;
        await pruneOutbox(ctx, now);
      }
      const more = await sendDue(endpoint);
      if (more) return;
    }
    await senderNap.nap(timings.tickMs);
  }

  /** Sends due rows in order; true when it stopped with more due rows and no failure. */
  async function sendDue(endpoint: BotEndpoint): Promise<boolean> {
    const rows = await ctx.db.all<{ id: string; chat_id: number; text: string; attempts: number }>(
      `SELECT id, chat_id, text, attempts FROM telegram_outbox
         WHERE status = 'pending' AND next_try_time <= ? ORDER BY next_try_time, create_time, id LIMIT ${SEND_BATCH}`,
      Date.now(),
    );
    for (const row of rows) {
      if (stopped() || (await ctx.settings.get("telegram_bot_token")) !== endpoint.token) return false;
      const answer = await callBot(
        endpoint,
        "sendMessage",
        { chat_id: row.chat_id, text: row.text, link_preview_options: { is_disabled: true } },
        { timeoutMs: timings.requestTimeoutMs, signal: abort.signal },
      );
      if (stopped()) return false;
      if (!(await recordSendOutcome(row, answer))) return false;
    }
    return rows.length === SEND_BATCH;
  }

  /** Stores what happened to one send; false when the sender should pause. */
  async function recordSendOutcome(
    row: { id: string; attempts: number },
    answer: BotAnswer<unknown>,
  ): Promise<boolean> {
    const now = Date.now();
    const update =
      "UPDATE telegram_outbox SET status = ?, attempts = ?, next_try_time = ?, sent_time = ?, last_error = ? WHERE id = ?";
    const attempts = row.attempts + 1;
    if (answer.ok) {
      sendFailures = 0;
      await ctx.db.run(update, "sent", attempts, now, now, "", row.id);
      return true;
    }
    const error = `${answer.status || "网络"}: ${answer.description}`.slice(0, 500);
    if (answer.retryAfter !== null) {
      // Flood control: this chat, or the bot as a whole, waits as long as Telegram says.
      pausedUntil = now + answer.retryAfter * 1000;
      await ctx.db.run(update, "pending", attempts, pausedUntil, null, error, row.id);
      return false;
    }
    if (REFUSED_FOR_GOOD.has(answer.status)) {
      await ctx.db.run(update, "failed", attempts, now, null, error, row.id);
      return true;
    }
    // Unreachable, hanging, 5xx, 401 (a token Telegram no longer knows): the Bot API as a whole is
    // in trouble, so the whole sender pauses, longer each time; the row stays first in line.
    sendFailures += 1;
    pausedUntil = now + delay(sendFailures);
    await ctx.db.run(update, "pending", attempts, now, null, error, row.id);
    return false;
  }

  // ---- receiver ----
  /** What the receiver set up for: token, and webhook URL or "poll". */
  let preparedFor = "";
  let receiveFailures = 0;

  async function receiverRound(): Promise<void> {
    const endpoint = await endpointOf(ctx);
    if (!endpoint.token) {
      preparedFor = "";
      await receiverNap.nap(timings.tickMs);
      return;
    }
    const webhookUrl = await webhookUrlOf(ctx, endpoint.token);
    const setup = `${endpoint.token}|${webhookUrl ?? "poll"}`;
    if (preparedFor !== setup) {
      if (!(await prepare(endpoint, webhookUrl))) {
        receiveFailures += 1;
        await receiverNap.nap(delay(receiveFailures));
        return;
      }
      receiveFailures = 0;
      preparedFor = setup;
    }
    if (webhookUrl) {
      await receiverNap.nap(timings.tickMs);
      return;
    }
    await pollOnce(endpoint);
  }

  /** getMe (the bot's name for the profile page), then webhook or no webhook, then the command menu. */
  async function prepare(endpoint: BotEndpoint, webhookUrl: string | null): Promise<boolean> {
    const call = <T>(method: string, params: Record<string, unknown> = {}) =>
      callBot<T>(endpoint, method, params, { timeoutMs: timings.requestTimeoutMs, signal: abort.signal });
    const me = await call<TgUser>("getMe");
    if (!me.ok || typeof me.result?.username !== "string") return false;
    await rememberBotIdentity(ctx, {
      botId: botIdOf(endpoint.token),
      username: me.result.username,
    });
    const hook = webhookUrl
      ? await call<boolean>("setWebhook", {
          url: webhookUrl,
          secret_token: webhookSecrets(endpoint.token).header,
          allowed_updates: ["message"],
          max_connections: 1,
        })
      : await call<boolean>("deleteWebhook", { drop_pending_updates: false });
    if (!hook.ok) return false;
    await call<boolean>("setMyCommands", {
      commands: BOUND_COMMANDS.map((command) => ({ command: command.name, description: command.help })),
    });
    return true;
  }

  async function pollOnce(endpoint: BotEndpoint): Promise<void> {
    const botId = botIdOf(endpoint.token);
    const offset = await nextOffset(ctx, botId);
    const answer = await callBot<TgUpdate[]>(
      endpoint,
      "getUpdates",
      { offset, timeout: timings.pollTimeoutSeconds, allowed_updates: ["message"], limit: 100 },
      { timeoutMs: timings.pollTimeoutSeconds * 1000 + timings.requestTimeoutMs, signal: abort.signal },
    );
    if (stopped()) return;
    if (!answer.ok || !Array.isArray(answer.result)) {
      // 409: a webhook is set (or another poller runs): set up again, which deletes the webhook.
      if (!answer.ok && (answer.status === 409 || answer.status === 401)) preparedFor = "";
      receiveFailures += 1;
      await receiverNap.nap(
        !answer.ok && answer.retryAfter !== null ? answer.retryAfter * 1000 : delay(receiveFailures),
      );
      return;
    }
    receiveFailures = 0;
    if ((await ctx.settings.get("telegram_bot_token")) !== endpoint.token) return;
    if (await applyUpdates(ctx, botId, offset, answer.result)) senderNap.wake();
  }

  const bot: RunningBot = {
    wake: () => senderNap.wake(),
    async stop() {
      abort.abort();
      senderNap.wake();
      receiverNap.wake();
      await Promise.all([sender, receiver]);
      if (running.get(ctx) === bot) running.delete(ctx);
    },
  };
  const sender = guard("sender", senderRound, senderNap);
  const receiver = guard("receiver", receiverRound, receiverNap);
  running.set(ctx, bot);
  return bot;
}

/** The webhook URL when the webhook setting is on and the site's origin is known, else null (polling). */
export async function webhookUrlOf(ctx: AppContext, token: string): Promise<string | null> {
  const settings = await ctx.settings.all();
  const origin = siteOrigin(settings);
  if (!settings.telegram_webhook || !origin) return null;
  return `${origin}${WEBHOOK_PREFIX}${webhookSecrets(token).path}`;
}

/** The getUpdates offset of this bot (0 for a bot other than the one the stored offset belongs to). */
async function nextOffset(ctx: AppContext, botId: string): Promise<number> {
  const state = await ctx.db.get<{ bot_id: string; next_offset: number }>(
    "SELECT bot_id, next_offset FROM telegram_poll_state WHERE id = 1",
  );
  return state && state.bot_id === botId ? state.next_offset : 0;
}

/**
 * Moves the stored offset past an update unless it already is (this bot's offset only grows);
 * true when it moved, i.e. nobody has handled the update yet.
 */
async function passUpdate(ctx: AppContext, botId: string, next: number): Promise<boolean> {
  const moved = await ctx.db.run(
    "UPDATE telegram_poll_state SET bot_id = ?1, next_offset = ?2 WHERE id = 1 AND (bot_id <> ?1 OR next_offset < ?2)",
    botId,
    next,
  );
  return moved.changes > 0;
}

/**
 * Handles updates not seen before, each in one transaction with the offset after it, so an update
 * is handled once even across restarts and replicas: the offset is checked and moved inside the
 * transaction, so a webhook post another replica has handled (or is handling: one of the two
 * transactions waits or is run again, and then finds the offset moved) is skipped. One that throws
 * is recorded and skipped, never retried forever. True when an answer was queued.
 */
export async function applyUpdates(
  ctx: AppContext,
  botId: string,
  offset: number,
  updates: unknown[],
): Promise<boolean> {
  let answered = false;
  let seen = offset;
  for (const update of updates) {
    const id = (update as TgUpdate)?.update_id;
    if (!Number.isSafeInteger(id) || id < seen) continue;
    seen = id + 1;
    try {
      answered =
        (await tx(ctx.db, async () => {
          if (!(await passUpdate(ctx, botId, seen))) return false;
          return await handleUpdate(ctx, update as TgUpdate);
        })) || answered;
    } catch (error) {
      await recordError(ctx.db, "telegram update", error);
      await passUpdate(ctx, botId, seen);
    }
  }
  return answered;
}

/** A webhook update: handled once (update ids only grow), answered by the sender. */
export async function applyWebhookUpdate(ctx: AppContext, update: unknown): Promise<void> {
  const botId = botIdOf(await ctx.settings.get("telegram_bot_token"));
  if (await applyUpdates(ctx, botId, await nextOffset(ctx, botId), [update])) wakeSender(ctx);
}

/** Deletes old sent and failed rows and gives up rows pending for too long. */
export async function pruneOutbox(ctx: AppContext, now = Date.now()): Promise<void> {
  await tx(ctx.db, async () => {
    await ctx.db.run(
      "DELETE FROM telegram_outbox WHERE status IN ('sent', 'failed') AND create_time < ?",
      now - KEEP_DONE_MS,
    );
    await ctx.db.run(
      "UPDATE telegram_outbox SET status = 'failed', last_error = '超过 7 天未能发出，已放弃' WHERE status = 'pending' AND create_time < ?",
      now - GIVE_UP_PENDING_MS,
    );
  });
}
