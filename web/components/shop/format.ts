/** Pure rules of the shop and order pages: figures on the combo cards, pay dialogs, coupon texts, filters. */
import { formatYuan, yuanToFen } from "../../../src/lib/money.ts";
import { formatTraffic } from "../../../src/lib/traffic.ts";
import { type Combo, comboCredit, comboKind } from "../../../src/modules/combo/schema.ts";
import {
  ORDER_FILTER_STATUSES,
  type OrderFilter,
  OrderMsg,
  type OrderStatus,
  type PayMode,
  type PayResult,
} from "../../../src/modules/order/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";

/** Yuan from the API as the shop shows it: 15 → "¥15.00". */
export const yuan = (amount: number) => `¥${formatYuan(yuanToFen(amount))}`;

/** Payment status polling and the way home after success (seed 000 §9). */
export const PAY_POLL_MS = 3000;
export const HOME_AFTER_PAID_MS = 5000;

export interface ComboFact {
  label: string;
  value: string;
}

/** A time package's daily quota with the bonus in it, as the server credits it (docs/decisions.md). */
const dailyQuota = (combo: Combo) => comboCredit(combo).dailyLimit ?? 0;

/** Seed 000 §9: time package total = daily limit × days × (1 + bonus%). */
export function timePackageTotal(combo: Combo): number {
  return dailyQuota(combo) * combo.vipDuration;
}

/** The lines of a combo card, in the order they are shown. */
export function comboFacts(combo: Combo): ComboFact[] {
  const facts: ComboFact[] = [];
  const bonus = combo.additionPersend > 0;
  if (comboKind(combo) === "time") {
    facts.push({ label: "时长", value: `${combo.vipDuration} 天` });
    facts.push({ label: "每日流量", value: formatTraffic(dailyQuota(combo)) });
    facts.push({ label: "总流量", value: formatTraffic(timePackageTotal(combo)) });
  }
  if (combo.traffic > 0) {
    facts.push({ label: "流量", value: formatTraffic(combo.traffic) });
    if (bonus) {
      facts.push({ label: "实得流量", value: formatTraffic(comboCredit(combo).traffic) });
    }
    // The traffic's life: the combo's duration from payment (a time card names it apart from 时长).
    const trafficLife = comboKind(combo) === "traffic" ? "有效期" : "流量有效期";
    if (combo.duration > 0) facts.push({ label: trafficLife, value: `购买后 ${combo.duration} 天` });
    else if (comboKind(combo) === "traffic") facts.push({ label: trafficLife, value: "永久有效" });
  }
  facts.push({ label: "设备数", value: combo.deviceNum > 0 ? `${combo.deviceNum} 台` : "不限" });
  facts.push({ label: "速度", value: combo.speed.trim() || "不限速" });
  if (combo.permissionsGain.length > 0 && combo.permissionDuration > 0) {
    facts.push({ label: "权限有效期", value: `${combo.permissionDuration} 天` });
  }
  return facts;
}

/** Traffic cards first, then time cards, each in the catalogue's order. */
export function splitCombos(combos: readonly Combo[]): { traffic: Combo[]; time: Combo[] } {
  return {
    traffic: combos.filter((combo) => comboKind(combo) === "traffic"),
    time: combos.filter((combo) => comboKind(combo) === "time"),
  };
}

/** Seed 000 §8 order-coupon errors; anything else is 优惠券错误. */
export function couponErrorText(code: number): string {
  switch (code) {
    case Code.couponTooManyTries:
      return OrderMsg.couponTooManyTries;
    case Code.couponUsedUp:
      return OrderMsg.couponUsedUp;
    case Code.couponTrialNotAllowed:
      return OrderMsg.couponTrial;
    case Code.orderHasCoupon:
      return OrderMsg.orderHasCoupon;
    case Code.couponExpired:
      return OrderMsg.couponExpired;
    default:
      return OrderMsg.couponError;
  }
}

/** A failed dobuy: the coupon's usage text for 1017 (seed 000 §8), the rate limit's for 1005, else the generic text. */
export function buyErrorText(code: number): string {
  if (code === Code.couponUsedUp) return OrderMsg.couponUsedUp;
  if (code === Code.tooManyRequests) return OrderMsg.tooManyPayAttempts;
  return OrderMsg.buyFailed;
}

export type PayDialogKind = "paid" | "usdt" | "applink" | "qr" | "none";

/**
 * Which dialog collects a pay result. An app scheme, or alipay's pay page on a phone, is opened
 * by a button (a QR code cannot be scanned by the phone showing it); wxpay keeps its QR code on
 * phones too, with the screenshot instructions.
 */
export function payDialogKind(result: PayResult, payMode: PayMode, mobile: boolean): PayDialogKind {
  if (result.status === "paied") return "paid";
  if (result.usdtAdress) return "usdt";
  if (result.urlscheme) return mobile || !result.qrcode ? "applink" : "qr";
  if (mobile && payMode === "alipay" && result.payurl) return "applink";
  if (result.qrcode) return "qr";
  if (result.payurl) return "applink";
  return "none";
}

/** Where the app-link button goes. */
export const appLinkTarget = (result: PayResult) => result.urlscheme || result.payurl;

/** The QR dialog's instruction (seed 000 §2: wxpay on a phone = screenshot, 扫一扫, album). */
export function qrInstruction(payMode: PayMode, mobile: boolean): string {
  if (payMode === "wxpay") {
    return mobile
      ? "请截屏保存二维码，打开微信「扫一扫」，点击右上角「相册」选择刚才的截图完成支付。"
      : "请使用手机微信「扫一扫」扫描二维码完成支付。";
  }
  if (payMode === "alipay") return "请使用手机支付宝扫描二维码完成支付。";
  return "请扫描二维码完成支付。";
}

/** Time left as mm:ss (h:mm:ss from an hour up); 00:00 once over. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, "0");
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  return hours > 0 ? `${hours}:${pad(minutes)}:${pad(seconds)}` : `${pad(minutes)}:${pad(seconds)}`;
}

export type { OrderFilter };

/** The order page's status filter (seed 000 §4 display groups; the server filters by the same map). */
export const ORDER_FILTERS: readonly { key: OrderFilter; label: string; statuses: readonly OrderStatus[] }[] =
  [
    { key: "all", label: "全部", statuses: ORDER_FILTER_STATUSES.all },
    { key: "success", label: "成功", statuses: ORDER_FILTER_STATUSES.success },
    { key: "unpaid", label: "未支付", statuses: ORDER_FILTER_STATUSES.unpaid },
    { key: "cancelled", label: "已取消", statuses: ORDER_FILTER_STATUSES.cancelled },
  ];

export function filterOrders<T extends { status: OrderStatus }>(
  orders: readonly T[],
  filter: OrderFilter,
): T[] {
  const statuses = ORDER_FILTERS.find((f) => f.key === filter)?.statuses ?? [];
  return orders.filter((order) => statuses.includes(order.status));
}

/** Seed 000 §4: cancel for topay and wallet_spend; feedback for paied and wallet_spend. 去支付 as cancel (issue 26). */
export const canCancel = (status: OrderStatus) => status === "topay" || status === "wallet_spend";
export const canPay = canCancel;
export const canFeedback = (status: OrderStatus) => status === "paied" || status === "wallet_spend";
