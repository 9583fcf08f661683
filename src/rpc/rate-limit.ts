/** Fixed-window counters kept in memory; enough for one process (the product runs as one executable). */
export interface RateRule {
  /** Shown in logs and used to separate buckets. */
  name: string;
  max: number;
  windowMs: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { count: number; resetAt: number }>();
  private sweepAt = 0;

  constructor(private readonly scale = 1) {}

  /** Counts one hit; false when the bucket is already full for this window. */
  hit(rule: RateRule, key: string, now = Date.now()): boolean {
    this.sweep(now);
    const id = `${rule.name}\u0000${key}`;
    const bucket = this.buckets.get(id);
    if (!bucket || bucket.resetAt <= now) {
      this.buckets.set(id, { count: 1, resetAt: now + rule.windowMs });
      return true;
    }
    bucket.count += 1;
    return bucket.count <= rule.max * this.scale;
  }

  private sweep(now: number) {
    if (now < this.sweepAt) return;
    this.sweepAt = now + 60_000;
    for (const [id, bucket] of this.buckets) if (bucket.resetAt <= now) this.buckets.delete(id);
  }
}
