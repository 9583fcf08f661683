import { checkout } from "../../payments/checkout.ts";
import { deviceFromUserAgent } from "../../payments/provider.ts";
import { queryOpenPayment } from "../../payments/query.ts";
import { availablePayModes } from "../../payments/registry.ts";
import { type CallContext, defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import {
  createOrderInput,
  dobuyInput,
  orderFeedbackInput,
  orderIdInput,
  orderListInput,
  tradeIdInput,
  tradeListInput,
  useCouponInput,
} from "./schema.ts";
import {
  cancelOrder,
  cancelOrderCoupon,
  createOrder,
  listOrders,
  listTrades,
  orderDetail,
  orderFeedback,
  pageOrders,
  tradeStatus,
  useOrderCoupon,
  walletCheck,
} from "./service.ts";

const me = (ctx: CallContext) => (ctx.user as UserRow).id;

export const orderCalls = [
  defineCall({
    path: "/api/shop/pay_modes",
    access: "public",
    input: emptyInput,
    handle: (ctx) => availablePayModes(ctx.app),
  }),
  defineCall({
    path: "/api/shop/create_order",
    access: "user",
    input: createOrderInput,
    handle: async (ctx, input) => await createOrder(ctx.app, ctx.user as UserRow, input.combo_id),
  }),
  defineCall({
    path: "/api/coupon/orderUseCoupon",
    access: "user",
    input: useCouponInput,
    handle: async (ctx, input) => await useOrderCoupon(ctx.app, me(ctx), input.order_id, input.code, ctx.ip),
  }),
  defineCall({
    path: "/api/coupon/orderCancleCoupon",
    access: "user",
    input: orderIdInput,
    handle: async (ctx, input) => await cancelOrderCoupon(ctx.app, me(ctx), input.order_id),
  }),
  defineCall({
    path: "/api/shop/wallet_check",
    access: "user",
    input: orderIdInput,
    handle: async (ctx, input) => await walletCheck(ctx.app, me(ctx), input.order_id),
  }),
  defineCall({
    path: "/api/shop/dobuy",
    access: "user",
    input: dobuyInput,
    handle: (ctx, input) =>
      checkout(ctx.app, {
        userId: me(ctx),
        orderId: input.order_id,
        payMode: input.pay_mode,
        isMobile: input.isMobile,
        device: deviceFromUserAgent(ctx.request.headers.get("user-agent") ?? "", input.isMobile),
        clientIp: ctx.ip,
        returnUrl: input.return_url,
      }),
  }),
  defineCall({
    path: "/api/shop/trade_status",
    access: "user",
    input: tradeIdInput,
    handle: async (ctx, input) => {
      await queryOpenPayment(ctx.app, me(ctx), input.trade_id);
      return await tradeStatus(ctx.app, me(ctx), input.trade_id);
    },
  }),
  defineCall({
    path: "/api/order/order_list",
    access: "user",
    input: orderListInput,
    handle: async (ctx, input) =>
      input.page === undefined
        ? await listOrders(ctx.app, me(ctx))
        : await pageOrders(ctx.app, me(ctx), { ...input, page: input.page }),
  }),
  defineCall({
    path: "/api/order/cancel_order",
    access: "user",
    input: orderIdInput,
    handle: async (ctx, input) => await cancelOrder(ctx.app, me(ctx), input.order_id),
  }),
  defineCall({
    path: "/api/order/feedback",
    access: "user",
    input: orderFeedbackInput,
    handle: async (ctx, input) => await orderFeedback(ctx.app, me(ctx), input.order_id, input.msg),
  }),
  defineCall({
    path: "/api/admin/trades/tradelist",
    access: "admin",
    input: tradeListInput,
    handle: async (ctx, input) => await listTrades(ctx.app, input.requestNumber, input.filterStr),
  }),
  defineCall({
    path: "/api/admin/trades/get_order_for_trade",
    access: "admin",
    input: orderIdInput,
    handle: async (ctx, input) => await orderDetail(ctx.app, input.order_id),
  }),
];
