import { z } from "zod";
import { optionalId } from "../../lib/id-schema.ts";

/** An entry (relay front) as the back office sees it (seed 001 §3 Entry). */
export interface Entry {
  _id: string;
  index: number;
  name: string;
  /** The default address, used when ipList is empty. */
  ip: string;
  ipList: string[];
  desc: string;
  /** Availability: lines through a hidden entry are not served. */
  visible: boolean;
}

const address = z
  .string()
  .trim()
  .max(253)
  .regex(/^[0-9A-Za-z.:[\]-]+$/, "IP 或域名格式错误");

/** `/api/admin/entrys/update`: without `_id` it creates an entry. */
export const entryInput = z
  .object({
    _id: optionalId,
    index: z.number().int().min(0).max(1_000_000).default(0),
    name: z.string().trim().min(1, "名称不能为空").max(100),
    ip: address.or(z.literal("")).default(""),
    ipList: z.array(address).max(100, "IP 列表最多 100 个").default([]),
    desc: z.string().max(500).default(""),
    visible: z.boolean().default(true),
  })
  .refine((entry) => entry.ip !== "" || entry.ipList.length > 0, {
    message: "默认 IP 与 IP 列表不能都为空",
    path: ["ip"],
  });
export type EntryInput = z.output<typeof entryInput>;

/** The addresses a relayed line is published on: the list, or the default IP alone. */
export const entryAddresses = (entry: Pick<Entry, "ip" | "ipList">): string[] =>
  entry.ipList.length > 0 ? entry.ipList : entry.ip ? [entry.ip] : [];
