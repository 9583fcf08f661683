/** The wire envelope: `{"data": base64(UTF-8 JSON)}` in both directions. Shared by server, SPA and tests. */

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Standard base64 of the UTF-8 bytes of `text`, in the browser as on the server. */
export function utf8ToBase64(text: string): string {
  const bytes = encoder.encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

export function toBase64Json(value: unknown): string {
  return utf8ToBase64(JSON.stringify(value));
}

export type DecodeResult = { ok: true; value: unknown } | { ok: false; reason: string };

export function fromBase64Json(text: string): DecodeResult {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return { ok: false, reason: "data 不是合法的 base64" };
  let bytes: Uint8Array;
  try {
    // The pattern above already refused anything Buffer would silently skip.
    bytes =
      typeof Buffer === "undefined"
        ? Uint8Array.from(atob(text), (c) => c.charCodeAt(0))
        : Buffer.from(text, "base64");
  } catch {
    return { ok: false, reason: "data 不是合法的 base64" };
  }
  let json: string;
  try {
    json = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: "data 不是合法的 UTF-8" };
  }
  if (json.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch {
    return { ok: false, reason: "data 不是合法的 JSON" };
  }
}

export interface Answer<T = unknown> {
  code: number;
  data: T;
  msg: string;
}
