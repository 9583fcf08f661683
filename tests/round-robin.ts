/**
 * A small round-robin HTTP reverse proxy on 127.0.0.1, as nginx or Caddy would sit in front of
 * several `ferry serve` replicas (README "High availability"): each request goes to the next
 * upstream in turn; an upstream that refuses the connection (a dead replica) is skipped and the
 * request tried on the next one. It adds the client's address to X-Forwarded-For (the replicas run
 * with `--trust-proxy`) and records which upstream answered each request, so a test can show that
 * consecutive requests landed on different replicas.
 *
 * A request cut off after it reached an upstream (the replica died while handling it) is answered
 * 502 and not retried, as nginx does not retry a POST: whether it took effect is unknown to the
 * client, exactly as behind a real load balancer.
 */

export interface Hop {
  method: string;
  /** Path and query. */
  path: string;
  /** Index in `upstreams` of the replica that answered, or -1 when none did. */
  upstream: number;
  status: number;
}

export interface RoundRobin {
  url: string;
  /** The replicas' base URLs (http://127.0.0.1:port); may be set or changed while the proxy runs. */
  upstreams: string[];
  /** Every request, in the order the proxy chose its upstream. */
  hops: Hop[];
  close(): Promise<void>;
}

/** Hop-by-hop headers a proxy does not forward (RFC 9110 §7.6.1), and what it sets itself. */
const NOT_FORWARDED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "content-length",
]);

/** Whether a fetch failed before the upstream took the request: nothing listens there. */
function refused(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code ?? "";
  return code === "ConnectionRefused" || code === "ECONNREFUSED";
}

export function startRoundRobin(upstreams: string[] = []): RoundRobin {
  const hops: Hop[] = [];
  let next = 0;
  const proxy: RoundRobin = { url: "", upstreams, hops, close: async () => {} };

  async function forward(request: Request, clientIp: string): Promise<Response> {
    const url = new URL(request.url);
    const path = `${url.pathname}${url.search}`;
    const headers = new Headers();
    for (const [name, value] of request.headers) if (!NOT_FORWARDED.has(name)) headers.set(name, value);
    const forwardedFor = request.headers.get("x-forwarded-for");
    headers.set("x-forwarded-for", forwardedFor ? `${forwardedFor}, ${clientIp}` : clientIp);
    headers.set("x-forwarded-proto", "http");
    // Read once: a request refused by one upstream is sent again to the next.
    const body =
      request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
    const hop: Hop = { method: request.method, path, upstream: -1, status: 502 };
    hops.push(hop);
    const count = proxy.upstreams.length;
    for (let tried = 0; tried < count; tried += 1) {
      const index = next % count;
      next = index + 1;
      try {
        const answer = await fetch(`${proxy.upstreams[index]}${path}`, {
          method: request.method,
          headers,
          body,
          redirect: "manual",
          // The body goes on as the replica encoded it (gzip stays gzip, with its header).
          decompress: false,
          // A new connection each time: a dead replica refuses it at once (and the request goes to
          // the next one), where a kept-alive connection to it would fail only once used.
          keepalive: false,
        });
        hop.upstream = index;
        hop.status = answer.status;
        const responseHeaders = new Headers();
        for (const [name, value] of answer.headers) {
          if (name !== "set-cookie" && !NOT_FORWARDED.has(name)) responseHeaders.set(name, value);
        }
        for (const cookie of answer.headers.getSetCookie()) responseHeaders.append("set-cookie", cookie);
        return new Response(answer.body, { status: answer.status, headers: responseHeaders });
      } catch (error) {
        if (!refused(error)) {
          hop.upstream = index;
          return new Response("upstream went away", { status: 502 });
        }
      }
    }
    return new Response("no upstream answers", { status: 502 });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch: (request, self) => forward(request, self.requestIP(request)?.address ?? "127.0.0.1"),
  });
  proxy.url = `http://127.0.0.1:${server.port}`;
  proxy.close = async () => {
    await server.stop(true);
  };
  return proxy;
}
