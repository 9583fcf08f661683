/**
 * Delta sync of a node's user list (issue 31 §5). The full list is still computed on every pull
 * (eligibility changes without any write: a time package runs out, today's quota is spent), but a
 * node that says which version it holds (`since`, the sha1 ETag of the full body it was last
 * served) gets only what changed since: the added or changed entries and the removed ids.
 *
 * A version names content, not time: it is the sha1 of the full body, so a snapshot kept under it
 * is right for any node and any replica that holds that version. Snapshots live in this process
 * only, shared by every node with the same list, least recently used evicted first, within
 * SNAPSHOT_ENTRY_BUDGET entries in all. A replica (or a restarted panel) that does not hold the
 * snapshot of `since` answers the full list, never a guessed delta; so does one whose delta would
 * be larger than half the list (the node fell too far behind). A snapshot keeps per entry its id
 * and a 53-bit hash of its other fields; the node checks the sha1 of the list it rebuilt against
 * the version, so even a hash collision ends in a full pull, not a wrong list.
 */

/** One entry of a node's user list (the `user` answer). */
export interface NodeUser {
  id: number;
  uuid: string;
  /** Mbps: vip_traffic_thred_rate_limit while the user spends today's time-package quota; null = unlimited. */
  speed_limit: number | null;
  device_limit: null;
}

/** Most entries the snapshots may hold in all: 16 bytes each, so at most ~16 MB. */
export const SNAPSHOT_ENTRY_BUDGET = 1_000_000;

/** What a node may send as `since`: a sha1 in hex. Anything else is treated as unknown. */
const VERSION = /^[0-9a-f]{40}$/;

export function isListVersion(value: string): boolean {
  return VERSION.test(value);
}

interface Snapshot {
  /** The entries' ids, ascending. */
  ids: Float64Array;
  /** A 53-bit hash (wyhash) of each entry's fields but its id (entryKey). */
  hashes: Float64Array;
}

/** Every field of an entry but its id: a change in any of them must change the hash. */
function entryKey(user: NodeUser): string {
  return `${user.uuid}\u0000${user.speed_limit}\u0000${user.device_limit}`;
}

/** The full list's body and its version (the sha1 of the body). */
export interface FullList {
  users: NodeUser[];
  body: string;
  version: string;
}

export function fullList(users: NodeUser[]): FullList {
  // Exactly the body and ETag UniProxy backends were always served.
  const body = JSON.stringify({ users });
  return { users, body, version: new Bun.CryptoHasher("sha1").update(body).digest("hex") };
}

/** The list's snapshot; null when its ids are not ascending (then no delta is ever answered). */
function snapshotOf(users: NodeUser[]): Snapshot | null {
  const ids = new Float64Array(users.length);
  const hashes = new Float64Array(users.length);
  for (let i = 0; i < users.length; i++) {
    const user = users[i] as NodeUser;
    if (i > 0 && user.id <= (ids[i - 1] as number)) return null;
    ids[i] = user.id;
    hashes[i] = Number(BigInt.asUintN(53, Bun.hash.wyhash(entryKey(user))));
  }
  return { ids, hashes };
}

/** The list as a delta from `since`: entries added or changed, ids removed. */
export interface UserDelta {
  since: string;
  version: string;
  users: NodeUser[];
  removed: number[];
}

/** Snapshots by version, least recently used evicted first beyond `budget` entries in all. */
export class SnapshotCache {
  private readonly snapshots = new Map<string, Snapshot>();
  private entries = 0;

  constructor(private readonly budget: number) {}

  /** The snapshot of `version`, marked as just used; undefined when this process does not hold it. */
  take(version: string): Snapshot | undefined {
    const snapshot = this.snapshots.get(version);
    if (snapshot) {
      this.snapshots.delete(version);
      this.snapshots.set(version, snapshot);
    }
    return snapshot;
  }

  /** The list's snapshot, made (once per version) and kept when it fits the budget. */
  keep(list: FullList): Snapshot | null {
    const held = this.take(list.version);
    if (held) return held;
    const snapshot = snapshotOf(list.users);
    if (!snapshot || snapshot.ids.length > this.budget) return snapshot;
    this.snapshots.set(list.version, snapshot);
    this.entries += snapshot.ids.length;
    for (const [version, old] of this.snapshots) {
      if (this.entries <= this.budget || version === list.version) break;
      this.snapshots.delete(version);
      this.entries -= old.ids.length;
    }
    return snapshot;
  }

  clear() {
    this.snapshots.clear();
    this.entries = 0;
  }

  /** How many snapshots and entries are held. */
  get held(): { snapshots: number; entries: number } {
    return { snapshots: this.snapshots.size, entries: this.entries };
  }
}

const cache = new SnapshotCache(SNAPSHOT_ENTRY_BUDGET);

/** Forgets every snapshot, as a freshly started replica holds none (tests). */
export function forgetSnapshots() {
  cache.clear();
}

/**
 * Keeps the list's snapshot (so a node served it can later ask for a delta from it) and answers
 * the delta from `since` to it, or null when the full list must be sent: no `since`, this process
 * does not hold it, or the delta would be more than half the list.
 */
export function keepAndDiff(list: FullList, since: string): UserDelta | null {
  const old = since && since !== list.version && isListVersion(since) ? cache.take(since) : undefined;
  const current = cache.keep(list);
  if (!old || !current) return null;
  const limit = Math.floor(list.users.length / 2);
  const users: NodeUser[] = [];
  const removed: number[] = [];
  let i = 0;
  let j = 0;
  while (i < old.ids.length || j < current.ids.length) {
    if (users.length + removed.length > limit) return null;
    const oldId = i < old.ids.length ? (old.ids[i] as number) : Number.POSITIVE_INFINITY;
    const newId = j < current.ids.length ? (current.ids[j] as number) : Number.POSITIVE_INFINITY;
    if (oldId < newId) {
      removed.push(oldId);
      i++;
    } else if (oldId > newId) {
      users.push(list.users[j] as NodeUser);
      j++;
    } else {
      if (old.hashes[i] !== current.hashes[j]) users.push(list.users[j] as NodeUser);
      i++;
      j++;
    }
  }
  if (users.length + removed.length > limit) return null;
  return { since, version: list.version, users, removed };
}

/**
 * The node's side: `held` (ascending ids) with `delta` applied, ascending again; null when the
 * result is not the version the panel named (the node then pulls the full list).
 */
export function applyUserDelta(held: NodeUser[], delta: UserDelta): NodeUser[] | null {
  const byId = new Map(held.map((user) => [user.id, user]));
  for (const id of delta.removed) byId.delete(id);
  for (const user of delta.users) byId.set(user.id, user);
  const users = [...byId.values()].sort((a, b) => a.id - b.id);
  return fullList(users).version === delta.version ? users : null;
}
