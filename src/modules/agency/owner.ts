/** Who owns an agency: its own file so that userinfo can ask without importing the agency service. */
import type { AppContext } from "../../context.ts";
import type { Db } from "../../db/db.ts";
import { ReadCache } from "../../db/read-cache.ts";

export interface AgencyRow {
  user_id: string;
  name: string;
  create_time: number;
}

export async function agencyOf(db: Db, userId: string): Promise<AgencyRow | null> {
  return await db.get<AgencyRow>("SELECT * FROM agencies WHERE user_id = ?", userId);
}

const ownerCaches = new WeakMap<Db, ReadCache<AgencyRow>>();

/** Whether the user owns an agency. userinfo asks on every call: cached until the database changes. */
export async function isAgencyOwner(ctx: AppContext, userId: string): Promise<boolean> {
  let cache = ownerCaches.get(ctx.db);
  if (!cache) {
    cache = new ReadCache(ctx.db);
    ownerCaches.set(ctx.db, cache);
  }
  return (await cache.get(userId, async () => await agencyOf(ctx.db, userId))) !== null;
}
