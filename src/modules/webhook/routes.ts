import { defineCall } from "../../rpc/call.ts";
import { webhookLogInput, webhookTestInput } from "./schema.ts";
import { sendTestWebhook, webhookLog } from "./service.ts";

/** 配置管理 → Webhook: the delivery log and 发送测试 (admin only; the list is saved through set_config). */
export const webhookCalls = [
  defineCall({
    path: "/api/admin/webhooks/log",
    access: "admin",
    input: webhookLogInput,
    handle: async (ctx, input) => await webhookLog(ctx.app, input),
  }),
  defineCall({
    path: "/api/admin/webhooks/test",
    access: "admin",
    input: webhookTestInput,
    handle: async (ctx, input) => await sendTestWebhook(ctx.app, input.id),
  }),
];
