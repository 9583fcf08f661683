/**
 * Traffic that expires (issue 14 §2, migration 010 trial_grants): a trial voucher's, or, since issue
 * 26, a package bought from a combo with a `duration` (migration 015, the grant names its order). A
 * grant is part of balances.traffic while its `remaining` is above 0, so balances.traffic =
 * Σ traffic_change still holds: node charging takes it after today's time-package quota and before
 * permanent traffic (charge.ts), and at expiry what is left of it goes with a tiyan_expire record (a
 * bought package's with a buy_expire record).
 */
import type { AppContext } from "../../context.ts";
import { type Db, tx } from "../../db/db.ts";
import { businessDateTime, HOUR_MS } from "../../lib/time.ts";
import { formatGB } from "../../lib/traffic.ts";
import { changeTraffic } from "../ledger/service.ts";
import { createNotice } from "../notice/service.ts";
import { queueUserMessage } from "../telegram/outbox.ts";

export interface TrialBalance {
  /** Bytes of balances.traffic that are trial traffic still running (remaining of unexpired grants). */
  trialTraffic: number;
  /** The soonest expiry among those grants, ms; 0 when there is none. */
  trialExpireTime: number;
}

/** How long before its expiry a customer is told about trial traffic still left. */
export const TRIAL_WARN_MS = 24 * HOUR_MS;
export const TRIAL_EXPIRE_DESC = "体验流量到期";
export const PACKAGE_EXPIRE_DESC = "流量包到期";

type HeldGrant = { remaining: number; expire_time: number };

/** The user's grants still holding traffic, due ones included. */
async function heldGrants(db: Db, userId: string): Promise<HeldGrant[]> {
  return await db.all<HeldGrant>(
    "SELECT remaining, expire_time FROM trial_grants WHERE user_id = ? AND remaining > 0",
    userId,
  );
}

/** A grant past its expiry no longer counts, swept or not. */
function runningBalance(grants: readonly HeldGrant[], now: number): TrialBalance {
  let trialTraffic = 0;
  let trialExpireTime = 0;
  for (const grant of grants) {
    if (grant.expire_time <= now) continue;
    trialTraffic += grant.remaining;
    if (trialExpireTime === 0 || grant.expire_time < trialExpireTime) trialExpireTime = grant.expire_time;
  }
  return { trialTraffic, trialExpireTime };
}

/** What of a user's traffic is trial traffic, at `now`. */
export async function trialBalance(db: Db, userId: string, now: number): Promise<TrialBalance> {
  return runningBalance(await heldGrants(db, userId), now);
}

/** trialBalance for userinfo, which asks on every call: the grants are cached until the database changes. */
export async function cachedTrialBalance(
  ctx: AppContext,
  userId: string,
  now: number,
): Promise<TrialBalance> {
  return runningBalance(
    (await ctx.cache.trialGrants.get(userId, async () => await heldGrants(ctx.db, userId))) ?? [],
    now,
  );
}

/** Σ remaining of every grant not yet swept, due ones included: all of it is in balances.traffic. */
async function unsweptTrial(db: Db, userId: string): Promise<number> {
  return (await heldGrants(db, userId)).reduce((sum, grant) => sum + grant.remaining, 0);
}

/**
 * Permanent traffic: balances.traffic minus running trial traffic. Only this may be transferred or
 * spent on a draw. Call inside the transaction that spends it. A grant past its expiry that the
 * sweeper has not reached yet is subtracted too: it is in balances.traffic, but it is not permanent.
 */
export async function permanentTraffic(db: Db, userId: string, _now: number): Promise<number> {
  const row = await db.get<{ traffic: number }>("SELECT traffic FROM balances WHERE user_id = ?", userId);
  return Math.max(0, (row?.traffic ?? 0) - (await unsweptTrial(db, userId)));
}

export interface NewTrialGrant {
  userId: string;
  /** The trial voucher's use the traffic came with … */
  couponUseId?: string;
  /** … or the order of a combo with a duration that bought it. */
  orderId?: string;
  amount: number;
  expireTime: number;
  now: number;
}

/** Marks `amount` of the traffic just credited as expiring at `expireTime`. Inside the crediting tx. */
export async function addTrialGrant(db: Db, grant: NewTrialGrant): Promise<void> {
  await db.run(
    `INSERT INTO trial_grants (user_id, coupon_use_id, order_id, amount, remaining, expire_time, create_time)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    grant.userId,
    grant.couponUseId ?? "",
    grant.orderId ?? null,
    grant.amount,
    grant.amount,
    grant.expireTime,
    grant.now,
  );
}

interface DueGrant {
  id: number;
  user_id: string;
  remaining: number;
  /** The order that bought it; null for a trial voucher's grant. */
  order_id: string | null;
}

/**
 * Removes what is left of every grant due at `now` (expire_time ≤ now) with a tiyan_expire record
 * and sets its remaining to 0. A grant used up needs nothing (remaining is already 0, no record).
 * The removal is clamped to balances.traffic: traffic can only have gone below the trial remaining by
 * a change outside the trial accounting (an operator's adjustment), and what is gone is gone —
 * balances.traffic never goes negative. Returns how many grants were swept.
 */
export async function expireDueTrials(ctx: AppContext, now: number): Promise<number> {
  const db = ctx.db;
  return await tx(db, async () => {
    const due = await db.all<DueGrant>(
      "SELECT id, user_id, remaining, order_id FROM trial_grants WHERE remaining > 0 AND expire_time <= ? ORDER BY expire_time, id",
      now,
    );
    if (due.length === 0) return 0;
    const timeZone = await ctx.settings.get("timezone");
    const balance = "SELECT traffic FROM balances WHERE user_id = ?";
    const close = "UPDATE trial_grants SET remaining = 0, expired_time = ? WHERE id = ?";
    for (const grant of due) {
      const removed = Math.min(
        grant.remaining,
        Math.max(0, (await db.get<{ traffic: number }>(balance, grant.user_id))?.traffic ?? 0),
      );
      if (removed > 0) {
        await changeTraffic(db, {
          userId: grant.user_id,
          ...(grant.order_id
            ? { type: "buy_expire", desc: PACKAGE_EXPIRE_DESC, orderId: grant.order_id }
            : { type: "tiyan_expire", desc: TRIAL_EXPIRE_DESC }),
          traffic: -removed,
          now,
          timeZone,
        });
      }
      await db.run(close, now, grant.id);
    }
    return due.length;
  });
}

interface ExpiringGrant extends DueGrant {
  expire_time: number;
}

/** The text of the "about to expire" notice and bot message; `bought`: a package's, not a voucher's. */
export function trialExpiringText(
  remaining: number,
  expireTime: number,
  timeZone: string,
  bought = false,
): string {
  const what = bought
    ? `您购买的流量包还有 ${formatGB(remaining)} G`
    : `您有 ${formatGB(remaining)} G 体验流量`;
  return `${what}${bought ? " " : ""}将于 ${businessDateTime(expireTime, timeZone)} 到期，到期后未用完的部分将被清除`;
}

/**
 * Tells each customer once (warned_time) about trial traffic left that expires within 24 hours:
 * a bell notice and a bot message. Returns how many grants were announced.
 */
export async function warnExpiringTrials(ctx: AppContext, now: number): Promise<number> {
  const db = ctx.db;
  return await tx(db, async () => {
    const expiring = await db.all<ExpiringGrant>(
      `SELECT id, user_id, remaining, expire_time, order_id FROM trial_grants
         WHERE remaining > 0 AND expire_time > ?1 AND expire_time <= ?2 AND warned_time IS NULL
         ORDER BY expire_time, id`,
      now,
      now + TRIAL_WARN_MS,
    );
    const timeZone = await ctx.settings.get("timezone");
    const mark = "UPDATE trial_grants SET warned_time = ? WHERE id = ? AND warned_time IS NULL";
    for (const grant of expiring) {
      if ((await db.run(mark, now, grant.id)).changes === 0) continue;
      const text = trialExpiringText(grant.remaining, grant.expire_time, timeZone, grant.order_id !== null);
      await createNotice(ctx, { userId: grant.user_id, desc: text, href: "/#/" });
      await queueUserMessage(ctx, grant.user_id, text, `trial-expiring:${grant.id}`);
    }
    return expiring.length;
  });
}

/** What the server's sweeper does each round: expire what is due, then warn about what soon will be. */
export async function sweepTrials(ctx: AppContext, now = Date.now()): Promise<void> {
  await expireDueTrials(ctx, now);
  await warnExpiringTrials(ctx, now);
}
