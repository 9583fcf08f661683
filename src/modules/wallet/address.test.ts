/**
 * Withdrawal address checksums with real addresses: TRON base58check (USDT-TRC20) and Ethereum
 * EIP-55 (USDT-ERC20, the examples of EIP-55 itself), and every single-character corruption of
 * them refused.
 */
import { describe, expect, test } from "bun:test";
import { addressProblem, isEthereumAddress, isTronAddress } from "./address.ts";
import { WalletMsg } from "./schema.ts";

const TRON = [
  "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", // USDT's TRC20 contract
  "TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8", // USDC's TRC20 contract
  "TNUC9Qb1rRpS5CbWLmNMxXBjyFoydXjWFR", // WTRX
];
const EIP55_MIXED = [
  "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
  "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
  "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
  "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
];
const EIP55_ONE_CASE = [
  "0x52908400098527886E0F7030069857D2E4169EE7",
  "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
  "0xde709f2102306220921060314715629080e2fb77",
  "0x27b1fdb04752bbc536007a920d24acb045561c26",
];
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Every string that differs from `text` in exactly one character, the new one drawn from `alphabet`. */
function substitutions(text: string, from: number, alphabet: string): string[] {
  const out: string[] = [];
  for (let i = from; i < text.length; i++) {
    for (const char of alphabet) {
      if (char !== text[i]) out.push(text.slice(0, i) + char + text.slice(i + 1));
    }
  }
  return out;
}

describe("USDT-TRC20 (TRON base58check)", () => {
  test("real addresses pass", () => {
    for (const address of TRON) {
      expect(isTronAddress(address)).toBe(true);
      expect(addressProblem("USDT-TRC20", address)).toBeNull();
    }
  });

  test("every single-character substitution is refused", () => {
    for (const address of TRON) {
      const corrupted = substitutions(address, 0, BASE58);
      expect(corrupted.length).toBe(34 * 57);
      expect(corrupted.filter(isTronAddress)).toEqual([]);
    }
  });

  test("a dropped or added character, a non-base58 character, an Ethereum address and empty are refused", () => {
    const [address = ""] = TRON;
    for (const bad of [
      address.slice(1),
      address.slice(0, -1),
      `${address}1`,
      `1${address}`,
      address.replace("q", "0"),
      address.replace("q", "l"),
      EIP55_MIXED[0] ?? "",
      "",
    ]) {
      expect(addressProblem("USDT-TRC20", bad)).toBe(WalletMsg.badTrc20);
    }
  });

  test("a valid base58check address of another network (Bitcoin, prefix 0x00) is refused", () => {
    // Bitcoin's genesis address: a correct checksum, but not 25 bytes starting 0x41.
    expect(isTronAddress("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")).toBe(false);
  });
});

describe("USDT-ERC20 (EIP-55)", () => {
  test("the EIP-55 examples pass, mixed-case and single-case, and lower-cased", () => {
    for (const address of [...EIP55_MIXED, ...EIP55_ONE_CASE]) {
      expect(isEthereumAddress(address)).toBe(true);
      expect(addressProblem("USDT-ERC20", address)).toBeNull();
      expect(isEthereumAddress(`0x${address.slice(2).toLowerCase()}`)).toBe(true);
    }
  });

  test("flipping the case of any one letter of a checksummed address is refused", () => {
    for (const address of EIP55_MIXED) {
      let flips = 0;
      for (let i = 2; i < address.length; i++) {
        const char = address[i] as string;
        if (!/[a-fA-F]/.test(char)) continue;
        const swapped = char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase();
        const corrupted = address.slice(0, i) + swapped + address.slice(i + 1);
        expect(addressProblem("USDT-ERC20", corrupted)).toBe(WalletMsg.badErc20Checksum);
        flips++;
      }
      expect(flips).toBeGreaterThan(10);
    }
  });

  test("every single-digit substitution of a checksummed address is refused", () => {
    for (const address of EIP55_MIXED) {
      const corrupted = substitutions(address, 2, "0123456789");
      expect(corrupted.filter(isEthereumAddress)).toEqual([]);
    }
  });

  test("a wrong length, a non-hex character, no 0x and a TRON address are refused", () => {
    const [address = ""] = EIP55_MIXED;
    for (const bad of [
      address.slice(0, -1),
      `${address}0`,
      `${address.slice(0, -1)}g`,
      address.slice(2),
      `0X${address.slice(2)}`,
      TRON[0] ?? "",
      "",
    ]) {
      expect(addressProblem("USDT-ERC20", bad)).toBe(WalletMsg.badErc20Shape);
    }
  });
});
