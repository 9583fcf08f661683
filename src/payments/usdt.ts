/**
 * USDT-TRC20 with unique amounts (payments.md §5): each payment gets an amount at 0.001 USDT
 * steps that no other live payment at the same address holds, so a transfer of exactly that many
 * units identifies the order. There is no notification: usdt-watcher.ts polls TronGrid and feeds
 * matches into markPaid.
 */
import type { AppContext } from "../context.ts";
import { type Db, tx } from "../db/db.ts";
import { USDT_STEP_UNITS, USDT_UNITS } from "../lib/money.ts";
import { Code, RpcError } from "../rpc/codes.ts";
import type { PaymentProvider } from "./provider.ts";

/** Tether's TRC20 contract. Transfers are recognised by this address, never by the token symbol. */
export const USDT_CONTRACT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
/** After expiry an amount stays reserved (and a transfer of it still pays the order) this long. */
export const USDT_GRACE_MS = 10 * 60_000;
/** How many 0.001 steps above the base amount are tried before refusing. */
export const USDT_SLOT_STEPS = 100;
export const USDT_BUSY = "USDT 支付繁忙，请稍后再试";

const TRON_ADDRESS = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

export const isTronAddress = (address: string) => TRON_ADDRESS.test(address);

/** CNY fen per USDT from the setting exchange_rate (yuan per USDT). */
export const rateFenOf = (exchangeRate: number) => Math.round(exchangeRate * 100);

/** The base amount in units for a price: ceil(fen × 10^6 / rateFen), rounded up to 0.001 USDT. */
export function usdtUnitsFor(amountFen: number, rateFen: number): number {
  const exact = (BigInt(amountFen) * BigInt(USDT_UNITS) + BigInt(rateFen) - 1n) / BigInt(rateFen);
  const step = BigInt(USDT_STEP_UNITS);
  return Number(((exact + step - 1n) / step) * step);
}

export interface UsdtReservation {
  tradeNo: string;
  address: string;
  baseUnits: number;
  rateFen: number;
  expiresAt: number;
  now: number;
}

/**
 * Reserves the first free amount at or above baseUnits for the payment and records it on the
 * payment row. Slots whose hold (expiry + grace) has passed are freed first.
 */
export async function reserveUsdtAmount(db: Db, reservation: UsdtReservation): Promise<number> {
  return await tx(db, async () => {
    await db.run("DELETE FROM usdt_slots WHERE hold_until < ?", reservation.now);
    const take =
      "INSERT INTO usdt_slots (address, units, trade_no, hold_until) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING";
    for (let step = 0; step < USDT_SLOT_STEPS; step += 1) {
      const units = reservation.baseUnits + step * USDT_STEP_UNITS;
      const held = await db.run(
        take,
        reservation.address,
        units,
        reservation.tradeNo,
        reservation.expiresAt + USDT_GRACE_MS,
      );
      if (held.changes !== 1) continue;
      await db.run(
        "UPDATE payments SET usdt_units = ?, usdt_address = ?, usdt_rate_fen = ?, expire_time = ? WHERE trade_no = ?",
        units,
        reservation.address,
        reservation.rateFen,
        reservation.expiresAt,
        reservation.tradeNo,
      );
      return units;
    }
    throw new RpcError(Code.badInput, USDT_BUSY);
  });
}

/** The configured receiving address, or null when USDT is off (empty or not a TRON address). */
export async function usdtAddress(ctx: AppContext): Promise<string | null> {
  const address = (await ctx.settings.get("usdtpay")).trim();
  return isTronAddress(address) ? address : null;
}

export const usdtProvider: PaymentProvider = {
  id: "usdt_trc20",
  label: "USDT-TRC20",
  callbacks: false,
  serves: async (ctx, method) => method === "usdt" && (await usdtAddress(ctx)) !== null,
  async createPayment(ctx, request) {
    const address = await usdtAddress(ctx);
    if (!address) throw new Error("USDT is not configured (usdtpay)");
    const settings = await ctx.settings.all();
    const rateFen = rateFenOf(settings.exchange_rate);
    const expiresAt = request.now + settings.usdtCheckTime * 60_000;
    const units = await reserveUsdtAmount(ctx.db, {
      tradeNo: request.tradeNo,
      address,
      baseUnits: usdtUnitsFor(request.amountFen, rateFen),
      rateFen,
      expiresAt,
      now: request.now,
    });
    return { kind: "crypto", network: "TRC20", token: "USDT", address, units, expiresAt };
  },
};
