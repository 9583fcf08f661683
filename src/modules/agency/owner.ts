/** Who owns an agency: its own file so that userinfo can ask without importing the agency service. */
import type { AppContext } from "../../context.ts";
import type { Db } from "../../db/db.ts";
import { ReadCache } from "../../db/read-cache.ts";

export interface AgencyRow {
  user_id: string;
  name: string;
  create_time: number;
}

export function agencyOf(db: Db, userId: string): AgencyRow | null {
  return db.query<AgencyRow, [string]>("SELECT * FROM agencies WHERE user_id = ?").get(userId);
}

const ownerCaches = new WeakMap<Db, ReadCache<AgencyRow>>();

/** Whether the user owns an agency. userinfo asks on every call: cached until the database changes. */
export function isAgencyOwner(ctx: AppContext, userId: string): boolean {
  let cache = ownerCaches.get(ctx.db);
  if (!cache) {
    cache = new ReadCache(ctx.db);
    ownerCaches.set(ctx.db, cache);
  }
  return cache.get(userId, () => agencyOf(ctx.db, userId)) !== null;
}
