/**
 * Channels and their rebates. A channel belongs to one user; customers who signed up with its code
 * carry the code in users.channel_code (matched case-insensitively: codes are stored upper-case,
 * a cookie may carry any case). The rebate is written by payChannelRebate inside markPaid's
 * transaction, exactly once per order (channel_rewards.order_id UNIQUE).
 */
import type { AppContext } from "../../context.ts";
import { type Db, tx } from "../../db/db.ts";
import { fenToYuan, formatYuan } from "../../lib/money.ts";
import { DAY_MS } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { recordSave } from "../audit/service.ts";
import { randomCouponCode } from "../coupon/service.ts";
import { changeWallet } from "../ledger/service.ts";
import { createNotice } from "../notice/service.ts";
import type { OrderRow } from "../order/service.ts";
import { siteOrigin } from "../settings/schema.ts";
import { queueUserMessage } from "../telegram/outbox.ts";
import type { UserRow } from "../user/row.ts";
import { NO_CHANNEL_CODE } from "../user/schema.ts";
import { findUserByEmail, findUserById } from "../user/service.ts";
import {
  type Channel,
  type ChannelInfo,
  ChannelMsg,
  type InvitedUsers,
  maskEmail,
  type RewardList,
  rewardFen,
  type UpdateChannelInput,
  updateChannelInput,
} from "./schema.ts";

export interface ChannelRow {
  user_id: string;
  name: string;
  code: string;
  reward_rate: number;
  consumer_duration: number;
  create_time: number;
  update_time: number;
}

/** Lists shown on /channel stop at this many rows (the counts are complete). */
const LIST_LIMIT = 1000;

export async function findChannelOf(db: Db, userId: string): Promise<ChannelRow | null> {
  return await db.get<ChannelRow>("SELECT * FROM channels WHERE user_id = ?", userId);
}

async function findChannelByCode(db: Db, code: string): Promise<ChannelRow | null> {
  return await db.get<ChannelRow>("SELECT * FROM channels WHERE code = ?", code.toUpperCase());
}

const toChannel = (row: ChannelRow, email: string): Channel => ({
  email,
  name: row.name,
  code: row.code,
  rewardRate: row.reward_rate,
  comsumerDuration: row.consumer_duration,
});

/** get_user_channel: the user's channel, or null (also for an unknown user). */
export async function getUserChannel(ctx: AppContext, userId: string): Promise<Channel | null> {
  const user = await findUserById(ctx, userId);
  const row = user ? await findChannelOf(ctx.db, user.id) : null;
  return user && row ? toChannel(row, user.email) : null;
}

async function unusedChannelCode(db: Db): Promise<string> {
  for (;;) {
    const code = randomCouponCode();
    if (code !== NO_CHANNEL_CODE.toUpperCase() && !(await findChannelByCode(db, code))) return code;
  }
}

/**
 * update_channel: creates or changes the channel of the user with that e-mail and makes a normal
 * user type channel (admin and yunying keep their type: the role would be lowered otherwise).
 * A changed code moves the customers and orders invited under the old code along with it, in the
 * same transaction, so that nobody invited is lost and the old code is free for others.
 */
export async function updateChannel(
  ctx: AppContext,
  raw: UpdateChannelInput,
  now = Date.now(),
): Promise<Channel> {
  const parsed = updateChannelInput.safeParse(raw);
  if (!parsed.success) throw new RpcError(Code.badInput, parsed.error.issues[0]?.message ?? "渠道错误");
  const input = parsed.data;
  if (input.code === NO_CHANNEL_CODE.toUpperCase())
    throw new RpcError(Code.badInput, ChannelMsg.codeReserved);
  const db = ctx.db;
  return await tx(db, async () => {
    const user = await findUserByEmail(ctx, input.email);
    if (!user) throw new RpcError(Code.notFound, ChannelMsg.userNotFound);
    const current = await findChannelOf(db, user.id);
    const code = input.code || current?.code || (await unusedChannelCode(db));
    const holder = await findChannelByCode(db, code);
    if (holder && holder.user_id !== user.id) throw new RpcError(Code.badInput, ChannelMsg.codeTaken);
    const settings = await ctx.settings.all();
    const rate = input.rewardRate ?? current?.reward_rate ?? settings.channelRewardRate;
    const days = input.comsumerDuration ?? current?.consumer_duration ?? settings.channelConsumerDuration;
    await db.run(
      `INSERT INTO channels (user_id, name, code, reward_rate, consumer_duration, create_time, update_time)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
       ON CONFLICT (user_id) DO UPDATE SET name = ?2, code = ?3, reward_rate = ?4, consumer_duration = ?5, update_time = ?6`,
      user.id,
      input.name ?? current?.name ?? "",
      code,
      rate,
      Math.trunc(days),
      now,
    );
    if (current && current.code !== code) {
      await db.run(
        "UPDATE users SET channel_code = ? WHERE UPPER(channel_code) = ? AND id != ?",
        code,
        current.code,
        user.id,
      );
      await db.run("UPDATE orders SET from_channel = ? WHERE UPPER(from_channel) = ?", code, current.code);
    }
    await db.run("UPDATE users SET type = 'channel' WHERE id = ? AND type = 'normal'", user.id);
    const saved = toChannel((await findChannelOf(db, user.id)) as ChannelRow, user.email);
    await recordSave(db, "channel", user.email, current && toChannel(current, user.email), saved);
    return saved;
  });
}

/**
 * The invite link: only ever built from the configured site origin (a Host header could point it
 * anywhere). `?c=` in the real query is read by the server and by the SPA (web/startup.ts).
 */
export function inviteLink(origin: string | null, code: string): string | null {
  return origin ? `${origin}/?c=${encodeURIComponent(code)}#/register` : null;
}

/** /api/channel/channel_info for the signed-in user. */
export async function channelInfo(ctx: AppContext, userId: string): Promise<ChannelInfo> {
  const settings = await ctx.settings.all();
  const row = await findChannelOf(ctx.db, userId);
  return {
    chanelInfo: row
      ? {
          code: row.code,
          rewardRate: row.reward_rate,
          comsumerDuration: row.consumer_duration,
          name: row.name,
        }
      : null,
    min_charge_money: settings.min_charge_money,
    inviteRule: settings.inviteRule,
    openChannel: settings.openChannel,
    inviteLink: row ? inviteLink(siteOrigin(settings), row.code) : null,
  };
}

/** Customers who signed up with the user's channel code, newest first; the owner never counts. */
export async function invitedUsers(ctx: AppContext, userId: string): Promise<InvitedUsers> {
  const row = await findChannelOf(ctx.db, userId);
  if (!row) return { count: 0, list: [] };
  const where = "WHERE UPPER(channel_code) = ? AND id != ?";
  const count =
    (await ctx.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM users ${where}`, row.code, userId))?.n ?? 0;
  const list = (
    await ctx.db.all<{ email: string; create_time: number }>(
      `SELECT email, create_time FROM users ${where} ORDER BY create_time DESC, id DESC LIMIT ?`,
      row.code,
      userId,
      LIST_LIMIT,
    )
  ).map((user) => ({ createTime: user.create_time, email: maskEmail(user.email) }));
  return { count, list };
}

interface RewardRow {
  consumer_email: string;
  desc: string;
  user_spend_fen: number;
  reward_fen: number;
  left_fen: number;
  buy_time: number;
}

async function rewardTotals(db: Db, userId: string): Promise<{ count: number; fen: number }> {
  const totals = await db.get<{ n: number; fen: number | null }>(
    "SELECT COUNT(*) AS n, SUM(reward_fen) AS fen FROM channel_rewards WHERE channel_user_id = ?",
    userId,
  );
  return { count: totals?.n ?? 0, fen: totals?.fen ?? 0 };
}

/** The user's own rebates, newest first. */
export async function rewardList(ctx: AppContext, userId: string): Promise<RewardList> {
  const totals = await rewardTotals(ctx.db, userId);
  const list = (
    await ctx.db.all<RewardRow>(
      `SELECT consumer_email, "desc", user_spend_fen, reward_fen, left_fen, buy_time FROM channel_rewards
       WHERE channel_user_id = ? ORDER BY buy_time DESC, id DESC LIMIT ?`,
      userId,
      LIST_LIMIT,
    )
  ).map((reward) => ({
    comsumer_name: maskEmail(reward.consumer_email),
    desc: reward.desc,
    userSpend: fenToYuan(reward.user_spend_fen),
    reward: fenToYuan(reward.reward_fen),
    buyTime: reward.buy_time,
    left: fenToYuan(reward.left_fen),
  }));
  return { count: totals.count, totalReward: fenToYuan(totals.fen), list };
}

/** What the customer actually paid for the order: online payment plus wallet, not the coupon. */
export const userSpendFen = (order: OrderRow) => order.order_money_fen - order.coupon_discount_fen;

/**
 * The rebate of a just-paid order, inside markPaid's transaction: the inviting channel (not the
 * customer's own) earns its rate of what the customer paid when the programme is open and the
 * order is paid within comsumerDuration days of the customer's sign-up. Returns the fen credited.
 */
export async function payChannelRebate(ctx: AppContext, order: OrderRow, now: number): Promise<number> {
  const db = ctx.db;
  if (!db.inTransaction) throw new Error("a rebate is paid inside the crediting transaction");
  if (!(await ctx.settings.get("openChannel"))) return 0;
  const customer = await findUserById(ctx, order.user_id);
  if (!customer || customer.channel_code === "") return 0;
  const channel = await findChannelByCode(db, customer.channel_code);
  if (!channel || channel.user_id === customer.id) return 0;
  // forceReward (set by an admin): the customer's orders earn the channel its rebate for good.
  if (!customer.force_reward && now > customer.create_time + channel.consumer_duration * DAY_MS) return 0;
  const spendFen = userSpendFen(order);
  const reward = rewardFen(channel.reward_rate, spendFen);
  if (reward <= 0) return 0;
  const inserted = await db.run(
    `INSERT INTO channel_rewards (channel_user_id, consumer_user_id, consumer_email, order_id, "desc", user_spend_fen, reward_rate, reward_fen, left_fen, buy_time)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT (order_id) DO NOTHING`,
    channel.user_id,
    customer.id,
    customer.email,
    order.id,
    order.desc,
    spendFen,
    channel.reward_rate,
    reward,
    now,
  );
  if (inserted.changes !== 1) return 0;
  const left = await changeWallet(db, {
    userId: channel.user_id,
    type: "reward",
    changeFen: reward,
    desc: `邀请返利：${maskEmail(customer.email)} 购买 ${order.desc}`,
    orderId: order.id,
    now,
  });
  await db.run("UPDATE channel_rewards SET left_fen = ? WHERE order_id = ?", left, order.id);
  await db.run("UPDATE orders SET reward_fen = ? WHERE id = ?", reward, order.id);
  await tellRebate(ctx, channel.user_id, customer, order, reward);
  return reward;
}

async function tellRebate(
  ctx: AppContext,
  ownerId: string,
  customer: UserRow,
  order: OrderRow,
  reward: number,
) {
  const text = `返利到账：${maskEmail(customer.email)} 购买「${order.desc}」，您获得返利 ${formatYuan(reward)} 元，已存入钱包。`;
  await createNotice(ctx, { userId: ownerId, desc: text, href: "/#/channel" });
  await queueUserMessage(ctx, ownerId, text, `reward:${order.id}`);
}

/** `ferry channel show`: the channel with its invited count and rebate total (fen). */
export async function channelSummary(
  ctx: AppContext,
  email: string,
): Promise<{
  channel: Channel | null;
  invitedCount: number;
  rewardCount: number;
  rewardTotalFen: number;
  walletFen: number;
}> {
  const user = await findUserByEmail(ctx, email.trim().toLowerCase());
  if (!user) throw new RpcError(Code.notFound, ChannelMsg.userNotFound);
  const rewards = await rewardTotals(ctx.db, user.id);
  return {
    channel: await getUserChannel(ctx, user.id),
    invitedCount: (await invitedUsers(ctx, user.id)).count,
    rewardCount: rewards.count,
    rewardTotalFen: rewards.fen,
    walletFen: user.wallet_fen,
  };
}
