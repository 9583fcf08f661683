import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/**
 * The seeds' "password transformed before sending": browser and CLI send
 * hex(SHA-256(UTF-8("ferry-v1:" + password))), so the plain password never travels (DESIGN §5).
 * Pure JS because crypto.subtle is missing on plain-http pages.
 */
export function transformPassword(plain: string): string {
  return bytesToHex(sha256(utf8ToBytes(`ferry-v1:${plain}`)));
}
