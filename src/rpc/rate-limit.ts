/**
 * Fixed-window counters in the database (`rate_counters`, issue 28), so that a limit holds across
 * every replica behind a load balancer instead of counting separately in each. One row per bucket:
 * its count and when its window ends; a try after the end starts the window again at 1, so a
 * bucket never has more than one row. Rows whose window ended are deleted by the retention job.
 *
 * Inside a transaction the counters are written in it (through the same `Db`, so SQLite's one
 * writer never waits for itself): when it rolls back, its tries roll back with it. A try that
 * must count although the request fails is therefore taken outside the transaction that fails
 * (login, coupon tries, push codes), or the transaction does not fail (a refused bind code).
 */
import { type Db, onRollback, tx } from "../db/db.ts";

export interface RateRule {
  /** Shown in logs and used to separate buckets. */
  name: string;
  max: number;
  windowMs: number;
}

/** One counter: a rule and whose tries it counts (an address, an account, a browser). */
export interface RateBucket {
  rule: RateRule;
  key: string;
}

/** Tries taken by `reserve`, until they turn out not to count. */
export interface Reservation {
  /**
   * Gives the tries back, once; a window that ended meanwhile owes nothing. After the transaction
   * the tries were taken in rolled back, there is nothing to give back (the rollback did).
   */
  release(): Promise<void>;
}

/** A try counted in a bucket: which row, and the window it counted in. */
interface Taken {
  bucket: string;
  resetTime: number;
}

/**
 * Counts one try in a bucket unless it is full: a window that ended starts again at 1. One
 * statement, so concurrent tries (on any replica) each see the others'. No row back: full.
 */
const TAKE_SQL = `INSERT INTO rate_counters (bucket, count, reset_time) VALUES (?1, 1, ?2)
  ON CONFLICT (bucket) DO UPDATE SET
    count = CASE WHEN rate_counters.reset_time <= ?3 THEN 1 ELSE rate_counters.count + 1 END,
    reset_time = CASE WHEN rate_counters.reset_time <= ?3 THEN ?2 ELSE rate_counters.reset_time END
  WHERE rate_counters.reset_time <= ?3 OR rate_counters.count < ?4
  RETURNING reset_time`;

/** Gives one try back, only in the window it was taken in. */
const GIVE_BACK_SQL =
  "UPDATE rate_counters SET count = count - 1 WHERE bucket = ? AND reset_time = ? AND count > 0";

const bucketId = ({ rule, key }: RateBucket) => `${rule.name}\u0000${key}`;

export class RateLimiter {
  constructor(
    private readonly db: Db,
    /** Multiplies every limit; tests that are not about rate limits raise it. */
    private readonly scale = 1,
  ) {}

  /** Counts one try; false when the bucket is already full for this window. */
  async hit(rule: RateRule, key: string, now = Date.now()): Promise<boolean> {
    return (await this.take({ rule, key }, now)) !== null;
  }

  /**
   * Takes one try from every bucket, or none when any of them is full (null). Counting before the
   * outcome is known keeps concurrent tries inside the limit; `release` gives the tries back when
   * they turn out not to count (a correct password is not a failure). Several buckets are taken
   * in one transaction (the caller's, if any).
   */
  async reserve(buckets: readonly RateBucket[], now = Date.now()): Promise<Reservation | null> {
    // Sorted, so that two reservations sharing buckets lock them in the same order.
    const ordered = [...buckets].sort((a, b) => (bucketId(a) < bucketId(b) ? -1 : 1));
    const taken =
      ordered.length === 1
        ? await this.takeOne(ordered[0] as RateBucket, now)
        : await this.takeAll(ordered, now);
    return taken && this.reservation(taken);
  }

  /**
   * Runs `fn` on one try from every bucket, kept only when `fn` returns: a refused attempt (it
   * throws) costs nothing. When a bucket is full, throws `full()` instead and `fn` does not run.
   */
  async succeeding<T>(
    buckets: readonly RateBucket[],
    full: () => Error,
    fn: () => Promise<T>,
    now = Date.now(),
  ): Promise<T> {
    const slot = await this.reserve(buckets, now);
    if (!slot) throw full();
    try {
      return await fn();
    } catch (error) {
      await slot.release();
      throw error;
    }
  }

  private async take(bucket: RateBucket, now: number): Promise<Taken | null> {
    const id = bucketId(bucket);
    const row = await this.db.get<{ reset_time: number }>(
      TAKE_SQL,
      id,
      now + bucket.rule.windowMs,
      now,
      // A whole number, as the count is: a scaled limit of 2.5 lets 3 tries through.
      Math.ceil(bucket.rule.max * this.scale),
    );
    return row && { bucket: id, resetTime: row.reset_time };
  }

  private async takeOne(bucket: RateBucket, now: number): Promise<Taken[] | null> {
    const taken = await this.take(bucket, now);
    return taken && [taken];
  }

  /** Every bucket in one transaction; a full one gives back those taken before it. */
  private async takeAll(buckets: readonly RateBucket[], now: number): Promise<Taken[] | null> {
    return await tx(this.db, async () => {
      const taken: Taken[] = [];
      for (const bucket of buckets) {
        const one = await this.take(bucket, now);
        if (!one) {
          for (const done of taken) await this.giveBack(done);
          return null;
        }
        taken.push(one);
      }
      return taken;
    });
  }

  private async giveBack({ bucket, resetTime }: Taken): Promise<void> {
    await this.db.run(GIVE_BACK_SQL, bucket, resetTime);
  }

  private reservation(taken: Taken[]): Reservation {
    let spent = false;
    // Taken inside a transaction that rolls back: the rollback already gave the tries back.
    onRollback(this.db, () => {
      spent = true;
    });
    return {
      release: async () => {
        if (spent) return;
        spent = true;
        for (const one of taken) await this.giveBack(one);
      },
    };
  }
}
