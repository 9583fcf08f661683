import { defineCall } from "../../rpc/call.ts";
import type { UserRow } from "../user/row.ts";
import { emptyInput } from "../user/schema.ts";
import { redeemCoupon } from "./redeem.ts";
import {
  couponBatchInput,
  couponIdsInput,
  couponInput,
  couponRecordsInput,
  REDEEM_COUPON_CALL,
  redeemCouponInput,
} from "./schema.ts";
import { createCouponBatch, deleteCoupons, listCoupons, listCouponUses, saveCoupon } from "./service.ts";

/**
 * The coupon manager and usage records of the back office (seed 001 §2.13, §2.14, §7), for yunying
 * and admin, and the customer's trial-voucher redemption.
 */
export const couponCalls = [
  defineCall({
    path: "/api/yunying/coupon/coupon_list",
    access: "yunying",
    input: emptyInput,
    handle: async (ctx) => await listCoupons(ctx.app),
  }),
  defineCall({
    path: "/api/yunying/coupon/update_coupon",
    access: "yunying",
    input: couponInput,
    handle: async (ctx, input) => await saveCoupon(ctx.app, input),
  }),
  defineCall({
    path: "/api/yunying/coupon/batch_create",
    access: "yunying",
    input: couponBatchInput,
    handle: async (ctx, input) => await createCouponBatch(ctx.app, input),
  }),
  defineCall({
    path: "/api/yunying/coupon/delete_coupon",
    access: "yunying",
    input: couponIdsInput,
    handle: async (ctx, input) => ({ deleted: await deleteCoupons(ctx.app, input.id_list) }),
  }),
  defineCall({
    path: "/api/yunying/coupon/coupon_record_list",
    access: "yunying",
    input: couponRecordsInput,
    handle: async (ctx, input) => await listCouponUses(ctx.app, input.limit),
  }),
  // A customer redeems a trial voucher (seed 000 §7).
  defineCall({
    path: REDEEM_COUPON_CALL,
    access: "user",
    input: redeemCouponInput,
    handle: async (ctx, input) => await redeemCoupon(ctx.app, (ctx.user as UserRow).id, input.code, ctx.ip),
  }),
];
