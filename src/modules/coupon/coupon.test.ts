/** The coupon model: saving with the seed 001 §3 wire names, expiry days, codes, lists, delete, amounts. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOrder, makeCombo, makeCoupon, startShopServer } from "../../../tests/commerce.ts";
import { loggedInClient, type TestServer } from "../../../tests/harness.ts";
import { businessDay, DAY_MS, endOfBusinessDay } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { RpcError } from "../../rpc/codes.ts";
import type { Order } from "../order/schema.ts";
import { couponEffectText, couponInput } from "./schema.ts";
import {
  type CouponRow,
  couponDiscountFen,
  deleteCoupons,
  findCouponByCode,
  listCoupons,
  listCouponUses,
} from "./service.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startShopServer();
});
afterAll(async () => {
  await server?.close();
});

function inputError(fields: Record<string, unknown>): string {
  const parsed = couponInput.safeParse(fields);
  if (parsed.success) throw new Error(`accepted ${JSON.stringify(fields)}`);
  return parsed.error.issues.map((issue) => issue.message).join("; ");
}

describe("saveCoupon", () => {
  test("creates a coupon from the wire names: trafficG in G, forMoney in yuan, expireTime a day", async () => {
    await server.context.settings.update({ timezone: "Asia/Shanghai" });
    const coupon = await makeCoupon(server, {
      name: "八折券",
      type: "discount",
      code: "  SPRING80 ",
      taobao: true,
      trafficG: 1.5,
      traffixHaveLimitTime: true,
      traffixLimitTime: 48,
      vipDay: 3,
      forMoney: 0,
      discount: 0.8,
      useNumPerUser: 2,
      NumberOfAuthorizations: 100,
      expireTime: "2030-06-30",
    });
    expect(coupon).toMatchObject({
      name: "八折券",
      type: "discount",
      code: "SPRING80",
      taobao: true,
      traffic: 1.5 * GB,
      traffixHaveLimitTime: true,
      traffixLimitTime: 48,
      vipDay: 3,
      forMoney: 0,
      discount: 0.8,
      useNumPerUser: 2,
      NumberOfAuthorizations: 100,
      authTimes: 0,
      // 2030-06-30 23:59:59.999 in Shanghai (UTC+8)
      expireTime: Date.UTC(2030, 5, 30, 15, 59, 59, 999),
    });
    expect(coupon._id).toMatch(/^[0-9a-f]{24}$/);
    expect((await listCoupons(server.context)).find((c) => c._id === coupon._id)).toEqual(coupon);
  });

  test("the expiry day ends at midnight of the timezone setting; traffic in bytes when trafficG is absent", async () => {
    await server.context.settings.update({ timezone: "America/New_York" });
    try {
      const coupon = await makeCoupon(server, {
        type: "cash",
        code: "NYC",
        forMoney: 12.34,
        traffic: 5,
        expireTime: "2030-01-15",
      });
      expect(coupon).toMatchObject({
        forMoney: 12.34,
        traffic: 5,
        expireTime: Date.UTC(2030, 0, 16, 4, 59, 59, 999),
      });
      expect((await findCouponByCode(server.context.db, "nyc"))?.for_money_fen).toBe(1234);
    } finally {
      await server.context.settings.update({ timezone: "Asia/Shanghai" });
    }
  });

  test("endOfBusinessDay is the last millisecond of the day, across daylight-saving changes too", () => {
    for (const [day, zone] of [
      ["2030-06-30", "Asia/Shanghai"],
      ["2025-03-09", "America/New_York"],
      ["2025-11-02", "America/New_York"],
      ["2025-03-30", "Europe/Berlin"],
      ["2024-02-29", "UTC"],
    ] as const) {
      const end = endOfBusinessDay(day, zone);
      expect([businessDay(end, zone), businessDay(end + 1, zone) > day]).toEqual([day, true]);
    }
  });

  test("an empty expireTime or 0 never expires; a time in ms (as the list gives it back) is kept", async () => {
    expect((await makeCoupon(server, { type: "cash", code: "FOREVER", forMoney: 1 })).expireTime).toBe(0);
    expect(
      (await makeCoupon(server, { type: "cash", code: "FOREVER0", forMoney: 1, expireTime: 0 })).expireTime,
    ).toBe(0);
    const at = Date.UTC(2031, 0, 1);
    expect(
      (await makeCoupon(server, { type: "cash", code: "MSKEPT", forMoney: 1, expireTime: at })).expireTime,
    ).toBe(at);
  });

  test("an empty code gets six random uppercase letters", async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 5; i++) codes.add((await makeCoupon(server, { type: "freeUse", trafficG: 8 })).code);
    expect(codes.size).toBe(5);
    for (const code of codes) expect(code).toMatch(/^[A-Z]{6}$/);
  });

  test("editing keeps the use count and the creation time; a taken code is refused", async () => {
    const combo = await makeCombo(server, { name: "edit", price: 10, traffic: GB });
    const coupon = await makeCoupon(server, {
      type: "cash",
      code: "EDITME",
      forMoney: 2,
      NumberOfAuthorizations: 5,
    });
    const buyer = await loggedInClient(server);
    const order = await createOrder(buyer.client, combo._id);
    expect(
      (await buyer.client.call<Order>("/api/coupon/orderUseCoupon", { order_id: order._id, code: "EDITME" }))
        .code,
    ).toBe(0);

    const edited = await makeCoupon(server, {
      _id: coupon._id,
      type: "cash",
      code: "EDITED",
      name: "改名",
      forMoney: 3,
      NumberOfAuthorizations: 9,
    });
    expect(edited).toMatchObject({
      _id: coupon._id,
      code: "EDITED",
      name: "改名",
      forMoney: 3,
      NumberOfAuthorizations: 9,
      authTimes: 1,
      createTime: coupon.createTime,
    });
    expect((await listCoupons(server.context)).filter((c) => c._id === coupon._id)).toHaveLength(1);

    await makeCoupon(server, { type: "cash", code: "TAKEN", forMoney: 1 });
    await expect(makeCoupon(server, { type: "cash", code: "taken", forMoney: 1 })).rejects.toThrow(RpcError);
    await expect(
      makeCoupon(server, { _id: coupon._id, type: "cash", code: "TAKEN", forMoney: 1 }),
    ).rejects.toThrow(/优惠券码已存在/);
    // Saving a coupon under its own code is fine.
    expect(
      (await makeCoupon(server, { _id: coupon._id, type: "cash", code: "edited", forMoney: 3 })).code,
    ).toBe("edited");
    await expect(
      makeCoupon(server, { _id: "0123456789abcdef01234567", type: "cash", code: "GHOST", forMoney: 1 }),
    ).rejects.toThrow(/不存在/);
  });

  test("bad input is refused with a message", () => {
    expect(inputError({ type: "voucher", code: "X" })).toContain("优惠券类型错误");
    expect(inputError({ type: "discount", code: "X", discount: 0.05 })).toContain("0.1");
    expect(inputError({ type: "discount", code: "X", discount: 1.2 })).toContain("1");
    expect(inputError({ type: "cash", code: "X" })).toContain("现金券金额");
    expect(inputError({ type: "cash", code: "X", forMoney: 1.005 })).toContain("两位小数");
    expect(inputError({ type: "freeUse", code: "X" })).toContain("流量");
    expect(inputError({ type: "freeTime", code: "X" })).toContain("天数");
    expect(inputError({ type: "cash", forMoney: 1, expireTime: "2030-02-30" })).toContain("YYYY-MM-DD");
    expect(inputError({ type: "cash", forMoney: 1, expireTime: "30/06/2030" })).toContain("YYYY-MM-DD");
    expect(inputError({ type: "cash", forMoney: 1, code: "has space" })).toContain("优惠券码");
    expect(inputError({ type: "cash", forMoney: 1, useNumPerUser: -1 })).not.toBe("");
    expect(inputError({ type: "cash", forMoney: 1, useNumPerUser: 1.5 })).not.toBe("");
  });
});

describe("lists and delete", () => {
  test("listCoupons is newest first; deleteCoupons removes the listed ones and keeps their usage records", async () => {
    const combo = await makeCombo(server, { name: "del", price: 10, traffic: GB });
    const older = await makeCoupon(server, { type: "cash", code: "OLDER", forMoney: 1 }, 1_000);
    const newer = await makeCoupon(server, { type: "cash", code: "NEWER", forMoney: 1 }, 2_000);
    const ids = (await listCoupons(server.context)).map((c) => c._id);
    expect(ids.indexOf(newer._id)).toBeLessThan(ids.indexOf(older._id));

    const buyer = await loggedInClient(server);
    const order = await createOrder(buyer.client, combo._id);
    await buyer.client.call("/api/coupon/orderUseCoupon", { order_id: order._id, code: "NEWER" });

    expect(
      await deleteCoupons(server.context, [older._id, newer._id, older._id, "0123456789abcdef01234567"]),
    ).toBe(2);
    const left = (await listCoupons(server.context)).map((c) => c._id);
    expect(left).not.toContain(older._id);
    expect(left).not.toContain(newer._id);
    expect((await listCouponUses(server.context, 1000)).filter((r) => r.code === "NEWER")).toHaveLength(1);
    // The order still holding the deleted coupon cannot be paid with it; taking it off works.
    const pay = await buyer.client.call("/api/shop/dobuy", {
      order_id: order._id,
      pay_mode: "alipay",
      isMobile: false,
    });
    expect(pay.code).toBe(1016);
    const off = await buyer.client.call<Order>("/api/coupon/orderCancleCoupon", { order_id: order._id });
    expect(off.data).toMatchObject({ coupon_code: "", pay_money: 10 });
  });

  test("listCouponUses: newest first, limited, with e-mail, amounts in yuan and the restored flag", async () => {
    const combo = await makeCombo(server, { name: "uses", price: 20, traffic: GB });
    await makeCoupon(server, {
      type: "cash",
      code: "USECASH",
      forMoney: 2.5,
      NumberOfAuthorizations: 0,
      useNumPerUser: 0,
    });
    await makeCoupon(server, {
      type: "discount",
      code: "USEDISC",
      discount: 0.85,
      NumberOfAuthorizations: 0,
      useNumPerUser: 0,
    });
    const buyer = await loggedInClient(server);
    const first = await createOrder(buyer.client, combo._id);
    await buyer.client.call("/api/coupon/orderUseCoupon", { order_id: first._id, code: "USECASH" });
    await buyer.client.call("/api/order/cancel_order", { order_id: first._id });
    const second = await createOrder(buyer.client, combo._id);
    await buyer.client.call("/api/coupon/orderUseCoupon", { order_id: second._id, code: "USEDISC" });

    const mine = (await listCouponUses(server.context, 1000)).filter((r) => r.email === buyer.email);
    expect(mine.map(({ _id, time, ...rest }) => rest)).toEqual([
      {
        email: buyer.email,
        code: "USEDISC",
        type: "discount",
        add_traffic: 0,
        add_day: 0,
        add_money: 3,
        discount: 0.85,
        is_delete: false,
      },
      {
        email: buyer.email,
        code: "USECASH",
        type: "cash",
        add_traffic: 0,
        add_day: 0,
        add_money: 2.5,
        discount: 1,
        is_delete: true,
      },
    ]);
    expect(await listCouponUses(server.context, 1)).toHaveLength(1);
  });
});

describe("couponDiscountFen", () => {
  const coupon = (fields: Partial<CouponRow>) =>
    ({ type: "cash", for_money_fen: 0, discount: 1, ...fields }) as CouponRow;

  test("cash up to the price; discount rounds the price to pay half up, to the fen", () => {
    expect(couponDiscountFen(coupon({ type: "cash", for_money_fen: 500 }), 1500)).toBe(500);
    expect(couponDiscountFen(coupon({ type: "cash", for_money_fen: 2000 }), 1500)).toBe(1500);
    expect(couponDiscountFen(coupon({ type: "discount", discount: 0.9 }), 1500)).toBe(150);
    expect(couponDiscountFen(coupon({ type: "discount", discount: 1 }), 1500)).toBe(0);
    // 45 × 0.7 = 31.5 exactly, though 45 * 0.7 in floating point is 31.499999999999996.
    expect(couponDiscountFen(coupon({ type: "discount", discount: 0.7 }), 45)).toBe(13);
    expect(couponDiscountFen(coupon({ type: "discount", discount: 0.7 }), 165)).toBe(49);
    // 1005 × 0.9 = 904.5 → 905 to pay.
    expect(couponDiscountFen(coupon({ type: "discount", discount: 0.9 }), 1005)).toBe(100);
    expect(couponDiscountFen(coupon({ type: "freeUse" }), 1500)).toBe(0);
    // Every price at every tenth: never negative, never more than the price, exact half-up.
    for (let price = 0; price <= 3000; price++)
      for (let tenths = 1; tenths <= 10; tenths++) {
        const off = couponDiscountFen(coupon({ type: "discount", discount: tenths / 10 }), price);
        expect(price - off).toBe(Math.floor((price * tenths * 2 + 10) / 20));
      }
  });

  test("an expired coupon was valid until the end of its day", async () => {
    const timeZone = await server.context.settings.get("timezone");
    const today = businessDay(Date.now(), timeZone);
    const c = await makeCoupon(server, { type: "cash", code: "TODAYONLY", forMoney: 1, expireTime: today });
    expect(c.expireTime).toBe(endOfBusinessDay(today, timeZone));
    expect(c.expireTime).toBeGreaterThanOrEqual(Date.now());
    expect(c.expireTime - Date.now()).toBeLessThan(DAY_MS);
  });
});

describe("couponEffectText", () => {
  test("G and yuan with 2 decimals, days, the discount as 折 (one helper for the manager, the records and the CLI)", () => {
    const effect = (fields: Partial<Parameters<typeof couponEffectText>[0]>) =>
      couponEffectText({ type: "freeUse", traffic: 0, days: 0, money: 0, discount: 1, ...fields });
    expect(effect({ traffic: 8 * GB })).toBe("8.00 G");
    expect(effect({ traffic: 1.5 * GB + 1 })).toBe("1.50 G");
    expect(effect({ type: "freeTime", days: 7 })).toBe("7 天");
    expect(effect({ type: "cash", money: 2.5 })).toBe("2.50 元");
    expect(effect({ type: "cash", money: 0.1 })).toBe("0.10 元");
    expect(effect({ type: "discount", discount: 0.85 })).toBe("8.5折");
    expect(effect({ type: "discount", discount: 0.9 })).toBe("9折");
    expect(effect({ type: "discount", discount: 0.1 })).toBe("1折");
    expect(effect({ type: "discount", discount: 1 })).toBe("不打折");
    expect(effect({ type: "discount", discount: 0 })).toBe("免单");
  });
});
