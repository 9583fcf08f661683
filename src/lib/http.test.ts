/** Request bodies read with a limit that holds while they stream (issue 11, finding 14). */
import { describe, expect, test } from "bun:test";
import { readBodyText, readJsonBody } from "./http.ts";

/** A chunked request body of `total` bytes; `pulled` counts what the reader asked for. */
function streamedRequest(total: number, chunkBytes = 16 * 1024) {
  const counter = { pulled: 0 };
  const chunk = new Uint8Array(chunkBytes).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= total) return controller.close();
      counter.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { request: new Request("http://x/", { method: "POST", body }), counter };
}

describe("readBodyText", () => {
  test("a streamed body over the limit stops being read right after the limit", async () => {
    const { request, counter } = streamedRequest(64 * 1024 * 1024);
    expect(await readBodyText(request, 100_000)).toEqual({ ok: false, reason: "too_large" });
    expect(counter.pulled).toBeLessThan(200_000);
  });

  test("a declared length over the limit is refused unread", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: "x".repeat(2000),
      headers: { "content-length": "2000" },
    });
    expect(await readBodyText(request, 1000)).toEqual({ ok: false, reason: "too_large" });
    expect(request.bodyUsed).toBe(false);
  });

  test("bodies within the limit come back whole, UTF-8 split across chunks included", async () => {
    const text = "飞渡".repeat(5000);
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        // Split inside a three-byte character.
        controller.enqueue(bytes.slice(0, 1001));
        controller.enqueue(bytes.slice(1001));
        controller.close();
      },
    });
    const request = new Request("http://x/", { method: "POST", body });
    expect(await readBodyText(request, bytes.byteLength)).toEqual({ ok: true, text });
    expect(await readBodyText(new Request("http://x/"), 10)).toEqual({ ok: true, text: "" });
  });

  test("a body that breaks off mid-stream is reported as aborted, not thrown", async () => {
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("connection reset"));
      },
    });
    expect(await readBodyText(new Request("http://x/", { method: "POST", body }), 1000)).toEqual({
      ok: false,
      reason: "aborted",
    });
  });
});

describe("readJsonBody", () => {
  test("JSON within the limit is parsed; over it, malformed or missing is undefined", async () => {
    const post = (body: string) => new Request("http://x/", { method: "POST", body });
    expect(await readJsonBody(post('{"a":[1,2]}'))).toEqual({ a: [1, 2] });
    expect(await readJsonBody(post('{"a":"1234567890"}'), 10)).toBeUndefined();
    expect(await readJsonBody(post("{nope"))).toBeUndefined();
    expect(await readJsonBody(new Request("http://x/"))).toBeUndefined();
  });

  test("the default limit is 1 MB, and a streamed body past it is not read to the end", async () => {
    const { request, counter } = streamedRequest(64 * 1024 * 1024, 64 * 1024);
    expect(await readJsonBody(request)).toBeUndefined();
    expect(counter.pulled).toBeLessThan(2 * 1024 * 1024);
  });
});
