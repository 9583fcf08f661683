/**
 * The core's per-user counters (`user>>><tag>|<userNo>>>>traffic>>>uplink|downlink`, node-protocol.md
 * §3) folded into push bodies: one `{userNo: [upload, download]}` per inbound tag, since the panel
 * charges each inbound at its own line scale.
 */
import { isUserNo } from "../modules/node-api/report.ts";
import type { Stat } from "./grpc.ts";

/** userNo → [upload, download] in bytes: the push body. */
export type Usage = Record<string, [number, number]>;

/** The counter name prefix every per-user counter starts with. */
export const USER_STATS_PATTERN = "user>>>";

export function usageByInbound(stats: Stat[]): Map<string, Usage> {
  const byInbound = new Map<string, Usage>();
  for (const { name, value } of stats) {
    if (value <= 0) continue;
    const [kind, email, traffic, direction] = name.split(">>>");
    if (kind !== "user" || traffic !== "traffic" || !email) continue;
    const bar = email.lastIndexOf("|");
    const tag = email.slice(0, bar);
    const userNo = email.slice(bar + 1);
    // The panel refuses a whole report with an id that is not the integer's own digits (issue 11).
    if (bar <= 0 || !isUserNo(userNo)) continue;
    if (direction !== "uplink" && direction !== "downlink") continue;
    let usage = byInbound.get(tag);
    if (!usage) {
      usage = {};
      byInbound.set(tag, usage);
    }
    const pair = usage[userNo] ?? [0, 0];
    pair[direction === "uplink" ? 0 : 1] += value;
    usage[userNo] = pair;
  }
  return byInbound;
}
