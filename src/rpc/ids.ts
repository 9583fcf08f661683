import { timingSafeEqual } from "node:crypto";

/** Ids and secrets. `_id` values are 24 lowercase hex: 4-byte seconds + 8 random bytes (DESIGN §6). */

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function newId(now = Date.now()): string {
  const seconds = Math.floor(now / 1000)
    .toString(16)
    .padStart(8, "0");
  return seconds + hex(crypto.getRandomValues(new Uint8Array(8)));
}

export function randomHex(byteCount: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(byteCount)));
}

export function sha256Hex(text: string): string {
  // The one-shot form: half the time of a hasher object (the session lookup hashes every request's token).
  return Bun.CryptoHasher.hash("sha256", text, "hex");
}

/** Compares a secret someone sent with the stored one in constant time (different lengths never match). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
