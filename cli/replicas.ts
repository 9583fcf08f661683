/**
 * `ferry replicas [--json]` (issue 28): each `ferry serve` on this database, as 运维日志's 集群状态
 * shows it, with the jobs whose leases it holds; a replica not seen for 30 s is 离线.
 */
import type { Command } from "commander";
import { JOB_NAMES } from "../src/cluster/leases.ts";
import { listReplicas } from "../src/cluster/replica.ts";
import type { ReplicaView } from "../src/cluster/schema.ts";
import { dataOption, type PrintTime, printJsonOr, textTable, timePrinter, withContext } from "./shared.ts";

/** `--json`: ISO 8601 times, every replica still listed (offline ones too). */
const replicaJson = (replica: ReplicaView) => ({
  id: replica.id,
  host: replica.host,
  port: replica.port,
  pid: replica.pid,
  version: replica.version,
  startedAt: new Date(replica.startedAt).toISOString(),
  lastSeen: new Date(replica.lastSeen).toISOString(),
  leases: replica.leases,
});

function replicasText(replicas: ReplicaView[], at: PrintTime): string {
  if (replicas.length === 0) return "no replicas: no ferry serve runs on this database";
  const lines = [
    textTable([
      ["id", "host", "port", "pid", "version", "started", "last seen", "status", "leases"],
      ...replicas.map((r) => [
        r.id,
        r.host,
        String(r.port),
        String(r.pid),
        r.version,
        at(r.startedAt),
        at(r.lastSeen),
        r.offline ? "离线" : "在线",
        r.leases.join(", ") || "-",
      ]),
    ]),
  ];
  const held = new Set(replicas.flatMap((r) => r.leases));
  const free = JOB_NAMES.filter((job) => !held.has(job));
  if (free.length > 0) lines.push(`not held now (the next replica to try takes them): ${free.join(", ")}`);
  return lines.join("\n");
}

export function registerReplicaCommands(program: Command) {
  program
    .command("replicas")
    .description("the ferry serve processes on this database and the background jobs each holds")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      await withContext(options.data, async (ctx) => {
        const replicas = await listReplicas(ctx.db);
        const at = await timePrinter(ctx);
        printJsonOr(options.json ?? false, replicas.map(replicaJson), () => replicasText(replicas, at));
      });
    });
}
