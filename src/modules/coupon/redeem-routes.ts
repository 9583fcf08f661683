import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/service.ts";
import { redeemCoupon } from "./redeem.ts";
import { REDEEM_COUPON_CALL, redeemCouponInput } from "./redeem-schema.ts";

export const redeemCalls = [
  defineCall({
    path: REDEEM_COUPON_CALL,
    access: "user",
    input: redeemCouponInput,
    handle: (ctx, input) => redeemCoupon(ctx.app, (ctx.user as UserRow).id, input.code, ctx.ip),
  }),
];
