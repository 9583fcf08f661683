/**
 * The baseline: a bare Bun.serve (its own process) answering every request with exactly the bytes
 * and headers ferry answered the measured call with. Anything ferry does beyond this is the cost
 * of routing, the envelope, the session lookup and the service.
 *
 * Usage: bun scripts/bench/bare.ts <spec.json>   (spec: { port, status, headers, body })
 * Prints "ready <port>" once listening; SIGTERM stops it.
 */

interface BareSpec {
  port: number;
  status: number;
  headers: [string, string][];
  body: string;
}

export {};

const spec = (await Bun.file(process.argv[2] ?? "").json()) as BareSpec;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: spec.port,
  // A string body, as ferry builds its envelope answers.
  fetch: () => new Response(spec.body, { status: spec.status, headers: spec.headers }),
});
console.log(`ready ${server.port}`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
