/**
 * The profile's bind calls (seed 000 §7 `/api/user/unbind`, plus `/api/user/bind_info`) and the
 * webhook Telegram posts updates to when the webhook setting is on:
 *   POST /api/telegram/webhook/<path secret>   header X-Telegram-Bot-Api-Secret-Token
 * Both secrets are derived from the token (bot-state.ts); anything else is a plain 404.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { readBodyText } from "../../lib/http.ts";
import { defineCall } from "../../rpc/call.ts";
import { sameSecret } from "../../rpc/ids.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { bindInfo, unbindAccount } from "./bind.ts";
import { applyWebhookUpdate, webhookUrlOf } from "./bot.ts";
import { WEBHOOK_PREFIX, webhookSecrets } from "./bot-state.ts";

/** An update is a few kB; Telegram's own limit on a message text is 4096 characters. */
const MAX_WEBHOOK_BYTES = 256 * 1024;

export const telegramCalls = [
  defineCall({
    path: "/api/user/bind_info",
    access: "user",
    input: emptyInput,
    // Each answer writes a fresh code; the page asks once per visit and on 刷新.
    limits: [
      {
        rule: { name: "bind-info", max: 30, windowMs: 10 * 60_000 },
        key: (_input, ctx) => ctx.user?.id ?? ctx.ip,
      },
    ],
    handle: async (ctx) => await bindInfo(ctx.app, ctx.user as UserRow),
  }),
  defineCall({
    path: "/api/user/unbind",
    access: "user",
    input: emptyInput,
    async handle(ctx) {
      await unbindAccount(ctx.app, (ctx.user as UserRow).id);
      return null;
    },
  }),
];

const notFound = () => new Response("Not Found", { status: 404 });

export function telegramRoutes(app: AppContext) {
  return new Elysia().post(
    `${WEBHOOK_PREFIX}:secret`,
    async ({ request, params }) => {
      const token = await app.settings.get("telegram_bot_token");
      if (!token || !(await webhookUrlOf(app, token))) return notFound();
      const secrets = webhookSecrets(token);
      const header = request.headers.get("x-telegram-bot-api-secret-token") ?? "";
      if (!sameSecret(params.secret, secrets.path) || !sameSecret(header, secrets.header)) return notFound();
      const body = await readBodyText(request, MAX_WEBHOOK_BYTES);
      if (!body.ok) return new Response("Payload Too Large", { status: 413 });
      let update: unknown;
      try {
        update = JSON.parse(body.text);
      } catch {
        return new Response("Bad Request", { status: 400 });
      }
      await applyWebhookUpdate(app, update);
      return new Response("ok");
    },
    { parse: "none" },
  );
}
