/**
 * A fake Telegram Bot API on 127.0.0.1 speaking the real wire format (https://core.telegram.org/bots/api):
 * `POST /bot<token>/<method>` with a JSON body, answered `{ok: true, result}` or
 * `{ok: false, error_code, description, parameters?}` with the same HTTP status. It knows getMe,
 * getUpdates (long polling: waits up to `timeout` seconds for an update; an offset confirms every
 * update below it; 409 while a webhook is set), sendMessage (recorded; 400 "chat not found" for a
 * chat that never wrote, 403 for one that blocked the bot), setWebhook, deleteWebhook,
 * getWebhookInfo, setMyCommands and sendDocument (multipart/form-data with the file in `document`,
 * recorded with its bytes; 413 over the 50 MB bound). Switches make it answer 500, hang, or flood-control (429).
 * It counts the getUpdates requests in progress at once (`polling`, `maxPolling`): Telegram allows
 * one poller per bot, so several replicas must never poll together.
 */
import type { AppContext } from "../../src/context.ts";

export const FAKE_BOT_TOKEN = "7000000001:AAFakeTokenForFerryTests_abcdefghij";
export const FAKE_BOT_USERNAME = "ferry_test_bot";

/** The bot's loops fast enough for tests; the alert scan runs when the token is set, then hourly. */
export const FAST_BOT_TIMINGS = {
  tickMs: 20,
  pollTimeoutSeconds: 1,
  requestTimeoutMs: 1_000,
  retryDelaysMs: [100, 200],
  scanIntervalMs: 3_600_000,
};

export interface FakeChat {
  id: number;
  first_name: string;
  username?: string;
}

export interface SentMessage {
  chat_id: number;
  text: string;
  parse_mode?: string;
  link_preview_options?: { is_disabled?: boolean };
}

export interface SentDocument {
  chat_id: number;
  caption?: string;
  fileName: string;
  bytes: Uint8Array;
}

export type FakeMode = "normal" | "error500" | "hang";

export interface Update {
  update_id: number;
  message: Record<string, unknown>;
}

export interface FakeTelegram {
  url: string;
  mode: FakeMode;
  /** Messages the bot sent, in order. */
  sent: SentMessage[];
  /** Files the bot sent (sendDocument), in order. */
  documents: SentDocument[];
  /** Every method called, in order (with its parameters). */
  calls: { method: string; params: Record<string, unknown> }[];
  /** Requests being held while in "hang" mode. */
  readonly held: number;
  /** getUpdates requests in progress now: a long poll counts until it is answered or its client goes away. */
  readonly polling: number;
  /** The most getUpdates requests ever in progress at once. */
  readonly maxPolling: number;
  webhook: { url: string; secret_token: string } | null;
  /** Chats that blocked the bot (sendMessage answers 403). */
  blocked: Set<number>;
  /** The next n sendMessage calls answer 429 with this retry_after. */
  floodNext(retryAfterSeconds: number, times?: number): void;
  /** A user writes to the bot in a private chat; returns the update id. */
  userSays(chat: FakeChat, text: string): number;
  /** The update Telegram would post to a webhook for this private message (not queued for getUpdates). */
  webhookUpdate(chat: FakeChat, text: string): Update;
  /** A message in a group the bot is in. */
  groupSays(groupId: number, from: FakeChat, text: string): number;
  /** Updates not yet confirmed by an offset. */
  pendingUpdates(): number;
  messagesTo(chatId: number): SentMessage[];
  close(): Promise<void>;
}

const fail = (status: number, description: string, parameters?: Record<string, unknown>) =>
  Response.json(
    { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) },
    { status },
  );

export function startFakeTelegram(token = FAKE_BOT_TOKEN): FakeTelegram {
  const updates: Update[] = [];
  const knownChats = new Set<number>();
  const waiters = new Set<() => void>();
  const heldReleases = new Set<() => void>();
  const floods: number[] = [];
  let nextUpdateId = 500_000;
  let polling = 0;
  let maxPolling = 0;
  let nextMessageId = 1;
  let confirmedBelow = 0;

  const notifyWaiters = () => {
    for (const wake of waiters) wake();
    waiters.clear();
  };

  function makeUpdate(message: Record<string, unknown>): Update {
    nextUpdateId += 1;
    return {
      update_id: nextUpdateId,
      message: { message_id: nextMessageId++, date: Math.floor(Date.now() / 1000), ...message },
    };
  }

  function addUpdate(message: Record<string, unknown>): number {
    const update = makeUpdate(message);
    updates.push(update);
    notifyWaiters();
    return update.update_id;
  }

  function privateMessage(chat: FakeChat, text: string): Record<string, unknown> {
    knownChats.add(chat.id);
    const { is_bot: _, ...privateChat } = userOf(chat);
    return { from: userOf(chat), chat: { ...privateChat, type: "private" }, text };
  }

  const userOf = (chat: FakeChat) => ({
    id: chat.id,
    is_bot: false,
    first_name: chat.first_name,
    ...(chat.username ? { username: chat.username } : {}),
  });

  async function getUpdates(params: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    if (fake.webhook) {
      return fail(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    }
    const offset = Number(params.offset ?? 0);
    if (offset > 0) {
      confirmedBelow = Math.max(confirmedBelow, offset);
      while (updates.length > 0 && (updates[0] as Update).update_id < confirmedBelow) updates.shift();
    }
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    const timeout = Math.min(50, Math.max(0, Number(params.timeout ?? 0)));
    const available = () => updates.filter((u) => u.update_id >= offset).slice(0, limit);
    if (available().length === 0 && timeout > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeout * 1000);
        function done() {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        }
        waiters.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
    return Response.json({ ok: true, result: available() });
  }

  function sendMessage(params: Record<string, unknown>): Response {
    const chatId = params.chat_id;
    const text = params.text;
    if (typeof chatId !== "number" && typeof chatId !== "string")
      return fail(400, "Bad Request: chat_id is empty");
    if (typeof text !== "string" || text.length === 0) return fail(400, "Bad Request: message text is empty");
    if ([...text].length > 4096) return fail(400, "Bad Request: message is too long");
    const flood = floods.shift();
    if (flood !== undefined)
      return fail(429, `Too Many Requests: retry after ${flood}`, { retry_after: flood });
    const id = Number(chatId);
    if (fake.blocked.has(id)) return fail(403, "Forbidden: bot was blocked by the user");
    if (!knownChats.has(id)) return fail(400, "Bad Request: chat not found");
    fake.sent.push({ ...(params as object), chat_id: id, text } as SentMessage);
    return Response.json({
      ok: true,
      result: {
        message_id: nextMessageId++,
        from: {
          id: Number(token.split(":")[0]),
          is_bot: true,
          first_name: "Ferry Test",
          username: FAKE_BOT_USERNAME,
        },
        chat: { id, type: "private", first_name: "someone" },
        date: Math.floor(Date.now() / 1000),
        text,
      },
    });
  }

  async function sendDocument(params: Record<string, unknown>): Promise<Response> {
    const id = Number(params.chat_id);
    const document = params.document;
    if (!(document instanceof Blob)) return fail(400, "Bad Request: there is no document in the request");
    if (document.size > 50 * 1000 * 1000) return fail(413, "Request Entity Too Large");
    if (fake.blocked.has(id)) return fail(403, "Forbidden: bot was blocked by the user");
    if (!knownChats.has(id)) return fail(400, "Bad Request: chat not found");
    const fileName = document instanceof File ? document.name : "document";
    const caption = typeof params.caption === "string" ? params.caption : undefined;
    fake.documents.push({
      chat_id: id,
      fileName,
      bytes: new Uint8Array(await document.arrayBuffer()),
      caption,
    });
    return Response.json({
      ok: true,
      result: {
        message_id: nextMessageId++,
        chat: { id, type: "private", first_name: "someone" },
        date: Math.floor(Date.now() / 1000),
        document: { file_name: fileName, file_size: document.size, file_id: `doc${nextMessageId}` },
      },
    });
  }

  async function answer(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Response> {
    switch (method) {
      case "getMe":
        return Response.json({
          ok: true,
          result: {
            id: Number(token.split(":")[0]),
            is_bot: true,
            first_name: "Ferry Test",
            username: FAKE_BOT_USERNAME,
            can_join_groups: true,
            can_read_all_group_messages: false,
            supports_inline_queries: false,
          },
        });
      case "getUpdates":
        return getUpdates(params, signal);
      case "sendMessage":
        return sendMessage(params);
      case "setWebhook":
        if (typeof params.url !== "string")
          return fail(400, "Bad Request: bad webhook: URL must be specified");
        fake.webhook =
          params.url === "" ? null : { url: params.url, secret_token: String(params.secret_token ?? "") };
        return Response.json({ ok: true, result: true, description: "Webhook was set" });
      case "deleteWebhook":
        fake.webhook = null;
        return Response.json({ ok: true, result: true, description: "Webhook was deleted" });
      case "getWebhookInfo":
        return Response.json({
          ok: true,
          result: {
            url: fake.webhook?.url ?? "",
            has_custom_certificate: false,
            pending_update_count: updates.length,
          },
        });
      case "sendDocument":
        return await sendDocument(params);
      case "setMyCommands":
        return Response.json({ ok: true, result: true });
      default:
        return fail(404, "Not Found");
    }
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(request.url).pathname);
      if (!match) return fail(404, "Not Found");
      if (match[1] !== token) return fail(401, "Unauthorized");
      const method = match[2] as string;
      let params: Record<string, unknown> = {};
      if (request.headers.get("content-type")?.startsWith("multipart/form-data")) {
        params = Object.fromEntries(await request.formData());
        fake.calls.push({ method, params });
        return await handle(method, params, request);
      }
      const body = await request.text();
      if (body) {
        try {
          params = JSON.parse(body) as Record<string, unknown>;
        } catch {
          return fail(400, "Bad Request: can't parse JSON");
        }
      }
      fake.calls.push({ method, params });
      if (method !== "getUpdates") return await handle(method, params, request);
      polling += 1;
      maxPolling = Math.max(maxPolling, polling);
      try {
        return await handle(method, params, request);
      } finally {
        polling -= 1;
      }
    },
  });

  async function handle(
    method: string,
    params: Record<string, unknown>,
    request: Request,
  ): Promise<Response> {
    if (fake.mode === "hang") {
      await new Promise<void>((resolve) => {
        heldReleases.add(resolve);
        request.signal.addEventListener("abort", () => {
          heldReleases.delete(resolve);
          resolve();
        });
      });
      return fail(502, "Bad Gateway");
    }
    if (fake.mode === "error500") return fail(500, "Internal Server Error");
    return await answer(method, params, request.signal);
  }

  const fake: FakeTelegram = {
    url: `http://127.0.0.1:${server.port}`,
    mode: "normal",
    sent: [],
    documents: [],
    calls: [],
    get held() {
      return heldReleases.size;
    },
    get polling() {
      return polling;
    },
    get maxPolling() {
      return maxPolling;
    },
    webhook: null,
    blocked: new Set(),
    floodNext(retryAfterSeconds, times = 1) {
      for (let i = 0; i < times; i += 1) floods.push(retryAfterSeconds);
    },
    userSays: (chat, text) => addUpdate(privateMessage(chat, text)),
    webhookUpdate: (chat, text) => makeUpdate(privateMessage(chat, text)),
    groupSays(groupId, from, text) {
      return addUpdate({
        from: userOf(from),
        chat: { id: groupId, type: "group", title: "some group" },
        text,
      });
    },
    pendingUpdates: () => updates.filter((u) => u.update_id >= confirmedBelow).length,
    messagesTo: (chatId) => fake.sent.filter((message) => message.chat_id === chatId),
    async close() {
      for (const release of heldReleases) release();
      notifyWaiters();
      await server.stop(true);
    },
  };
  // Leaving "hang" lets held requests answer (502), as a proxy in front of a stuck API might.
  let mode: FakeMode = "normal";
  Object.defineProperty(fake, "mode", {
    get: () => mode,
    set(value: FakeMode) {
      mode = value;
      if (value !== "hang") {
        for (const release of heldReleases) release();
        heldReleases.clear();
      }
    },
  });
  return fake;
}

/** Binds a chat to an account directly, as /bind would: for tests of what the bot is told. */
export async function bindChat(
  server: { context: AppContext },
  userId: string,
  chatId: number,
): Promise<void> {
  await server.context.db.run(
    "INSERT INTO telegram_bindings (user_id, chat_id, bind_time) VALUES (?, ?, ?)",
    userId,
    chatId,
    Date.now(),
  );
}

/** The texts queued for a chat, oldest first. */
export async function outboxTexts(server: { context: AppContext }, chatId: number): Promise<string[]> {
  return (
    await server.context.db.all<{ text: string }>(
      "SELECT text FROM telegram_outbox WHERE chat_id = ? ORDER BY create_time",
      chatId,
    )
  ).map((row) => row.text);
}
