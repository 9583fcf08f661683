/** EPay (彩虹易支付 v1, MD5) for alipay and wxpay: payments.md §2. Written in the payments helper's step. */
import type { PaymentProvider } from "./provider.ts";

export const epayProvider: PaymentProvider = {
  id: "epay",
  label: "易支付",
  serves: (ctx, method) =>
    (method === "alipay" || method === "wxpay") && ctx.settings.get(method) === "epay" && false,
  async createPayment() {
    throw new Error("EPay provider not built yet");
  },
};
