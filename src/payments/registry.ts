/** The providers Ferry ships, and which one collects a pay mode under the current settings. */
import type { AppContext } from "../context.ts";
import type { PayMode } from "../modules/order/schema.ts";
import { epayProvider } from "./epay.ts";
import type { PaymentProvider, ProviderId } from "./provider.ts";
import { sandboxProvider } from "./sandbox.ts";
import { usdtProvider } from "./usdt.ts";

export const PROVIDERS: readonly PaymentProvider[] = [sandboxProvider, epayProvider, usdtProvider];

export function providerById(id: string): PaymentProvider | undefined {
  return PROVIDERS.find((provider) => provider.id === (id as ProviderId));
}

/** The provider collecting this pay mode now, or undefined when the mode is off. */
export function providerFor(ctx: AppContext, method: PayMode): PaymentProvider | undefined {
  return PROVIDERS.find((provider) => provider.serves(ctx, method));
}

/** Which pay modes the shop can offer (the SPA hides the others). */
export function availablePayModes(ctx: AppContext): PayMode[] {
  return (["alipay", "wxpay", "usdt"] as const).filter((mode) => providerFor(ctx, mode));
}
