/** Fixed-window counters kept in memory; enough for one process (the product runs as one executable). */
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

interface Counter {
  count: number;
  resetAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Counter>();
  private sweepAt = 0;

  constructor(private readonly scale = 1) {}

  /** Counts one hit; false when the bucket is already full for this window. */
  hit(rule: RateRule, key: string, now = Date.now()): boolean {
    const counter = this.counter(rule, key, now);
    counter.count += 1;
    return counter.count <= rule.max * this.scale;
  }

  /**
   * Takes one try from every bucket, or none when any of them is full (null). Counting before the
   * outcome is known keeps concurrent tries inside the limit; `release` gives the tries back when
   * they turn out not to count (a correct password is not a failure).
   */
  reserve(buckets: readonly RateBucket[], now = Date.now()): { release(): void } | null {
    const counters = buckets.map(({ rule, key }) => ({ rule, counter: this.counter(rule, key, now) }));
    if (counters.some(({ rule, counter }) => counter.count >= rule.max * this.scale)) return null;
    for (const { counter } of counters) counter.count += 1;
    return {
      release: () => {
        // A counter whose window ended meanwhile was replaced; the new window owes nothing.
        for (const { counter } of counters) if (counter.count > 0) counter.count -= 1;
      },
    };
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
    // Reserved before the first await: concurrent attempts see each other's tries.
    const slot = this.reserve(buckets, now);
    if (!slot) throw full();
    try {
      return await fn();
    } catch (error) {
      slot.release();
      throw error;
    }
  }

  private counter(rule: RateRule, key: string, now: number): Counter {
    this.sweep(now);
    const id = `${rule.name}\u0000${key}`;
    const existing = this.buckets.get(id);
    if (existing && existing.resetAt > now) return existing;
    const counter = { count: 0, resetAt: now + rule.windowMs };
    this.buckets.set(id, counter);
    return counter;
  }

  private sweep(now: number) {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 60_000;
    for (const [id, bucket] of this.buckets) if (bucket.resetAt <= now) this.buckets.delete(id);
  }
}
