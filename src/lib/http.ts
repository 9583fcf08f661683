/** Plain JSON over HTTP, for the routes outside the envelope (node API, the agent's control port). */

/** A JSON answer that no cache keeps. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}

export type BodyText = { ok: true; text: string } | { ok: false; reason: "too_large" | "aborted" };

/** Largest plain JSON body `readJsonBody` accepts unless told otherwise. */
export const DEFAULT_JSON_BODY_BYTES = 1024 * 1024;

/**
 * The request's body as UTF-8 text, read no further than `maxBytes`: a larger declared length is
 * refused unread, and a chunked body (no length) stops being read as soon as it passes the limit,
 * instead of being buffered up to the server's own 8 MB cap first.
 */
export async function readBodyText(request: Request, maxBytes: number): Promise<BodyText> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > maxBytes) return { ok: false, reason: "too_large" };
    // With a length, HTTP framing ends the body there, so the fast whole-body read is safe.
    try {
      return { ok: true, text: await request.text() };
    } catch {
      return { ok: false, reason: "aborted" };
    }
  }
  const read = await readStreamCapped(request.body, maxBytes);
  return read.ok ? { ok: true, text: read.bytes.toString("utf8") } : read;
}

export type BodyBytes =
  | { ok: true; bytes: Buffer<ArrayBuffer> }
  | { ok: false; reason: "too_large" | "aborted" };

/**
 * The request's body as bytes, read no further than `maxBytes` (as readBodyText: uploads);
 * `signal` aborting stops reading a body without a declared length.
 */
export async function readBodyBytes(
  request: Request,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<BodyBytes> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > maxBytes) return { ok: false, reason: "too_large" };
    try {
      return { ok: true, bytes: Buffer.from(await request.arrayBuffer()) };
    } catch {
      return { ok: false, reason: "aborted" };
    }
  }
  return readStreamCapped(request.body, maxBytes, signal);
}

/**
 * A body stream (a request's without a declared length, or a fetched response's), chunk by chunk,
 * given up as soon as it passes `maxBytes`; `signal` aborting stops the read.
 */
export async function readStreamCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<BodyBytes> {
  if (!body) return { ok: true, bytes: Buffer.alloc(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const cancel = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) return { ok: false, reason: "aborted" };
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        cancel();
        return { ok: false, reason: "too_large" };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: "aborted" };
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
  return { ok: true, bytes: Buffer.concat(chunks, size) };
}

/** The request's JSON body, or undefined when it is missing, not JSON or larger than `maxBytes`. */
export async function readJsonBody(request: Request, maxBytes = DEFAULT_JSON_BODY_BYTES): Promise<unknown> {
  const body = await readBodyText(request, maxBytes);
  if (!body.ok) return undefined;
  try {
    return JSON.parse(body.text);
  } catch {
    return undefined;
  }
}
