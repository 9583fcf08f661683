/**
 * The latency the /agents page shows (seed 000 §2 Nodes): the panel times a TCP connect to each
 * node's public proxy port every few minutes and stores it in `agents.speed` (ms; 0 = unreachable
 * or not measured yet, shown as 未测速). It is the panel's view, not the customer's, which is why the
 * page explains latency as a guide only.
 */
import type { AppContext } from "../../context.ts";
import { connectLatency } from "../../lib/tcp.ts";
import { startPeriodic } from "../errors/periodic.ts";
import { PORT_OFFSET } from "../line/schema.ts";

export const PROBE_INTERVAL_MS = 5 * 60_000;
/** Which port to time: the first line's port (Hysteria2 is UDP, so its node's control port). */
async function probeTarget(
  ctx: AppContext,
  agentId: string,
  ip: string,
  publicPort: number,
  ctrlPort: number,
) {
  const line = await ctx.db.get<{ protocol: keyof typeof PORT_OFFSET }>(
    "SELECT protocol FROM agent_lines WHERE agent_id = ? AND protocol <> 'h2' ORDER BY sort_index, create_time LIMIT 1",
    agentId,
  );
  return { host: ip, port: line ? publicPort + PORT_OFFSET[line.protocol] : ctrlPort };
}

/** Times every node once and stores the results; answers how many nodes answered. */
export async function probeAllNodes(ctx: AppContext): Promise<number> {
  const nodes = await ctx.db.all<{ id: string; ip: string; public_port: number; ctrl_port: number }>(
    "SELECT id, ip, public_port, ctrl_port FROM agents",
  );
  const results = await Promise.all(
    nodes.map(async (node) => {
      const target = await probeTarget(ctx, node.id, node.ip, node.public_port, node.ctrl_port);
      return { id: node.id, speed: await connectLatency(target.host, target.port) };
    }),
  );
  const store = "UPDATE agents SET speed = ? WHERE id = ?";
  for (const { id, speed } of results) await ctx.db.run(store, speed, id);
  return results.filter((result) => result.speed > 0).length;
}

/** Probes at start and then every PROBE_INTERVAL_MS; stop() waits for a running round. */
export async function startLatencyProbe(ctx: AppContext, intervalMs = PROBE_INTERVAL_MS) {
  return await startPeriodic(ctx, "latency probe", intervalMs, () => probeAllNodes(ctx));
}
