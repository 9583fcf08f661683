/**
 * The bot's own messages about events (issue 13 §5). An order paid is told by the transaction that
 * pays it. States that come from time or usage rather than one event — permanent traffic below
 * 10 % or used up, a time package ending within 3 days, a node turning 异常 — are found by a
 * periodic scan (bot.ts) and told once per state: telegram_alerts keeps, per kind and subject,
 * the state last told (docs/decisions.md, "Telegram bot").
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { formatYuan } from "../../lib/money.ts";
import { businessDateTime, DAY_MS } from "../../lib/time.ts";
import { formatTraffic } from "../../lib/traffic.ts";
import { type AgentRow, agentStatus } from "../node-record/service.ts";
import type { OrderRow } from "../order/service.ts";
import { queueAdminMessage, queueUserMessage } from "./outbox.ts";

/** Permanent traffic below this share of what the last top-up left is "running low". */
export const LOW_TRAFFIC_SHARE = 0.1;
/** A time package ending within this is announced. */
export const ENDING_SOON_MS = 3 * DAY_MS;

const PAY_METHODS: Record<string, string> = {
  alipay: "支付宝",
  wxpay: "微信",
  usdt: "USDT",
  wallet: "钱包",
  manual: "人工",
};

/** Inside markPaid's transaction, once the order is paid: the buyer and the admins are told. */
export async function tellOrderPaid(ctx: AppContext, order: OrderRow, method: string): Promise<void> {
  const paid = formatYuan(order.order_money_fen - order.coupon_discount_fen);
  const how = PAY_METHODS[method] ?? method;
  await queueUserMessage(
    ctx,
    order.user_id,
    `订单已支付：${order.desc}\n金额：${paid} 元（${how}）\n已到账，感谢购买！发送 /traffic 查看剩余流量。`,
    `order-paid:${order.id}`,
  );
  const email =
    (await ctx.db.get<{ email: string }>("SELECT email FROM users WHERE id = ?", order.user_id))?.email ??
    order.user_id;
  await queueAdminMessage(
    ctx,
    `新订单已支付：${email} 购买 ${order.desc}，${paid} 元（${how}）`,
    `order-paid:${order.id}`,
  );
}

/** Records that `ref` is told for (kind, subject); false when it already was. */
async function markTold(
  ctx: AppContext,
  kind: string,
  subjectId: string,
  ref: string,
  now: number,
): Promise<boolean> {
  const told = await ctx.db.get<{ ref: string }>(
    "SELECT ref FROM telegram_alerts WHERE kind = ? AND subject_id = ?",
    kind,
    subjectId,
  );
  if (told?.ref === ref) return false;
  await ctx.db.run(
    `INSERT INTO telegram_alerts (kind, subject_id, ref, told_time) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (kind, subject_id) DO UPDATE SET ref = ?3, told_time = ?4`,
    kind,
    subjectId,
    ref,
    now,
  );
  return true;
}

/** Runs every scan in one transaction; returns how many alerts were queued. */
export async function scanAlerts(ctx: AppContext, now = Date.now()): Promise<number> {
  return await tx(
    ctx.db,
    async () =>
      (await scanTraffic(ctx, now)) + (await scanEndingPackages(ctx, now)) + (await scanNodes(ctx, now)),
  );
}

/**
 * Bound accounts whose permanent traffic is below 10 % of what it was right after its latest
 * top-up (the balance of their newest ledger row that added traffic), or used up: each told once
 * per top-up, "used up" also when it comes without a "low" first.
 */
async function scanTraffic(ctx: AppContext, now: number): Promise<number> {
  const rows = await ctx.db.all<{ id: string; traffic: number; topup_id: number; topped_up_to: number }>(
    `SELECT u.id, v.traffic, r.id AS topup_id, r.all_traffic AS topped_up_to
       FROM telegram_bindings b
       JOIN users u ON u.id = b.user_id
       JOIN balances v ON v.user_id = u.id
       JOIN traffic_records r ON r.id = (
         SELECT t.id FROM traffic_records t WHERE t.user_id = u.id AND t.traffic_change > 0
         ORDER BY t.update_time DESC, t.id DESC LIMIT 1)
       WHERE u.disabled = 0 AND v.traffic < r.all_traffic * ?`,
    LOW_TRAFFIC_SHARE,
  );
  let queued = 0;
  for (const row of rows) {
    const ref = String(row.topup_id);
    if (row.traffic <= 0) {
      await markTold(ctx, "traffic-low", row.id, ref, now);
      if (!(await markTold(ctx, "traffic-out", row.id, ref, now))) continue;
      await queueUserMessage(ctx, row.id, "你的永久流量已用完。请到网站商店购买流量后继续使用。");
    } else {
      if (!(await markTold(ctx, "traffic-low", row.id, ref, now))) continue;
      await queueUserMessage(
        ctx,
        row.id,
        `你的永久流量只剩 ${formatTraffic(row.traffic)}，不到上次充值后 ${formatTraffic(row.topped_up_to)} 的 10%，请及时购买。`,
      );
    }
    queued += 1;
  }
  return queued;
}

/** Bound accounts whose time package ends within 3 days: told once per expiry. */
async function scanEndingPackages(ctx: AppContext, now: number): Promise<number> {
  const timeZone = await ctx.settings.get("timezone");
  const rows = await ctx.db.all<{ id: string; vip_expire_time: number }>(
    `SELECT u.id, u.vip_expire_time FROM telegram_bindings b JOIN users u ON u.id = b.user_id
       WHERE u.disabled = 0 AND u.vip_expire_time > ? AND u.vip_expire_time <= ?`,
    now,
    now + ENDING_SOON_MS,
  );
  let queued = 0;
  for (const row of rows) {
    if (!(await markTold(ctx, "package-ending", row.id, String(row.vip_expire_time), now))) continue;
    await queueUserMessage(
      ctx,
      row.id,
      `你的时间套餐将于 ${businessDateTime(row.vip_expire_time, timeZone)} 到期，如需继续使用请及时续费。`,
    );
    queued += 1;
  }
  return queued;
}

/**
 * Nodes that have called the panel but stopped (异常, as the back office shows them): told to the
 * admins once per outage — the outage is named by the last time the node was heard.
 */
async function scanNodes(ctx: AppContext, now: number): Promise<number> {
  const updateSeconds = await ctx.settings.get("updateV2rayDuration");
  const rows = (await ctx.db.all<AgentRow>("SELECT * FROM agents WHERE last_seen_time > 0")).filter(
    (row) => !agentStatus(row, updateSeconds, now),
  );
  const timeZone = await ctx.settings.get("timezone");
  let queued = 0;
  for (const row of rows) {
    const outage = String(row.last_seen_time);
    if (!(await markTold(ctx, "node-error", row.id, outage, now))) continue;
    await queueAdminMessage(
      ctx,
      `节点异常：${row.name}（${row.ip}）自 ${businessDateTime(row.last_seen_time, timeZone)} 起没有上报。`,
      `node-error:${row.id}:${outage}`,
    );
    queued += 1;
  }
  return queued;
}
