import { z } from "zod";
import { optionalId, recordId } from "../../lib/id-schema.ts";
import { yuanInput } from "../../lib/money.ts";

/** A combo (product) on the wire, seed 000 §3 / seed 001 §3. Price in yuan, traffic in bytes. */
export interface Combo {
  _id: string;
  orderID: number;
  name: string;
  price: number;
  traffic: number;
  vipDuration: number;
  /** Days the traffic it sells stays usable after payment; 0 = never expires (seed 001 §3 duration). */
  duration: number;
  /** Daily quota of a time package in bytes (DESIGN §7; 50 GB when not set). */
  limit: number;
  additionPersend: number;
  deviceNum: number;
  speed: string;
  permissionsGain: string[];
  permissionDuration: number;
  permissionsDesc: string;
}

export const comboKind = (combo: Pick<Combo, "traffic" | "vipDuration">): "traffic" | "time" =>
  combo.vipDuration > 0 ? "time" : "traffic";

/**
 * What buying a combo credits (DESIGN §7): permanent traffic × (1 + bonus%), and for a time
 * package a daily quota raised by the same bonus (docs/decisions.md). The shop shows these figures
 * and create_order records them, so both come from here.
 */
export function comboCredit(combo: Pick<Combo, "traffic" | "limit" | "additionPersend" | "vipDuration">): {
  traffic: number;
  dailyLimit: number | null;
} {
  const bonus = 1 + combo.additionPersend / 100;
  return {
    traffic: Math.round(combo.traffic * bonus),
    dailyLimit: combo.vipDuration > 0 ? Math.round(combo.limit * bonus) : null,
  };
}

/** `/api/admin/combo/update_combo`: without `_id` it creates a combo. Traffic arrives in bytes. */
export const comboInput = z.object({
  _id: optionalId,
  orderID: z.number().int().min(0).max(1_000_000).default(0),
  name: z.string().trim().min(1, "名称不能为空").max(100),
  price: yuanInput(),
  traffic: z
    .number()
    .int()
    .min(0)
    .max(2 ** 53 - 1),
  vipDuration: z.number().int().min(0).max(36_500),
  duration: z.number().int("流量有效期须为整数天").min(0, "流量有效期不能为负").max(36_500).default(0),
  limit: z
    .number()
    .int()
    .min(0)
    .max(2 ** 53 - 1)
    .optional(),
  additionPersend: z.number().min(0).max(1000).default(0),
  deviceNum: z.number().int().min(0).max(10_000).default(0),
  speed: z.string().max(100).default(""),
  permissionsGain: z.array(recordId()).max(50).default([]),
  permissionDuration: z.number().int().min(0).max(36_500).default(0),
  permissionsDesc: z.string().max(500).default(""),
});
export type ComboInput = z.output<typeof comboInput>;

/** New-combo form defaults of seed 001 §9: 1 GB, 1 day, price 0.01, speed 150Mbps; permissions 360 days. */
export const NEW_COMBO_DEFAULTS = {
  name: "",
  price: 0.01,
  trafficG: 1,
  vipDuration: 1,
  /** Traffic that never expires, as seed 000 sells traffic packages. */
  duration: 0,
  additionPersend: 0,
  deviceNum: 0,
  speed: "150Mbps",
  permissionsGain: [] as string[],
  permissionDuration: 360,
  permissionsDesc: "",
  orderID: 0,
};

export const ComboMsg = {
  saveFailed: "商品配置失败",
  deleted: "删除成功",
  deleteFailed: "商品删除失败",
  notFound: "商品不存在",
} as const;
