import { z } from "zod";
import { recordId } from "../../lib/id-schema.ts";

export type OrderStatus = "topay" | "wallet_spend" | "paied" | "cancled";
export type PayMode = "alipay" | "wxpay" | "usdt";
export const PAY_MODES = ["alipay", "wxpay", "usdt"] as const;

/** How the seeds show an order status (seed 000 §4). */
export const ORDER_STATUS_TEXT: Record<OrderStatus, string> = {
  paied: "成功",
  topay: "未支付",
  wallet_spend: "未支付",
  cancled: "已取消",
};

/** An order on the wire (seed 000 §3 Order). Money in yuan, traffic in bytes, times in ms. */
export interface Order {
  _id: string;
  combo_id: string;
  desc: string;
  order_money: number;
  coupon_discount: number;
  coupon_code: string;
  coupon_name: string;
  couponType: string;
  wallet_spend: number;
  /** What is left to pay online: order_money − coupon_discount − wallet_spend. */
  pay_money: number;
  status: OrderStatus;
  create_time: number;
  pay_time: number | null;
  add_traffic: number;
  add_vip_duration: number;
  gainPermission: string[];
  permissionDuration: number;
  user_feedback: string;
  pay_mode: string;
}

/** `/api/shop/dobuy` answer (seed 000 §3 Pay result). Exactly one of payurl / qrcode / urlscheme / usdtAdress is set unless paid. */
export interface PayResult {
  _id: string;
  status: OrderStatus;
  add_traffic: number;
  add_vip_duration: number;
  third_pay_platform: string;
  payurl: string;
  qrcode: string;
  urlscheme: string;
  usdtAdress: string;
  /** Yuan. */
  request_pay_amound: number;
  /** USDT with exactly 3 decimals, e.g. "2.086"; "" for other modes. */
  request_pay_amound_usdt: string;
  usdtNetwork: string;
  /** When the USDT amount stops being watched (ms); 0 for other modes. */
  expireTime: number;
  /** The payment page is the sandbox provider's: nothing real is charged. */
  sandbox: boolean;
}

/** `/api/shop/trade_status` answer. */
export interface TradeStatus {
  status: OrderStatus;
  add_traffic: number;
  add_vip_duration: number;
}

/** A row of `/api/admin/trades/tradelist` (seed 001 §3 Trade). */
export interface Trade {
  order_id: string;
  username: string;
  desc: string;
  tradeno: string;
  fromChannel: string;
  request_pay_amound: number;
  rewardMoney: number;
  pay_mode: string;
  device: string;
  third_pay_platform: string;
  status: OrderStatus;
  create_time: number;
  add_traffic: number;
  add_vip_duration: number;
}

/** `/api/admin/trades/get_order_for_trade` (seed 001 §2.6 order detail). */
export interface OrderDetail {
  desc: string;
  order_money: number;
  coupon_name: string;
  coupon_discount: number;
  wallet_spend: number;
  status: OrderStatus;
  create_time: number;
  user_feedback: string;
}

const id = recordId("订单号格式错误");

export const ORDER_FEEDBACK_MAX = 30;

export const createOrderInput = z.object({ combo_id: recordId("商品不存在") });
export const orderIdInput = z.object({ order_id: id });
export const tradeIdInput = z.object({ trade_id: id });
export const useCouponInput = z.object({ order_id: id, code: z.string().trim().max(64) });
export const dobuyInput = z.object({
  order_id: id,
  pay_mode: z.enum(PAY_MODES, { message: "不支持的支付方式" }),
  isMobile: z.boolean().default(false),
  return_url: z.string().max(2000).default(""),
});
export const orderFeedbackInput = z.object({
  order_id: id,
  msg: z.string().trim().min(1, "反馈不能为空").max(ORDER_FEEDBACK_MAX, `不要超过${ORDER_FEEDBACK_MAX}字`),
});
/** The order page's status groups (seed 000 §4 display groups), filtered on the server. */
export const ORDER_FILTER_STATUSES = {
  all: ["paied", "topay", "wallet_spend", "cancled"],
  success: ["paied"],
  unpaid: ["topay", "wallet_spend"],
  cancelled: ["cancled"],
} as const satisfies Record<string, readonly OrderStatus[]>;

export type OrderFilter = keyof typeof ORDER_FILTER_STATUSES;

/** Most orders one answer holds: the unpaged call and the pager's 全部 (page size 0). */
export const ORDER_LIST_MAX = 1000;

/** Page sizes of seed 000 §9 (0: 全部); the SPA's pager offers the same. */
export const ORDER_PAGE_SIZES = [5, 20, 50, 100, 0] as const;

/**
 * order_list: with no `page` the whole list as before (an array, newest first, at most
 * ORDER_LIST_MAX); with `page` one page of it and the count, {orders, total, page}.
 */
export const orderListInput = z.object({
  page: z.number().int().min(1).max(1_000_000).optional(),
  pageSize: z
    .number()
    .int()
    .refine((size) => (ORDER_PAGE_SIZES as readonly number[]).includes(size), "不支持的每页条数")
    .default(20),
  filter: z.enum(Object.keys(ORDER_FILTER_STATUSES) as [OrderFilter, ...OrderFilter[]]).default("all"),
});

/** One page of a user's orders, how many there are in all (with the filter), and which page it is. */
export interface OrderListPage {
  orders: Order[];
  total: number;
  /** The page answered: the one asked for, or the last one when that is past the end. */
  page: number;
}

export const tradeListInput = z.object({
  requestNumber: z.number().int().min(1).max(100_000).default(100),
  filterStr: z.string().trim().max(200).default(""),
});

/** Texts of seed 000 §8 for the shop and order pages, shared by SPA and server. */
export const OrderMsg = {
  createFailed: "创建订单失败:",
  walletCheckFailed: "订单确认出错",
  buyFailed: "创建订单失败，请稍后重试",
  cancelCouponFailed: "取消使用优惠券失败，请稍后重试",
  couponEmpty: "优惠券不能为空",
  couponError: "优惠券错误",
  couponTooManyTries: "尝试次数过多，请稍后再试",
  couponUsedUp: "优惠券使用次数已达上限",
  couponTrial: "体验券不能用于购买，请使用现金券或折扣券",
  orderHasCoupon: "该订单已使用优惠券",
  couponExpired: "优惠券已过期",
  cancelFailed: "订单取消失败",
  feedbackHint: "简单描述，不要超过30字，管理员尽快处理",
  feedbackFailed: "未知错误",
  purchaseSuccess: "购买成功",
  notFound: "订单不存在",
  notCancellable: "该订单不能取消",
  tooManyOrders: "下单过于频繁，请稍后再试",
  tooManyPayAttempts: "发起支付过于频繁，请稍后再试",
  /** The wallet entry of an order the sweeper cancelled (issue 26). */
  expiredRefundDesc: (desc: string) => `订单超时未支付，已自动取消 ${desc}`,
  agencyRefused: "代理用户不能购买",
  walletLocked: "订单已使用钱包抵扣，如需更改优惠券请取消订单后重新下单",
  notPayable: "订单状态不允许支付",
  payModeOff: "该支付方式暂未开放",
  noSiteOrigin: "该支付方式暂不可用：管理员尚未设置站点地址，请联系客服",
  unsafePayLink: "支付网关返回的支付链接不安全，已拒绝，请更换支付方式或联系客服",
  // shop and order pages (SPA)
  couponApplied: "优惠券使用成功",
  couponCancelled: "已取消使用优惠券",
  noPayModes: "暂无可用的支付方式，请联系客服",
  cancelled: "订单已取消",
  cancelConfirm: "确定取消该订单吗？已抵扣的钱包余额将退回，优惠券将恢复可用。",
  feedbackSent: "反馈已提交",
  loadFailed: "加载失败，请稍后重试",
  usdtExactAmount: "请务必转账上方的精确金额（精确到小数点后3位），金额不符将无法自动到账。",
  usdtExchangeWarning: "从交易所提币时，手续费不能从转账金额中扣除，且交易所须支持3位小数。",
  usdtExpired: "付款时间已过，请重新下单",
  sandboxMark: "沙箱（测试）支付",
} as const;

/** Pay mode names in the shop (seed 000 §7: alipay, wxpay, usdt). */
export const PAY_MODE_TEXT: Record<PayMode, string> = {
  alipay: "支付宝",
  wxpay: "微信支付",
  usdt: "USDT-TRC20",
};

/**
 * How an order was (or is being) paid, in words: the shop's modes plus wallet / coupon cover and
 * manual crediting; "" before any payment was started.
 */
export function payModeText(mode: string): string {
  if (mode === "wallet") return "钱包";
  if (mode === "manual") return "人工";
  return PAY_MODE_TEXT[mode as PayMode] ?? mode;
}
