/**
 * node.down and node.up (issue 30 §3). A node is down once it has been silent for MISSED_INTERVALS
 * update intervals, the rule the back office's 异常 uses (node-record/service.ts agentStatus). Time
 * passing is no event, so the webhook sender scans for it (scanSilentNodes): the scan's
 * transaction sets `agents.down_since` and queues node.down, once per outage. The node's next call
 * to the panel (touchNode) clears it and queues node.up in the same transaction.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { MISSED_INTERVALS } from "../node-record/service.ts";
import { queueWebhookEvent } from "./outbox.ts";

interface NodeFacts {
  id: string;
  name: string;
  ip: string;
  last_seen_time: number;
}

const nodeData = (node: NodeFacts) => ({
  nodeId: node.id,
  name: node.name,
  ip: node.ip,
  lastSeenTime: node.last_seen_time,
});

/** Marks the nodes silent since before `now` − MISSED_INTERVALS × updateV2rayDuration; answers how many. */
export async function scanSilentNodes(ctx: AppContext, now = Date.now()): Promise<number> {
  const updateSeconds = await ctx.settings.get("updateV2rayDuration");
  const silentBefore = now - MISSED_INTERVALS * updateSeconds * 1000;
  const silent = await ctx.db.all<NodeFacts>(
    "SELECT id, name, ip, last_seen_time FROM agents WHERE down_since = 0 AND last_seen_time > 0 AND last_seen_time < ?",
    silentBefore,
  );
  let marked = 0;
  for (const node of silent) {
    await tx(ctx.db, async () => {
      const changed = (
        await ctx.db.run(
          "UPDATE agents SET down_since = ? WHERE id = ? AND down_since = 0 AND last_seen_time > 0 AND last_seen_time < ?",
          now,
          node.id,
          silentBefore,
        )
      ).changes;
      if (changed !== 1) return;
      marked += 1;
      await queueWebhookEvent(ctx, "node.down", { ...nodeData(node), downSince: now }, now);
    });
  }
  return marked;
}

/** Inside the call's write of last_seen_time: a node marked down is up again (node.up). */
export async function markNodeHeard(ctx: AppContext, node: NodeFacts & { down_since: number }, now: number) {
  const changed = (
    await ctx.db.run("UPDATE agents SET down_since = 0 WHERE id = ? AND down_since > 0", node.id)
  ).changes;
  if (changed !== 1) return;
  await queueWebhookEvent(
    ctx,
    "node.up",
    { ...nodeData(node), downSince: node.down_since, upTime: now },
    now,
  );
}
