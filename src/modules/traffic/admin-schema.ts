/** `/api/admin/traffic_spend/traffic_records` (seed 001 §2.11, §7, §9): shared by the server and the SPA. */
import { z } from "zod";
import { TRAFFIC_RECORD_TYPES, type TrafficRecord } from "./schema.ts";

/** Business days shown by default (seed 001 §9). */
export const ALL_TRAFFIC_RECORD_DAYS = 2;
/** The answer stops at this many rows, newest first (`truncated` says so). */
export const ALL_TRAFFIC_RECORD_LIMIT = 5000;

export const allTrafficRecordsInput = z.object({
  type: z.enum(["all", ...TRAFFIC_RECORD_TYPES], "流量记录类型错误").default("all"),
  day_num: z
    .number("天数须为数字")
    .int("天数须为整数")
    .min(1, "天数至少为1")
    .max(90, "天数最多为90")
    .default(ALL_TRAFFIC_RECORD_DAYS),
});
export type AllTrafficRecordsInput = z.infer<typeof allTrafficRecordsInput>;

/** A traffic record of any user (seed 001 §3 Traffic record). */
export interface AdminTrafficRecord extends TrafficRecord {
  _id: number;
  uid: string;
  email: string;
}

export interface AllTrafficRecords {
  records: AdminTrafficRecord[];
  /** True when more rows matched than ALL_TRAFFIC_RECORD_LIMIT. */
  truncated: boolean;
}
