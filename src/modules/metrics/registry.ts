/**
 * A small in-memory Prometheus registry (text exposition format 0.0.4). Counters and histograms
 * live in memory and start from zero when the process starts, as Prometheus expects; the hot path
 * (one envelope call) only bumps numbers in structures made on the first call of each path.
 */

/** Latency buckets in seconds: most calls answer in well under a millisecond. */
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** A label value escaped as the exposition format requires (backslash, quote, newline). */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function labelText(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`);
  return pairs.length > 0 ? `{${pairs.join(",")}}` : "";
}

/** A number as Prometheus writes it (integers without exponent, +Inf). */
export function sampleValue(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return Number.isInteger(value) ? value.toFixed(0) : String(value);
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** One metric family: `# HELP`, `# TYPE` and its samples (an empty family still says its HELP and TYPE). */
export function familyText(name: string, type: "counter" | "gauge", help: string, samples: Sample[]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const sample of samples) lines.push(`${name}${labelText(sample.labels)} ${sampleValue(sample.value)}`);
  return `${lines.join("\n")}\n`;
}

/** A counter with labels, keyed by its label values in a fixed order. */
export class LabeledCounter {
  private readonly values = new Map<string, { labels: string[]; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  inc(labels: readonly string[], by = 1): void {
    const key = labels.join("\u0000");
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels: [...labels], value: by });
  }

  get(labels: readonly string[]): number {
    return this.values.get(labels.join("\u0000"))?.value ?? 0;
  }

  text(): string {
    const samples = [...this.values.values()].map((entry) => ({
      labels: Object.fromEntries(this.labelNames.map((name, i) => [name, entry.labels[i] ?? ""])),
      value: entry.value,
    }));
    return familyText(this.name, "counter", this.help, samples);
  }
}

/** One envelope call's answers by code and its latency histogram (cumulative only when written). */
export interface CallStats {
  codes: Map<number, number>;
  /** Observations per bucket (not cumulative); the last slot is above the largest bucket. */
  buckets: number[];
  sum: number;
  count: number;
}

export class CallMetrics {
  private readonly calls = new Map<string, CallStats>();

  observe(path: string, code: number, seconds: number): void {
    let stats = this.calls.get(path);
    if (!stats) {
      stats = { codes: new Map(), buckets: new Array(LATENCY_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.calls.set(path, stats);
    }
    stats.codes.set(code, (stats.codes.get(code) ?? 0) + 1);
    let slot = 0;
    while (slot < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[slot] as number)) slot++;
    stats.buckets[slot] = (stats.buckets[slot] ?? 0) + 1;
    stats.sum += seconds;
    stats.count++;
  }

  stats(path: string): CallStats | undefined {
    return this.calls.get(path);
  }

  text(): string {
    const requests: Sample[] = [];
    const histogram = [
      "# HELP ferry_request_duration_seconds Time to answer an envelope call, by call.",
      "# TYPE ferry_request_duration_seconds histogram",
    ];
    for (const [call, stats] of this.calls) {
      for (const [code, value] of stats.codes) requests.push({ labels: { call, code: String(code) }, value });
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, i) => {
        cumulative += stats.buckets[i] ?? 0;
        histogram.push(
          `ferry_request_duration_seconds_bucket${labelText({ call, le: String(bound) })} ${cumulative}`,
        );
      });
      histogram.push(
        `ferry_request_duration_seconds_bucket${labelText({ call, le: "+Inf" })} ${stats.count}`,
      );
      histogram.push(`ferry_request_duration_seconds_sum${labelText({ call })} ${sampleValue(stats.sum)}`);
      histogram.push(`ferry_request_duration_seconds_count${labelText({ call })} ${stats.count}`);
    }
    const counts = familyText(
      "ferry_requests_total",
      "counter",
      "Envelope calls answered, by call (path) and envelope code (0 = ok).",
      requests,
    );
    return `${counts}${histogram.join("\n")}\n`;
  }
}
