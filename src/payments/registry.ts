/** The providers Ferry ships, and which one collects a pay mode under the current settings. */
import type { AppContext } from "../context.ts";
import { PAY_MODES, type PayMode } from "../modules/order/schema.ts";
import { epayProvider } from "./epay.ts";
import type { PaymentProvider, ProviderId } from "./provider.ts";
import { SANDBOX_ENV, sandboxByEnvironment, sandboxProvider } from "./sandbox.ts";
import { usdtProvider } from "./usdt.ts";

export const PROVIDERS: readonly PaymentProvider[] = [sandboxProvider, epayProvider, usdtProvider];

export function providerById(id: string): PaymentProvider | undefined {
  return PROVIDERS.find((provider) => provider.id === (id as ProviderId));
}

/** Why a pay mode is collected the way it is: the settings, or the FERRY_SANDBOX_PAY variable. */
export type PaySource = "setting" | "env";

/**
 * Who collects this pay mode now and why: the provider the settings configure, else, with
 * FERRY_SANDBOX_PAY=1, the sandbox for alipay / wxpay; null when the mode is off.
 */
async function collectorOf(
  ctx: AppContext,
  method: PayMode,
): Promise<{ provider: PaymentProvider; source: PaySource } | null> {
  for (const provider of PROVIDERS) {
    if (await provider.serves(ctx, method)) return { provider, source: "setting" };
  }
  if (sandboxByEnvironment() && method !== "usdt") return { provider: sandboxProvider, source: "env" };
  return null;
}

/** The provider collecting this pay mode now, or undefined when the mode is off. */
export async function providerFor(ctx: AppContext, method: PayMode): Promise<PaymentProvider | undefined> {
  return (await collectorOf(ctx, method))?.provider;
}

/** Which pay modes the shop can offer (the SPA hides the others). */
export async function availablePayModes(ctx: AppContext): Promise<PayMode[]> {
  const modes: PayMode[] = [];
  for (const mode of PAY_MODES) if (await providerFor(ctx, mode)) modes.push(mode);
  return modes;
}

/** What the back office shows of a pay mode: who collects it now and why (null: nobody). */
export interface PayModeInForce {
  mode: PayMode;
  provider: { id: ProviderId; label: string; source: PaySource } | null;
}

export interface PaymentsInForce {
  modes: PayModeInForce[];
  /** Whether the sandbox is on, and whether the setting or the variable turned it on. */
  sandbox: { on: boolean; source: PaySource | null; variable: string };
}

/** The payment set-up as customers meet it, for /api/admin/config/pay_status. */
export async function paymentsInForce(ctx: AppContext): Promise<PaymentsInForce> {
  const modes: PayModeInForce[] = [];
  for (const mode of PAY_MODES) {
    const collector = await collectorOf(ctx, mode);
    modes.push({
      mode,
      provider: collector && {
        id: collector.provider.id,
        label: collector.provider.label,
        source: collector.source,
      },
    });
  }
  const bySetting = await ctx.settings.get("sandbox_pay");
  const byEnv = sandboxByEnvironment();
  return {
    modes,
    sandbox: {
      on: bySetting || byEnv,
      source: byEnv ? "env" : bySetting ? "setting" : null,
      variable: SANDBOX_ENV,
    },
  };
}
