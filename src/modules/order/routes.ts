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
    handle: (ctx, input) => createOrder(ctx.app, ctx.user as UserRow, input.combo_id),
  }),
  defineCall({
    path: "/api/coupon/orderUseCoupon",
    access: "user",
    input: useCouponInput,
    handle: (ctx, input) => useOrderCoupon(ctx.app, me(ctx), input.order_id, input.code, ctx.ip),
  }),
  defineCall({
    path: "/api/coupon/orderCancleCoupon",
    access: "user",
    input: orderIdInput,
    handle: (ctx, input) => cancelOrderCoupon(ctx.app, me(ctx), input.order_id),
  }),
  defineCall({
    path: "/api/shop/wallet_check",
    access: "user",
    input: orderIdInput,
    handle: (ctx, input) => walletCheck(ctx.app, me(ctx), input.order_id),
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
    handle: (ctx, input) => {
      const status = () => tradeStatus(ctx.app, me(ctx), input.trade_id);
      const query = queryOpenPayment(ctx.app, me(ctx), input.trade_id);
      return query ? query.then(status) : status();
    },
  }),
  defineCall({
    path: "/api/order/order_list",
    access: "user",
    input: emptyInput,
    handle: (ctx) => listOrders(ctx.app, me(ctx)),
  }),
  defineCall({
    path: "/api/order/cancel_order",
    access: "user",
    input: orderIdInput,
    handle: (ctx, input) => cancelOrder(ctx.app, me(ctx), input.order_id),
  }),
  defineCall({
    path: "/api/order/feedback",
    access: "user",
    input: orderFeedbackInput,
    handle: (ctx, input) => orderFeedback(ctx.app, me(ctx), input.order_id, input.msg),
  }),
  defineCall({
    path: "/api/admin/trades/tradelist",
    access: "admin",
    input: tradeListInput,
    handle: (ctx, input) => listTrades(ctx.app, input.requestNumber, input.filterStr),
  }),
  defineCall({
    path: "/api/admin/trades/get_order_for_trade",
    access: "admin",
    input: orderIdInput,
    handle: (ctx, input) => orderDetail(ctx.app, input.order_id),
  }),
];
