/** RFC 6238 Appendix B test vectors, RFC 4226 Appendix D, and base32 round trips. */
import { describe, expect, test } from "bun:test";
import {
  base32Decode,
  base32Encode,
  hotp,
  matchingStep,
  newTotpSecret,
  otpauthUrl,
  type TotpAlgorithm,
  totpAt,
} from "./totp.ts";

// Appendix B: the seeds are the ASCII strings, 20, 32 and 64 bytes long.
const SEEDS: Record<TotpAlgorithm, Buffer> = {
  sha1: Buffer.from("12345678901234567890"),
  sha256: Buffer.from("12345678901234567890123456789012"),
  sha512: Buffer.from("1234567890123456789012345678901234567890123456789012345678901234"),
};

/** Appendix B's table: time in seconds and the 8-digit TOTP per algorithm. */
const VECTORS: [number, Record<TotpAlgorithm, string>][] = [
  [59, { sha1: "94287082", sha256: "46119246", sha512: "90693936" }],
  [1111111109, { sha1: "07081804", sha256: "68084774", sha512: "25091201" }],
  [1111111111, { sha1: "14050471", sha256: "67062674", sha512: "99943326" }],
  [1234567890, { sha1: "89005924", sha256: "91819424", sha512: "93441116" }],
  [2000000000, { sha1: "69279037", sha256: "90698825", sha512: "38618901" }],
  [20000000000, { sha1: "65353130", sha256: "77737706", sha512: "47863826" }],
];

describe("RFC 6238 Appendix B", () => {
  for (const [seconds, codes] of VECTORS) {
    for (const algorithm of ["sha1", "sha256", "sha512"] as const) {
      test(`${algorithm} at ${seconds} s: 8 digits ${codes[algorithm]}`, () => {
        expect(totpAt(SEEDS[algorithm], seconds * 1000, { digits: 8, algorithm })).toBe(codes[algorithm]);
      });
    }
    test(`SHA-1 at ${seconds} s, truncated to Ferry's 6 digits`, () => {
      // 6 digits is the same binary value mod 10^6: the last six of the 8-digit code.
      expect(totpAt(SEEDS.sha1, seconds * 1000)).toBe(codes.sha1.slice(2));
    });
  }
});

test("RFC 4226 Appendix D: HOTP counters 0–9", () => {
  const expected = [
    "755224",
    "287082",
    "359152",
    "969429",
    "338314",
    "254676",
    "287922",
    "162583",
    "399871",
    "520489",
  ];
  expect(expected.map((_, counter) => hotp(SEEDS.sha1, counter))).toEqual(expected);
});

test("base32 round-trips and reads the RFC 4648 examples", () => {
  expect(base32Encode(Buffer.from("foobar"))).toBe("MZXW6YTBOI");
  expect(base32Decode("MZXW6YTBOI======")?.toString()).toBe("foobar");
  expect(base32Decode("mzxw 6ytb oi")?.toString()).toBe("foobar");
  expect(base32Decode("MZXW1")).toBeNull();
  const secret = newTotpSecret();
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  expect(base32Encode(base32Decode(secret) as Buffer)).toBe(secret);
});

test("a code matches its own step and one step either side, no further", () => {
  const secret = base32Encode(SEEDS.sha1);
  const now = 1111111111 * 1000;
  const step = Math.floor(now / 30_000);
  const codeAt = (s: number) => hotp(SEEDS.sha1, s);
  expect(matchingStep(secret, codeAt(step), now)).toBe(step);
  expect(matchingStep(secret, codeAt(step - 1), now)).toBe(step - 1);
  expect(matchingStep(secret, codeAt(step + 1), now)).toBe(step + 1);
  expect(matchingStep(secret, codeAt(step - 2), now)).toBeNull();
  expect(matchingStep(secret, codeAt(step + 2), now)).toBeNull();
  expect(matchingStep(secret, "12345", now)).toBeNull();
});

test("the otpauth URL names the issuer and the account", () => {
  const url = new URL(otpauthUrl("JBSWY3DPEHPK3PXP", "飞渡", "a@b.com"));
  expect([url.protocol, url.host]).toEqual(["otpauth:", "totp"]);
  expect(decodeURIComponent(url.pathname)).toBe("/飞渡:a@b.com");
  expect(Object.fromEntries(url.searchParams)).toEqual({
    secret: "JBSWY3DPEHPK3PXP",
    issuer: "飞渡",
    algorithm: "SHA1",
    digits: "6",
    period: "30",
  });
});
