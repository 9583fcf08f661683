import { z } from "zod";

/** Traffic record types (seed 000 §4; seed 001 §9 lists the same but tiyan_expire). */
export const TRAFFIC_RECORD_TYPES = [
  "spend",
  "buy",
  "coupon",
  "sign_use",
  "prize_spend",
  "prize_reward",
  "push_spend",
  "push_receive",
  "tiyan_expire",
  "agency_spend",
  "agency_allocate",
  "admin_adjust",
  "buy_expire",
] as const;
export type TrafficRecordType = (typeof TRAFFIC_RECORD_TYPES)[number];

/** How the portal, the back office and the CLI name each type. */
export const TRAFFIC_TYPE_TEXT: Record<TrafficRecordType, string> = {
  spend: "流量消耗",
  buy: "购买套餐",
  coupon: "兑换券",
  sign_use: "签到",
  prize_spend: "抽奖消耗",
  prize_reward: "抽奖奖励",
  push_spend: "流量转赠",
  push_receive: "接收转赠",
  tiyan_expire: "体验到期",
  agency_spend: "代理消耗",
  agency_allocate: "代理分配",
  admin_adjust: "管理员调整",
  buy_expire: "流量包到期",
};

/** The type filter: one type, or "all". */
export type TrafficFilter = TrafficRecordType | "all";
const filterOf = (types: readonly TrafficRecordType[]): readonly { key: TrafficFilter; label: string }[] => [
  { key: "all", label: "全部" },
  ...types.map((type) => ({ key: type, label: TRAFFIC_TYPE_TEXT[type] })),
];
/**
 * The customer's filter is the seed's list (seed 000 §4 "Traffic filter types"); an admin
 * adjustment (issue 16) and the expiry of a package with a duration (issue 26) are listed under 全部
 * with their own labels.
 */
const BEYOND_SEED_TYPES: readonly TrafficRecordType[] = ["admin_adjust", "buy_expire"];
export const TRAFFIC_FILTERS = filterOf(
  TRAFFIC_RECORD_TYPES.filter((type) => !BEYOND_SEED_TYPES.includes(type)),
);
/** The back office's filter (全部流量记录): every type. */
export const ALL_TRAFFIC_FILTERS = filterOf(TRAFFIC_RECORD_TYPES);

/** Customers see the records of this many business days, today included (seed 000 §9). */
export const TRAFFIC_RECORD_DAYS = 10;

/** `/api/traffic/my_traffic_records`: an optional type filter; absent or "all" means every type. */
export const trafficRecordsInput = z.object({
  type: z.enum(["all", ...TRAFFIC_RECORD_TYPES], "流量记录类型错误").optional(),
});

/**
 * A traffic record on the wire (seed 000 §3). Bytes and ms. Node traffic keeps one `spend` record
 * per day, updated in place: trafficChange is minus the permanent traffic used that day and
 * exemptionTraffic what the time package covered; allTraffic / allSpend are the balances after it.
 */
export interface TrafficRecord {
  type: TrafficRecordType;
  desc: string;
  trafficChange: number;
  exemptionTraffic: number;
  allTraffic: number;
  allSpend: number;
  updateTime: number;
  /** The business day, YYYY-MM-DD. */
  day: string;
}
