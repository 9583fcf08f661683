/**
 * A small HTTP/1.1 load generator, run as its own process so it never shares the measured
 * server's event loop. It keeps N keep-alive connections (raw TCP, Bun.connect), each sending the
 * same request again as soon as the previous response is complete (no pipelining), and counts the
 * responses completed inside the measuring window [start + warmup, start + warmup + duration].
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
  const headerLines = Object.entries({ host: `${spec.host}:${spec.port}`, ...spec.headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  const bodyBytes = Buffer.from(spec.body);
  const request = Buffer.from(
    `${spec.method} ${spec.path} HTTP/1.1\r\n${headerLines}content-length: ${bodyBytes.length}\r\n\r\n${spec.body}`,
  );

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
        socket.write(request);
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

  latencies.sort((a, b) => a - b);
  const pick = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const seconds = spec.durationMs / 1000;
  return {
    requests,
    seconds,
    rps: requests / seconds,
    statuses,
    otherLengths,
    errors,
    p50: pick(0.5),
    p99: pick(0.99),
    sample: sample ?? "",
  };
}

if (import.meta.main) {
  const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec;
  const result = await run(spec);
  console.log(JSON.stringify(result));
  process.exit(0);
}
