/**
 * The lucky draw (issue 14 §4): the prize table the back office edits, and the customer's draw,
 * which spends permanent traffic, picks a prize by weight and pays it in one transaction.
 */
import type { AppContext } from "../../context.ts";
import { rowOrderSql, tx } from "../../db/db.ts";
import { businessDay, DAY_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { extendedTimePackage } from "../../payments/credit.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { recordDelete, recordSave } from "../audit/service.ts";
import { couponInput } from "../coupon/schema.ts";
import { insertCoupon, unusedRandomCode } from "../coupon/service.ts";
import { downloadPath } from "../file/schema.ts";
import { requireOwnUpload } from "../file/service.ts";
import { changeTraffic } from "../ledger/service.ts";
import { createNotice } from "../notice/service.ts";
import { queueUserMessage } from "../telegram/outbox.ts";
import { permanentTraffic } from "../trial/service.ts";
import { boardLayout, pickWeighted, seatFor } from "./pick.ts";
import {
  type BoardPrize,
  type DrawBoard,
  type DrawResult,
  MY_DRAWS_LIMIT,
  type MyDraw,
  type Prize,
  type PrizeInput,
  type PrizeList,
  PrizeMsg,
  prizeGainText,
  prizeGivesSomething,
  prizeStats,
} from "./schema.ts";

export interface PrizeRow {
  id: string;
  name: string;
  gain_traffic: number;
  gain_vip_days: number;
  weight: number;
  desc: string;
  has_discount_coupon: number;
  discount_value: number;
  discount_duration: number;
  photo: string;
  create_time: number;
}

/** Bytes to G without float noise (1.5 G stays 1.5). */
const bytesToG = (bytes: number) => Number((bytes / GB).toFixed(6));

export function toPrize(row: PrizeRow): Prize {
  return {
    _id: row.id,
    name: row.name,
    gainTraffic: bytesToG(row.gain_traffic),
    gainVipTime: row.gain_vip_days,
    weight: row.weight,
    desc: row.desc,
    hasDiscountCoupon: row.has_discount_coupon === 1,
    discountValue: row.discount_value,
    discountDuration: row.discount_duration,
    photoUrl: row.photo === "" ? "" : downloadPath(row.photo),
    createTime: row.create_time,
  };
}

function toBoardPrize(row: PrizeRow): BoardPrize {
  const { weight: _weight, createTime: _createTime, ...shown } = toPrize(row);
  return shown;
}

async function prizeRows(ctx: AppContext): Promise<PrizeRow[]> {
  return await ctx.db.all<PrizeRow>(`SELECT * FROM prizes ORDER BY create_time, ${rowOrderSql(ctx.db)}`);
}

async function findPrize(ctx: AppContext, id: string): Promise<PrizeRow | null> {
  return await ctx.db.get<PrizeRow>("SELECT * FROM prizes WHERE id = ?", id);
}

/** The prizes in the order they were added, with the seed 001 §2.15 statistics. */
export async function listPrizes(ctx: AppContext): Promise<PrizeList> {
  const prizes = (await prizeRows(ctx)).map(toPrize);
  return { prizes, stats: prizeStats(prizes) };
}

/**
 * Creates (no `_id`) or replaces a prize. A new image must be an upload of the editor; the image
 * a prize already has is kept whoever uploaded it (another operator may have).
 */
export async function savePrize(
  ctx: AppContext,
  editorId: string,
  input: PrizeInput,
  now = Date.now(),
): Promise<Prize> {
  return await tx(ctx.db, async () => {
    const existing = input._id ? await findPrize(ctx, input._id) : null;
    if (input._id && !existing) throw new RpcError(Code.notFound, PrizeMsg.notFound);
    if (input.photoUrl !== existing?.photo) await requireOwnUpload(ctx, editorId, input.photoUrl);
    const values = [
      input.name,
      Math.round(input.gainTraffic * GB),
      input.gainVipTime,
      input.weight,
      input.desc,
      input.hasDiscountCoupon ? 1 : 0,
      input.discountValue,
      input.discountDuration,
      input.photoUrl,
    ] as const;
    let id = input._id;
    if (id) {
      await ctx.db.run(
        `UPDATE prizes SET name = ?, gain_traffic = ?, gain_vip_days = ?, weight = ?, "desc" = ?,
             has_discount_coupon = ?, discount_value = ?, discount_duration = ?, photo = ?
           WHERE id = ?`,
        ...values,
        id,
      );
    } else {
      id = newId(now);
      await ctx.db.run(
        `INSERT INTO prizes (name, gain_traffic, gain_vip_days, weight, "desc", has_discount_coupon, discount_value,
             discount_duration, photo, id, create_time)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ...values,
        id,
        now,
      );
    }
    const saved = toPrize((await findPrize(ctx, id)) as PrizeRow);
    await recordSave(ctx.db, "prize", id, existing && toPrize(existing), saved);
    return saved;
  });
}

/** Deletes a prize; draws already made keep its name and what they paid. */
export async function deletePrize(ctx: AppContext, id: string): Promise<void> {
  await tx(ctx.db, async () => {
    const removed = await findPrize(ctx, id);
    if (!removed) throw new RpcError(Code.notFound, PrizeMsg.notFound);
    await ctx.db.run("DELETE FROM prizes WHERE id = ?", id);
    await recordDelete(ctx.db, "prize", id, { name: removed.name, weight: removed.weight });
  });
}

/** Prizes that can be won (weight above 0), in table order: the board shows only these. */
async function drawablePrizes(ctx: AppContext): Promise<PrizeRow[]> {
  return (await prizeRows(ctx)).filter((row) => row.weight > 0);
}

/** Bytes of permanent traffic one draw costs (setting prizeBaseCost, in G). */
const drawCost = async (ctx: AppContext) => Math.round((await ctx.settings.get("prizeBaseCost")) * GB);

/** `/api/prize/board`: seats in order (prizes repeated to fill gameSeat), the cost, the balance. */
export async function drawBoard(ctx: AppContext, userId: string, now = Date.now()): Promise<DrawBoard> {
  const prizes = await drawablePrizes(ctx);
  const layout = boardLayout(prizes.length, await ctx.settings.get("gameSeat"));
  return {
    seats: layout.map((index) => toBoardPrize(prizes[index] as PrizeRow)),
    cost: await ctx.settings.get("prizeBaseCost"),
    permanentTraffic: await permanentTraffic(ctx.db, userId, now),
  };
}

/** The prize's discount coupon, given to the winner alone: one use, valid discountDuration days. */
async function giveDiscountCoupon(
  ctx: AppContext,
  userId: string,
  prize: PrizeRow,
  now: number,
): Promise<{ id: string; code: string }> {
  const fields = couponInput.parse({
    name: `抽奖奖品：${prize.name}`,
    type: "discount",
    discount: prize.discount_value,
    useNumPerUser: 1,
    NumberOfAuthorizations: 1,
    expireTime: now + prize.discount_duration * DAY_MS,
  });
  const code = await unusedRandomCode(ctx.db);
  return { id: await insertCoupon(ctx, fields, code, now, userId), code };
}

/** Pays a prize: its traffic and time package in one prize_reward record, then its coupon. */
async function payPrize(
  ctx: AppContext,
  userId: string,
  prize: PrizeRow,
  now: number,
): Promise<{ couponId: string | null; code: string }> {
  if (prize.gain_traffic > 0 || prize.gain_vip_days > 0) {
    const user = await ctx.db.get<{ vip_expire_time: number; daily_limit: number | null }>(
      "SELECT vip_expire_time, daily_limit FROM users WHERE id = ?",
      userId,
    );
    if (!user) throw new Error(`no user ${userId}`);
    await changeTraffic(ctx.db, {
      userId,
      type: "prize_reward",
      desc: `抽奖奖励：${prize.name}`,
      traffic: prize.gain_traffic,
      ...(prize.gain_vip_days > 0 ? extendedTimePackage(user, prize.gain_vip_days, null, now) : {}),
      now,
      timeZone: await ctx.settings.get("timezone"),
    });
  }
  if (prize.has_discount_coupon !== 1) return { couponId: null, code: "" };
  const coupon = await giveDiscountCoupon(ctx, userId, prize, now);
  return { couponId: coupon.id, code: coupon.code };
}

/** Tells the winner (bell and bot) what the prize gave; a prize that gives nothing tells nothing. */
async function tellPrizeWon(
  ctx: AppContext,
  userId: string,
  drawId: string,
  prize: Prize,
  couponCode: string,
): Promise<void> {
  if (!prizeGivesSomething(prize)) return;
  const gains = prizeGainText(prize);
  const coupon = couponCode ? `，优惠券码 ${couponCode}（${prize.discountDuration} 天内下单可用）` : "";
  const text = `恭喜您在幸运抽奖中抽中「${prize.name}」：${gains}${coupon}`;
  await createNotice(ctx, { userId, desc: text, href: "/#/lucky_draw" });
  await queueUserMessage(ctx, userId, text, `prize-won:${drawId}`);
}

/**
 * One draw, all or nothing: the cost comes off permanent traffic (prize_spend), a prize is picked
 * by weight with a cryptographic source, paid (prize_reward, days, coupon), recorded and told.
 */
export async function drawPrize(ctx: AppContext, userId: string, now = Date.now()): Promise<DrawResult> {
  return await tx(ctx.db, async () => {
    // An agency's customers hold traffic the agency allocated; it is not theirs to gamble (as with transfers).
    const user = await ctx.db.get<{ is_agency: number }>("SELECT is_agency FROM users WHERE id = ?", userId);
    if (user?.is_agency) throw new RpcError(Code.forbidden, PrizeMsg.agencyRefused);
    const prizes = await drawablePrizes(ctx);
    const picked = pickWeighted(prizes.map((row) => row.weight));
    if (picked === null) throw new RpcError(Code.badInput, PrizeMsg.noPrizes);
    const cost = await drawCost(ctx);
    // A free draw would hand out traffic without end: a cost of 0 closes the draw instead.
    if (cost <= 0) throw new RpcError(Code.badInput, PrizeMsg.closed);
    // The same refusal as a transfer short of permanent traffic (1038): trial traffic never pays.
    if ((await permanentTraffic(ctx.db, userId, now)) < cost)
      throw new RpcError(Code.pushNotEnoughTraffic, PrizeMsg.notEnoughTraffic);
    const timeZone = await ctx.settings.get("timezone");
    await changeTraffic(ctx.db, {
      userId,
      type: "prize_spend",
      desc: "幸运抽奖",
      traffic: -cost,
      now,
      timeZone,
    });
    const row = prizes[picked] as PrizeRow;
    const seat = seatFor(boardLayout(prizes.length, await ctx.settings.get("gameSeat")), picked);
    const paid = await payPrize(ctx, userId, row, now);
    const drawId = newId(now);
    await ctx.db.run(
      `INSERT INTO prize_draws (id, user_id, prize_id, prize_name, cost, gain_traffic, gain_vip_days, coupon_id, seat,
           day, create_time)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      drawId,
      userId,
      row.id,
      row.name,
      cost,
      row.gain_traffic,
      row.gain_vip_days,
      paid.couponId,
      seat,
      businessDay(now, timeZone),
      now,
    );
    const prize = toBoardPrize(row);
    await tellPrizeWon(ctx, userId, drawId, toPrize(row), paid.code);
    return {
      drawId,
      prize,
      seat,
      couponCode: paid.code,
      permanentTraffic: await permanentTraffic(ctx.db, userId, now),
    };
  });
}

interface MyDrawRow {
  id: string;
  prize_name: string;
  cost: number;
  gain_traffic: number;
  gain_vip_days: number;
  code: string | null;
  expire_time: number | null;
  create_time: number;
}

/** The customer's most recent draws, newest first, with the coupon each gave. */
export async function myDraws(ctx: AppContext, userId: string, limit = MY_DRAWS_LIMIT): Promise<MyDraw[]> {
  return (
    await ctx.db.all<MyDrawRow>(
      `SELECT d.id, d.prize_name, d.cost, d.gain_traffic, d.gain_vip_days, c.code, c.expire_time, d.create_time
       FROM prize_draws d LEFT JOIN coupons c ON c.id = d.coupon_id
       WHERE d.user_id = ? ORDER BY d.create_time DESC, ${rowOrderSql(ctx.db, "d")} DESC LIMIT ?`,
      userId,
      limit,
    )
  ).map((row) => ({
    _id: row.id,
    prizeName: row.prize_name,
    cost: row.cost,
    gainTraffic: row.gain_traffic,
    gainVipTime: row.gain_vip_days,
    couponCode: row.code ?? "",
    couponExpireTime: row.expire_time ?? 0,
    createTime: row.create_time,
  }));
}
