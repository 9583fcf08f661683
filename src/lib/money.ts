/**
 * Money: integer fen in the database, yuan with 2 decimals on the wire; USDT as integer units of
 * 10^-6 (the token's decimals), 3-decimal amounts shown to the customer (DESIGN §6, payments.md §0).
 * Never parseFloat a gateway string: parse digits.
 */
import { z } from "zod";

export const USDT_UNITS = 1_000_000;
/** USDT amounts are offered in steps of 0.001. */
export const USDT_STEP_UNITS = 1000;

/** Yuan as a JSON number for the API (1500 → 15, 1550 → 15.5). */
export function fenToYuan(fen: number): number {
  return fen / 100;
}

/** "15.00" for display and for gateways that want two decimals. */
export function formatYuan(fen: number): string {
  const sign = fen < 0 ? "-" : "";
  const abs = Math.abs(fen);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** "2.086" (3 decimals, as the customer must send it). Units are always a multiple of 0.001 here. */
export function formatUsdt(units: number): string {
  const whole = Math.trunc(units / USDT_UNITS);
  const milli = Math.round((units % USDT_UNITS) / USDT_STEP_UNITS);
  return `${whole}.${String(milli).padStart(3, "0")}`;
}

const DECIMAL = /^(\d{1,12})(?:\.(\d{1,}))?$/;

/** A decimal string ("15", "15.0", "15.00") to integer minor units, or null if malformed or too precise. */
export function parseDecimal(text: string, decimals: number): number | null {
  const match = DECIMAL.exec(text.trim());
  if (!match) return null;
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > decimals) return null;
  return Number(match[1]) * 10 ** decimals + Number(fraction.padEnd(decimals, "0") || "0");
}

export const parseYuan = (text: string) => parseDecimal(text, 2);

/** A yuan amount from a JSON number: at most 2 decimals, converted exactly to fen. */
export function yuanToFen(yuan: number): number {
  return Math.round(yuan * 100);
}

/** zod: a non-negative yuan amount with at most 2 decimals, output in fen. */
export const yuanInput = (max = 1_000_000) =>
  z
    .number()
    .min(0, "金额不能为负")
    .max(max, `金额不能超过 ${max}`)
    .refine((yuan) => Math.abs(yuan * 100 - Math.round(yuan * 100)) < 1e-6, "金额最多两位小数")
    .transform(yuanToFen);
