/**
 * The sandbox cashier page as a customer uses it: 确认支付（沙箱）, after which the cashier sends
 * them back to the site as a real gateway's return URL does (订单记录 with the 购买成功 toast).
 */
import type { Page } from "playwright-core";

/** Pays on an open cashier page and waits until it has landed on 订单记录 with the success toast. */
export async function payOnSandboxCashier(cashier: Page): Promise<void> {
  await cashier.getByRole("button", { name: "确认支付（沙箱）" }).click();
  await cashier.getByRole("status").filter({ hasText: "购买成功" }).waitFor({ timeout: 8000 });
  await cashier.waitForURL((url) => url.hash === "#/order");
}
