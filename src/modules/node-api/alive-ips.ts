/** How long a reported online IP counts for device limits (Xboard: 300 s). */
const ALIVE_TTL_MS = 300_000;

/**
 * Online IPs per user across nodes, for device limits (node-protocol.md §1.6). Kept in memory:
 * they expire within minutes and a panel restart simply waits for the next reports. Bounded:
 * a node's report replaces its IPs for each user it names, and names only users it was given
 * (keepAlive), at most ALIVE_MAX_IPS each, so at most (users × nodes × ALIVE_MAX_IPS) entries.
 */
export class AliveIps {
  /** userNo → "agentId|ip" → expiry */
  private readonly seen = new Map<number, Map<string, number>>();

  /** Replaces what this node reported before for each user it names. */
  report(agentId: string, users: Iterable<[userNo: number, ips: string[]]>, now = Date.now()) {
    for (const [userNo, ips] of users) {
      const entries = this.seen.get(userNo) ?? new Map<string, number>();
      for (const [name, expiry] of entries) {
        if (expiry <= now || name.startsWith(`${agentId}|`)) entries.delete(name);
      }
      for (const ip of ips) entries.set(`${agentId}|${stripPort(ip)}`, now + ALIVE_TTL_MS);
      if (entries.size > 0) this.seen.set(userNo, entries);
      else this.seen.delete(userNo);
    }
  }

  /** Distinct IPs seen per user within the TTL, across all nodes. */
  counts(now = Date.now()): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [userNo, entries] of this.seen) {
      const ips = new Set<string>();
      for (const [name, expiry] of entries) {
        if (expiry <= now) entries.delete(name);
        else ips.add(name.slice(name.indexOf("|") + 1));
      }
      if (ips.size > 0) counts[userNo] = ips.size;
      else this.seen.delete(userNo);
    }
    return counts;
  }
}

/** "1.2.3.4:5678" → "1.2.3.4", "[::1]:80" → "::1" (Xboard strips ports and brackets). */
function stripPort(ip: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(ip);
  if (bracketed?.[1]) return bracketed[1];
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(ip);
  return (v4?.[1] ?? ip).slice(0, 64);
}
