/** USDT-TRC20 with unique amounts and a TronGrid watcher: payments.md §5. Written in the payments helper's step. */
import type { PaymentProvider } from "./provider.ts";

export const usdtProvider: PaymentProvider = {
  id: "usdt_trc20",
  label: "USDT-TRC20",
  serves: () => false,
  async createPayment() {
    throw new Error("USDT provider not built yet");
  },
};
