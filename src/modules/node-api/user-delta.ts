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
 * and a 53-bit hash of the entry's JSON; the node checks the sha1 of the list it rebuilt against
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
  ids: Float64Array;
  /** A 53-bit hash (wyhash) of each entry's JSON. */
  hashes: Float64Array;
}

function entryHashes(entries: string[]): Float64Array {
  const hashes = new Float64Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    hashes[i] = Number(BigInt.asUintN(53, Bun.hash.wyhash(entries[i] as string)));
  }
  return hashes;
}

/** The full list's body, its version (sha1 of the body) and per-entry JSON for the snapshot. */
export interface FullList {
  users: NodeUser[];
  entries: string[];
  body: string;
  version: string;
}

export function fullList(users: NodeUser[]): FullList {
  const entries = users.map((user) => JSON.stringify(user));
  // Byte for byte JSON.stringify({ users }): the ETag UniProxy backends already hold stays valid.
  const body = `{"users":[${entries.join(",")}]}`;
  return { users, entries, body, version: new Bun.CryptoHasher("sha1").update(body).digest("hex") };
}

/** The entries' hashes, computed once per list. */
const listHashes = new WeakMap<FullList, Float64Array>();
function hashesOf(list: FullList): Float64Array {
  let hashes = listHashes.get(list);
  if (!hashes) {
    hashes = entryHashes(list.entries);
    listHashes.set(list, hashes);
  }
  return hashes;
}

/** The list as a delta from `since`: entries added or changed, ids removed. */
export interface UserDelta {
  since: string;
  version: string;
  users: NodeUser[];
  removed: number[];
}

class SnapshotCache {
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

  keep(list: FullList) {
    if (this.take(list.version)) return;
    const count = list.users.length;
    if (count > this.budget) return;
    const ids = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const id = (list.users[i] as NodeUser).id;
      // The walk in deltaFrom needs ascending ids; a list not in that order gets no snapshot.
      if (i > 0 && id <= (ids[i - 1] as number)) return;
      ids[i] = id;
    }
    this.snapshots.set(list.version, { ids, hashes: hashesOf(list) });
    this.entries += count;
    for (const [version, snapshot] of this.snapshots) {
      if (this.entries <= this.budget || version === list.version) break;
      this.snapshots.delete(version);
      this.entries -= snapshot.ids.length;
    }
  }

  clear() {
    this.snapshots.clear();
    this.entries = 0;
  }

  get size() {
    return { snapshots: this.snapshots.size, entries: this.entries };
  }
}

const cache = new SnapshotCache(SNAPSHOT_ENTRY_BUDGET);

/** Keeps the list's snapshot so a node served it can later ask for a delta from it. */
export function keepSnapshot(list: FullList) {
  cache.keep(list);
}

/** Forgets every snapshot, as a freshly started replica holds none (tests). */
export function forgetSnapshots() {
  cache.clear();
}

export function snapshotCacheSize() {
  return cache.size;
}

/**
 * The delta from `since` to `list`, or null when the full list must be sent: this process does not
 * hold `since`, or the delta would be more than half the list.
 */
export function deltaFrom(since: string, list: FullList): UserDelta | null {
  const old = cache.take(since);
  if (!old) return null;
  const limit = Math.floor(list.users.length / 2);
  const hashes = hashesOf(list);
  const users: NodeUser[] = [];
  const removed: number[] = [];
  let i = 0;
  let j = 0;
  while (i < old.ids.length || j < list.users.length) {
    if (users.length + removed.length > limit) return null;
    const oldId = i < old.ids.length ? (old.ids[i] as number) : Number.POSITIVE_INFINITY;
    const user = list.users[j];
    const newId = user ? user.id : Number.POSITIVE_INFINITY;
    if (oldId < newId) {
      removed.push(oldId);
      i++;
    } else if (oldId > newId) {
      users.push(user as NodeUser);
      j++;
    } else {
      if (old.hashes[i] !== hashes[j]) users.push(user as NodeUser);
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
