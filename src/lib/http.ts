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
  if (!request.body) return { ok: true, text: "" };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        void reader.cancel().catch(() => {});
        return { ok: false, reason: "too_large" };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: "aborted" };
  }
  return { ok: true, text: Buffer.concat(chunks, size).toString("utf8") };
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
