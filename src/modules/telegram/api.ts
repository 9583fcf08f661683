/**
 * The Telegram Bot API over HTTP (DESIGN §9): `POST <base>/bot<token>/<method>` with a JSON body,
 * answered by `{ok: true, result}` or `{ok: false, error_code, description, parameters?}`. Every
 * call has a timeout and a bounded answer; nothing here runs on a panel request's path.
 */
import { readStreamCapped } from "../../lib/http.ts";
import { outboundFetch } from "../../lib/outbound.ts";

/** https://core.telegram.org/bots/api#user */
export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
}

/** https://core.telegram.org/bots/api#chat (the fields the bot reads). */
export interface TgChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  username?: string;
  first_name?: string;
  last_name?: string;
}

export interface TgMessage {
  message_id: number;
  from?: TgUser;
  chat: TgChat;
  date: number;
  text?: string;
}

/** https://core.telegram.org/bots/api#update: the bot asks for `message` updates only. */
export interface TgUpdate {
  update_id: number;
  message?: TgMessage;
}

export type BotAnswer<T> =
  | { ok: true; result: T }
  | {
      ok: false;
      /** The HTTP status, or 0 when no answer came (network error, timeout, unreadable body). */
      status: number;
      description: string;
      /** Seconds to wait (429 flood control). */
      retryAfter: number | null;
    };

/** Answers longer than this are not read (a getUpdates page of 100 long messages stays well below). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface BotEndpoint {
  base: string;
  token: string;
  /** `--allow-private-urls`: the base may be a loopback or private address (lib/outbound.ts). */
  allowPrivate: boolean;
}

/** `<base>/bot<token>/<method>`; base may carry a path (a self-hosted Bot API behind a prefix). */
export function methodUrl(endpoint: BotEndpoint, method: string): string {
  const base = endpoint.base.trim().replace(/\/+$/, "");
  return `${base}/bot${endpoint.token}/${method}`;
}

/** Calls one method. Never throws: failures come back as `{ok: false}` with what is known. */
export async function callBot<T>(
  endpoint: BotEndpoint,
  method: string,
  params: Record<string, unknown>,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<BotAnswer<T>> {
  const signals = [AbortSignal.timeout(options.timeoutMs)];
  if (options.signal) signals.push(options.signal);
  let response: Response;
  try {
    response = await outboundFetch(
      methodUrl(endpoint, method),
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(params),
        signal: AbortSignal.any(signals),
      },
      endpoint.allowPrivate,
    );
  } catch (error) {
    return failure(0, describeFetchError(error));
  }
  return await answerOf<T>(response, options.signal);
}

/** Telegram's bound on files a bot uploads (sendDocument): 50 MB. */
export const MAX_BOT_UPLOAD_BYTES = 50 * 1000 * 1000;

/**
 * sendDocument (https://core.telegram.org/bots/api#senddocument): the file as multipart/form-data,
 * streamed from disk. Never throws, as callBot.
 */
export async function sendBotDocument(
  endpoint: BotEndpoint,
  params: { chatId: number; file: string; fileName: string; caption?: string },
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<BotAnswer<TgMessage>> {
  const signals = [AbortSignal.timeout(options.timeoutMs)];
  if (options.signal) signals.push(options.signal);
  const form = new FormData();
  form.set("chat_id", String(params.chatId));
  if (params.caption) form.set("caption", params.caption);
  form.set("document", Bun.file(params.file), params.fileName);
  let response: Response;
  try {
    response = await outboundFetch(
      methodUrl(endpoint, "sendDocument"),
      { method: "POST", body: form, signal: AbortSignal.any(signals) },
      endpoint.allowPrivate,
    );
  } catch (error) {
    return failure(0, describeFetchError(error));
  }
  return await answerOf<TgMessage>(response, options.signal);
}

/** A Bot API answer read (bounded) into `{ok: true, result}` or `{ok: false, …}`. */
async function answerOf<T>(response: Response, signal?: AbortSignal): Promise<BotAnswer<T>> {
  const text = await readCapped(response, MAX_ANSWER_BYTES, signal);
  if (text === null) return failure(response.status, `HTTP ${response.status}，应答无法读取或过大`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return failure(response.status, `HTTP ${response.status}，应答不是 JSON`);
  }
  if (isObject(body) && body.ok === true && "result" in body) return { ok: true, result: body.result as T };
  const description =
    isObject(body) && typeof body.description === "string" ? body.description.slice(0, 300) : "";
  const retryAfter =
    isObject(body) && isObject(body.parameters) && Number.isFinite(body.parameters.retry_after)
      ? Number(body.parameters.retry_after)
      : null;
  return {
    ok: false,
    status: response.status,
    description: description || `HTTP ${response.status}`,
    retryAfter,
  };
}

const failure = (status: number, description: string): BotAnswer<never> => ({
  ok: false,
  status,
  description,
  retryAfter: null,
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null;

function describeFetchError(error: unknown): string {
  const name = (error as Error)?.name;
  if (name === "TimeoutError") return "请求超时";
  if (name === "AbortError") return "已取消";
  return `网络错误：${String((error as Error)?.message ?? error).slice(0, 200)}`;
}

/** The body as text, or null when it is larger than `maxBytes` or the read fails. */
async function readCapped(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<string | null> {
  const read = await readStreamCapped(response.body, maxBytes, signal);
  return read.ok ? read.bytes.toString("utf8") : null;
}
