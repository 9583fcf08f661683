/**
 * Withdrawal addresses checked by their real checksums (issue 15 §4), on the server only:
 * USDT-TRC20 is a TRON address, base58check of 25 bytes starting 0x41; USDT-ERC20 is an Ethereum
 * address, 0x + 40 hex, whose letter case when mixed must be its EIP-55 checksum.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { type AddressType, WalletMsg } from "./schema.ts";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const TRON_PREFIX = 0x41;
const TRON_BYTES = 25;

/** Base58 (Bitcoin alphabet) to bytes; null on a character outside the alphabet. */
function base58Decode(text: string): Uint8Array | null {
  let value = 0n;
  for (const char of text) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) return null;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value % 256n));
    value /= 256n;
  }
  for (const char of text) {
    if (char !== "1") break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

export function isTronAddress(address: string): boolean {
  const bytes = base58Decode(address);
  if (!bytes || bytes.length !== TRON_BYTES || bytes[0] !== TRON_PREFIX) return false;
  const checksum = sha256(sha256(bytes.subarray(0, 21))).subarray(0, 4);
  return checksum.every((byte, i) => byte === bytes[21 + i]);
}

/** The EIP-55 spelling of a 40-hex-digit address (without 0x). */
function eip55(hex40: string): string {
  const lower = hex40.toLowerCase();
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)));
  return Array.from(lower, (char, i) =>
    Number.parseInt(hash[i] as string, 16) >= 8 ? char.toUpperCase() : char,
  ).join("");
}

export function isEthereumAddress(address: string): boolean {
  const match = /^0x([0-9a-fA-F]{40})$/.exec(address);
  if (!match) return false;
  const hex = match[1] as string;
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  return hex === eip55(hex);
}

/** Why `address` cannot receive `type`, or null when it can. */
export function addressProblem(type: AddressType, address: string): string | null {
  if (type === "USDT-TRC20") return isTronAddress(address) ? null : WalletMsg.badTrc20;
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return WalletMsg.badErc20Shape;
  return isEthereumAddress(address) ? null : WalletMsg.badErc20Checksum;
}
