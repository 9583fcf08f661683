/**
 * A small HTTP/1.1 load generator, run as its own process so it never shares the measured
 * server's event loop. It keeps N keep-alive connections (raw TCP, Bun.connect), each sending the
 * same request again as soon as the previous response is complete (no pipelining), and counts the
 * responses completed inside the measuring window [start + warmup, start + warmup + duration].
 *
 * `requests` (optional) varies the request: the n-th request sent uses requests[n % length] (its
 * path, headers and body; the method stays). `mode: "fetch"` (bench:field) runs the load on fetch()
 * instead, which reconnects after a server restart: `connections` workers in a closed loop, or with
 * `ratePerSecond` an open loop that starts requests on schedule whether or not earlier ones
 * answered (latency counted from the scheduled time). `okBodyIncludes`: a 200 whose body lacks it
 * counts in `notOk` (an envelope answer with an error code). `keepLatencies`: every latency is
 * returned, so several processes' percentiles can be merged.
 *
 * Input: one JSON argument (LoadSpec). Output: one JSON line (LoadResult) on stdout.
 * Loopback only: refuses any host other than 127.0.0.1 / ::1 / localhost.
 */

export interface LoadSpec {
  host: string;
  port: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Epoch ms at which every load process starts sending (so several processes line up). */
  startAt: number;
  warmupMs: number;
  durationMs: number;
  requests?: RequestVariant[];
  mode?: "raw" | "fetch";
  ratePerSecond?: number;
  okBodyIncludes?: string;
  keepLatencies?: boolean;
}

export interface RequestVariant {
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  /** Responses completed inside the window. */
  requests: number;
  seconds: number;
  rps: number;
  /** Status code → count, inside the window. */
  statuses: Record<string, number>;
  /** Responses whose body length differed from the first response's (inside the window). */
  otherLengths: number;
  errors: number;
  /** Latency percentiles (ms) of the responses inside the window. */
  p50: number;
  p99: number;
  /** The first response's body, so the caller can check it is what it thinks it measures. */
  sample: string;
  /** 200s without `okBodyIncludes` in their body. */
  notOk?: number;
  /** Every latency inside the window (ms), with `keepLatencies`. */
  latencies?: number[];
}

const CRLF2 = Buffer.from("\r\n\r\n");

function parseHead(head: string): { status: number; length: number } {
  const status = Number(head.slice(9, 12));
  const match = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (!match?.[1]) throw new Error(`response without content-length:\n${head}`);
  return { status, length: Number(match[1]) };
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  if (!["127.0.0.1", "::1", "localhost"].includes(spec.host)) throw new Error("loopback only");
  const variants = spec.requests?.length ? spec.requests : [{ path: spec.path }];
  const requestBuffers = variants.map((variant) => {
    const headers = { host: `${spec.host}:${spec.port}`, ...spec.headers, ...variant.headers };
    const headerLines = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    const body = variant.body ?? spec.body;
    return Buffer.from(
      `${spec.method} ${variant.path} HTTP/1.1\r\n${headerLines}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  let sent = 0;
  let notOk = 0;
  const okMarker = spec.okBodyIncludes ? Buffer.from(spec.okBodyIncludes) : null;

  const windowStart = spec.startAt + spec.warmupMs;
  const windowEnd = windowStart + spec.durationMs;
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let requests = 0;
  let errors = 0;
  let otherLengths = 0;
  let sample: string | null = null;
  let sampleLength = -1;
  let running = true;

  await Bun.sleep(Math.max(0, spec.startAt - Date.now()));

  const connections = Array.from({ length: spec.connections }, () =>
    (async () => {
      let pending = Buffer.alloc(0);
      let head: { status: number; length: number; bodyStart: number } | null = null;
      let sentAt = 0;
      let done: (() => void) | null = null;
      const finished = new Promise<void>((resolve) => {
        done = resolve;
      });
      const send = (socket: { write(data: Uint8Array): number }) => {
        if (!running || Date.now() >= windowEnd) {
          running = false;
          done?.();
          return;
        }
        sentAt = performance.now();
        socket.write(requestBuffers[sent++ % requestBuffers.length] as Buffer);
      };
      try {
        const socket = await Bun.connect({
          hostname: spec.host,
          port: spec.port,
          socket: {
            data(socket, chunk) {
              pending = pending.length ? Buffer.concat([pending, chunk]) : Buffer.from(chunk);
              for (;;) {
                if (!head) {
                  const end = pending.indexOf(CRLF2);
                  if (end < 0) return;
                  const parsed = parseHead(pending.subarray(0, end).toString("latin1"));
                  head = { ...parsed, bodyStart: end + 4 };
                }
                const total = head.bodyStart + head.length;
                if (pending.length < total) return;
                const now = Date.now();
                if (sample === null) {
                  sample = pending.subarray(head.bodyStart, total).toString("utf8");
                  sampleLength = head.length;
                }
                if (now >= windowStart && now < windowEnd) {
                  requests += 1;
                  statuses[head.status] = (statuses[head.status] ?? 0) + 1;
                  if (head.length !== sampleLength) otherLengths += 1;
                  if (
                    okMarker &&
                    head.status === 200 &&
                    pending.subarray(head.bodyStart, total).indexOf(okMarker) < 0
                  )
                    notOk += 1;
                  latencies.push(performance.now() - sentAt);
                }
                pending = pending.subarray(total);
                head = null;
                send(socket);
              }
            },
            error() {
              errors += 1;
              done?.();
            },
            close() {
              done?.();
            },
          },
        });
        send(socket);
        await finished;
        socket.end();
      } catch {
        errors += 1;
      }
    })(),
  );
  // Bounded: whatever happens, stop a little after the window closes.
  await Promise.race([Promise.all(connections), Bun.sleep(windowEnd - Date.now() + 5000)]);
  running = false;

  return summarize(spec, {
    requests,
    statuses,
    otherLengths,
    errors,
    notOk,
    latencies,
    sample: sample ?? "",
  });
}

/** The q-quantile of ascending `sorted` (0 when empty). */
export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function summarize(
  spec: LoadSpec,
  counted: Omit<LoadResult, "seconds" | "rps" | "p50" | "p99" | "latencies"> & { latencies: number[] },
): LoadResult {
  const { latencies, ...rest } = counted;
  latencies.sort((a, b) => a - b);
  const seconds = spec.durationMs / 1000;
  return {
    ...rest,
    seconds,
    rps: rest.requests / seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    ...(spec.keepLatencies ? { latencies: latencies.map((ms) => Math.round(ms * 100) / 100) } : {}),
  };
}

/**
 * The fetch() load (`mode: "fetch"`): a closed loop of `connections` workers, or with
 * `ratePerSecond` an open loop. A refused or cut connection counts in `errors` and the next
 * request connects again, so a server restart shows as errors, then answers again.
 */
async function runFetch(spec: LoadSpec): Promise<LoadResult> {
  if (!["127.0.0.1", "::1", "localhost"].includes(spec.host)) throw new Error("loopback only");
  const variants = spec.requests?.length ? spec.requests : [{ path: spec.path }];
  const origin = `http://${spec.host}:${spec.port}`;
  const windowStart = spec.startAt + spec.warmupMs;
  const windowEnd = windowStart + spec.durationMs;
  const counted = {
    requests: 0,
    statuses: {} as Record<string, number>,
    otherLengths: 0,
    errors: 0,
    notOk: 0,
    latencies: [] as number[],
    sample: null as string | null,
  };
  let sent = 0;
  /** Whether the request reached a server (a closed-loop worker waits a little after one that did not, as a client would) */
  const one = async (scheduledAt: number): Promise<boolean> => {
    const variant = variants[sent++ % variants.length] as RequestVariant;
    let status = 0;
    let text = "";
    try {
      const response = await fetch(origin + variant.path, {
        method: spec.method,
        headers: { ...spec.headers, ...variant.headers },
        body: spec.method === "GET" ? undefined : (variant.body ?? spec.body),
        signal: AbortSignal.timeout(10_000),
      });
      status = response.status;
      text = await response.text();
    } catch {
      status = 0;
    }
    const now = Date.now();
    if (now < windowStart || now >= windowEnd + 10_000) return status !== 0;
    if (status === 0) {
      counted.errors += 1;
      return false;
    }
    counted.sample ??= text;
    counted.requests += 1;
    counted.statuses[status] = (counted.statuses[status] ?? 0) + 1;
    if (spec.okBodyIncludes && status === 200 && !text.includes(spec.okBodyIncludes)) counted.notOk += 1;
    counted.latencies.push(performance.now() - scheduledAt);
    return true;
  };

  await Bun.sleep(Math.max(0, spec.startAt - Date.now()));
  const inFlight = new Set<Promise<void>>();
  if (spec.ratePerSecond) {
    const interval = 1000 / spec.ratePerSecond;
    const origin0 = performance.now();
    for (let n = 0; Date.now() < windowEnd; n += 1) {
      const due = origin0 + n * interval;
      const wait = due - performance.now();
      if (wait > 1) await Bun.sleep(wait);
      const request: Promise<void> = one(due)
        .then(() => {})
        .finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
  } else {
    const worker = async () => {
      while (Date.now() < windowEnd) if (!(await one(performance.now()))) await Bun.sleep(50);
    };
    for (let i = 0; i < spec.connections; i += 1) inFlight.add(worker());
  }
  await Promise.race([Promise.all(inFlight), Bun.sleep(windowEnd - Date.now() + 15_000)]);
  return summarize(spec, { ...counted, sample: counted.sample ?? "" });
}

if (import.meta.main) {
  const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec;
  const result = spec.mode === "fetch" ? await runFetch(spec) : await run(spec);
  console.log(JSON.stringify(result));
  process.exit(0);
}
