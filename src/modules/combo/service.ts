/** The catalogue: combos for the shop (with the channel-code price filter) and their admin edits. */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { fenToYuan } from "../../lib/money.ts";
import { DEFAULT_DAILY_LIMIT } from "../../lib/traffic.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { recordDelete, recordSave } from "../audit/service.ts";
import type { Settings } from "../settings/schema.ts";
import { type Combo, type ComboInput, ComboMsg } from "./schema.ts";

export interface ComboRow {
  id: string;
  sort_order: number;
  name: string;
  price_fen: number;
  traffic: number;
  vip_duration: number;
  duration: number;
  daily_limit: number | null;
  addition_persend: number;
  device_num: number;
  speed: string;
  permissions_gain: string;
  permission_duration: number;
  permissions_desc: string;
  create_time: number;
}

export function toCombo(row: ComboRow): Combo {
  return {
    _id: row.id,
    orderID: row.sort_order,
    name: row.name,
    price: fenToYuan(row.price_fen),
    traffic: row.traffic,
    vipDuration: row.vip_duration,
    duration: row.duration,
    limit: row.daily_limit ?? DEFAULT_DAILY_LIMIT,
    additionPersend: row.addition_persend,
    deviceNum: row.device_num,
    speed: row.speed,
    permissionsGain: JSON.parse(row.permissions_gain) as string[],
    permissionDuration: row.permission_duration,
    permissionsDesc: row.permissions_desc,
  };
}

/**
 * Seed 000 §2: users who came with the configured channel code see only combos priced above the
 * threshold. Off while the code setting is empty.
 */
export function comboVisibleTo(row: ComboRow, channelCode: string, settings: Settings): boolean {
  const code = settings.channel_price_filter_code;
  if (!code || channelCode !== code) return true;
  return row.price_fen > Math.round(settings.channel_price_filter_min * 100);
}

async function allComboRows(ctx: AppContext): Promise<ComboRow[]> {
  return await ctx.db.all<ComboRow>("SELECT * FROM combos ORDER BY sort_order, price_fen, create_time");
}

/** `/api/shop/list`: every combo this visitor may buy. */
export async function listShopCombos(ctx: AppContext, channelCode: string): Promise<Combo[]> {
  const settings = await ctx.settings.all();
  return (await allComboRows(ctx)).filter((row) => comboVisibleTo(row, channelCode, settings)).map(toCombo);
}

export async function listAllCombos(ctx: AppContext): Promise<Combo[]> {
  return (await allComboRows(ctx)).map(toCombo);
}

export async function findComboForUser(
  ctx: AppContext,
  comboId: string,
  channelCode: string,
): Promise<ComboRow> {
  const row = await ctx.db.get<ComboRow>("SELECT * FROM combos WHERE id = ?", comboId);
  if (!row || !comboVisibleTo(row, channelCode, await ctx.settings.all()))
    throw new RpcError(Code.notFound, ComboMsg.notFound);
  return row;
}

async function checkPermissionsExist(ctx: AppContext, ids: string[]) {
  for (const id of ids) {
    const found = await ctx.db.get("SELECT 1 FROM permissions WHERE id = ?", id);
    if (!found) throw new RpcError(Code.badInput, `权限不存在: ${id}`);
  }
}

/** Creates (no `_id`) or replaces a combo. Orders already made keep what they were sold. */
export async function saveCombo(ctx: AppContext, input: ComboInput, now = Date.now()): Promise<Combo> {
  const gains = [...new Set(input.permissionsGain)];
  return await tx(ctx.db, async () => {
    await checkPermissionsExist(ctx, gains);
    const values = [
      input.orderID,
      input.name,
      input.price,
      input.traffic,
      input.vipDuration,
      input.limit ?? null,
      input.additionPersend,
      input.deviceNum,
      input.speed,
      JSON.stringify(gains),
      input.permissionDuration,
      input.permissionsDesc,
      input.duration,
    ] as const;
    let id = input._id;
    const before = id ? await ctx.db.get<ComboRow>("SELECT * FROM combos WHERE id = ?", id) : null;
    if (id) {
      const changed = (
        await ctx.db.run(
          `UPDATE combos SET sort_order = ?, name = ?, price_fen = ?, traffic = ?, vip_duration = ?, daily_limit = ?,
             addition_persend = ?, device_num = ?, speed = ?, permissions_gain = ?, permission_duration = ?, permissions_desc = ?,
             duration = ?
           WHERE id = ?`,
          ...values,
          id,
        )
      ).changes;
      if (!changed) throw new RpcError(Code.notFound, ComboMsg.notFound);
    } else {
      id = newId(now);
      await ctx.db.run(
        `INSERT INTO combos (sort_order, name, price_fen, traffic, vip_duration, daily_limit, addition_persend, device_num,
             speed, permissions_gain, permission_duration, permissions_desc, duration, id, create_time)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ...values,
        id,
        now,
      );
    }
    const saved = toCombo((await ctx.db.get<ComboRow>("SELECT * FROM combos WHERE id = ?", id)) as ComboRow);
    await recordSave(ctx.db, "combo", id, before && toCombo(before), saved);
    return saved;
  });
}

/** Deletes a combo; its orders keep their snapshot. */
export async function deleteCombo(ctx: AppContext, id: string): Promise<void> {
  await tx(ctx.db, async () => {
    const row = await ctx.db.get<ComboRow>("SELECT * FROM combos WHERE id = ?", id);
    if (!row) throw new RpcError(Code.notFound, ComboMsg.notFound);
    await ctx.db.run("DELETE FROM combos WHERE id = ?", id);
    const { name, price } = toCombo(row);
    await recordDelete(ctx.db, "combo", id, { name, price });
  });
}
