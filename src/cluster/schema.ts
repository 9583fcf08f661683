import { z } from "zod";

/** One replica as `/api/admin/replicas` and `ferry replicas` show it (times: epoch ms, the database's clock). */
export const replicaView = z.object({
  id: z.string(),
  host: z.string(),
  port: z.number().int(),
  pid: z.number().int(),
  version: z.string(),
  startedAt: z.number().int(),
  lastSeen: z.number().int(),
  /** Not seen for more than 30 s: killed, cut off, or stopped without its clean stop. */
  offline: z.boolean(),
  /** The jobs whose leases it holds now. */
  leases: z.array(z.string()),
});

export type ReplicaView = z.infer<typeof replicaView>;
