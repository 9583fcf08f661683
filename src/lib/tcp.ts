/** TCP reachability, for the latency probe and for waiting on a proxy core to listen. */

const CONNECT_TIMEOUT_MS = 3_000;

/** Milliseconds to open a TCP connection (at least 1), or 0 when it fails or times out. */
export async function connectLatency(
  host: string,
  port: number,
  timeoutMs = CONNECT_TIMEOUT_MS,
): Promise<number> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const socket = await Promise.race([
      Bun.connect({ hostname: host, port, socket: { data() {} } }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
    const elapsed = Math.max(1, Math.round(performance.now() - started));
    socket.end();
    return elapsed;
  } catch {
    return 0;
  } finally {
    clearTimeout(timer);
  }
}

/** Whether something accepts TCP connections on the port (loopback unless told). */
export async function acceptsConnections(port: number, host = "127.0.0.1"): Promise<boolean> {
  return (await connectLatency(host, port)) > 0;
}
