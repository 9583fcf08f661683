/**
 * A webhook receiver on 127.0.0.1 (issue 30 §3): it checks X-Ferry-Signature exactly as README
 * "Webhooks" tells receivers to, and keeps every delivery. It can answer at once (200), fail (503),
 * hang without ever answering (as long as the test lets it), or be down (its port closed), then
 * come back on the same port.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** README "Webhooks": the receiver's verification, word for word. */
function verifyFerrySignature(secret: string, header: string, body: string, toleranceSec = 300): boolean {
  const parts = Object.fromEntries(header.split(",").map((p) => p.trim().split("=") as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSec) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === 32 && timingSafeEqual(given, Buffer.from(expected, "hex"));
}

export interface ReceivedDelivery {
  id: string;
  type: string;
  time: number;
  data: Record<string, unknown>;
  /** Whether the signature verified with the receiver's secret. */
  verified: boolean;
  signature: string;
}

export type ReceiverMode = "ok" | "fail" | "hang";

export interface FakeWebhookReceiver {
  url: string;
  port: number;
  /** Every request that came in whole, in order (failed and hanging ones too). */
  received: ReceivedDelivery[];
  /** The delivered ones: answered 200 (unique event ids are what "each id delivered" counts). */
  delivered: ReceivedDelivery[];
  /** Requests being held open right now (mode "hang"). */
  readonly hanging: number;
  /** The event ids of those requests. */
  readonly hangingIds: string[];
  mode: ReceiverMode;
  /** Closes the port (connections are refused) until up(). */
  down(): Promise<void>;
  up(): void;
  /** Resolves once `check` holds over `delivered`, or throws after `timeoutMs`. */
  waitFor(check: (delivered: ReceivedDelivery[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export function startWebhookReceiver(secret: string): FakeWebhookReceiver {
  const received: ReceivedDelivery[] = [];
  const delivered: ReceivedDelivery[] = [];
  const held = new Map<() => void, string>();
  let port = 0;
  let server: ReturnType<typeof Bun.serve> | null = null;

  const listen = () => {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port,
      idleTimeout: 0,
      async fetch(request) {
        const body = await request.text();
        const parsed = JSON.parse(body) as Omit<ReceivedDelivery, "verified" | "signature">;
        const signature = request.headers.get("x-ferry-signature") ?? "";
        const delivery = { ...parsed, signature, verified: verifyFerrySignature(secret, signature, body) };
        received.push(delivery);
        if (receiver.mode === "fail") return new Response("busy", { status: 503 });
        if (receiver.mode === "hang") {
          // Never answers while the test runs (30 s at most), nor when the sender gives up.
          await new Promise<void>((release) => {
            const timer = setTimeout(release, 30_000);
            const done = () => {
              clearTimeout(timer);
              held.delete(done);
              release();
            };
            held.set(done, delivery.id);
            request.signal.addEventListener("abort", done);
          });
          return new Response("late", { status: 200 });
        }
        delivered.push(delivery);
        return new Response("ok");
      },
    });
    port = server.port ?? 0;
  };
  listen();

  const receiver: FakeWebhookReceiver = {
    get url() {
      return `http://127.0.0.1:${port}/hooks/ferry`;
    },
    get port() {
      return port;
    },
    received,
    delivered,
    get hanging() {
      return held.size;
    },
    get hangingIds() {
      return [...held.values()];
    },
    mode: "ok",
    async down() {
      await server?.stop(true);
      server = null;
    },
    up() {
      if (!server) listen();
    },
    async waitFor(check, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(delivered)) {
        if (Date.now() > deadline) {
          throw new Error(
            `webhook receiver: not there after ${timeoutMs} ms; delivered ${JSON.stringify(delivered)}`,
          );
        }
        await Bun.sleep(20);
      }
    },
    async close() {
      for (const release of [...held.keys()]) release();
      await server?.stop(true);
    },
  };
  return receiver;
}
