/**
 * TOTP (RFC 6238) over HOTP (RFC 4226) with node:crypto's HMAC, and the base32 secrets
 * authenticator apps read (RFC 4648). Pure: no database, no clock of its own.
 */
import { createHmac, randomBytes } from "node:crypto";

/** The parameters Ferry uses: 30-second steps, 6 digits, HMAC-SHA-1 (what every authenticator app reads). */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now a code is accepted for (clock drift of the phone). */
export const TOTP_DRIFT_STEPS = 1;
/** 160-bit secrets, the HMAC-SHA-1 key size RFC 4226 recommends. */
const SECRET_BYTES = 20;

export type TotpAlgorithm = "sha1" | "sha256" | "sha512";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (case, spaces and padding ignored); null when a character is not base32. */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s=]/g, "").toUpperCase();
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) return null;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new random secret, base32 as the user types it into an app. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(SECRET_BYTES));
}

/** HOTP (RFC 4226 §5.3): HMAC of the 8-byte counter, dynamic truncation, `digits` decimal digits. */
export function hotp(
  key: Uint8Array,
  counter: number,
  digits = TOTP_DIGITS,
  algorithm: TotpAlgorithm = "sha1",
) {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(message).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** The time step (RFC 6238 T) of an instant in ms. */
export const timeStep = (ms: number, period = TOTP_PERIOD_SECONDS) => Math.floor(ms / 1000 / period);

/** The TOTP code of `key` for the step of `ms`. */
export function totpAt(
  key: Uint8Array,
  ms: number,
  options: { digits?: number; algorithm?: TotpAlgorithm; period?: number } = {},
): string {
  return hotp(key, timeStep(ms, options.period), options.digits, options.algorithm);
}

/**
 * The step within ±TOTP_DRIFT_STEPS of `now` whose code is `code` (latest first), or null. The
 * caller still has to claim the step (each step is usable once per account).
 */
export function matchingStep(secret: string, code: string, now: number): number | null {
  const key = base32Decode(secret);
  if (!key || !/^\d{6}$/.test(code)) return null;
  const current = timeStep(now);
  for (let step = current + TOTP_DRIFT_STEPS; step >= current - TOTP_DRIFT_STEPS; step--) {
    if (hotp(key, step) === code) return step;
  }
  return null;
}

/** The otpauth:// URL authenticator apps scan (Key Uri Format): issuer and account label. */
export function otpauthUrl(secret: string, issuer: string, account: string): string {
  const label = encodeURIComponent(`${issuer}:${account}`);
  const params = new URLSearchParams({
    secret,
    issuer,
    algorithm: "SHA1",
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD_SECONDS),
  });
  return `otpauth://totp/${label}?${params.toString()}`;
}
