/** Pure rules of the shop and order pages, and the USDT dialog's content rendered to HTML. */
import { describe, expect, test } from "bun:test";
import { renderToStaticMarkup } from "react-dom/server";
import { GB } from "../../../src/lib/traffic.ts";
import type { Combo } from "../../../src/modules/combo/schema.ts";
import { OrderMsg, type PayResult, payModeText } from "../../../src/modules/order/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import {
  buyErrorText,
  canCancel,
  canFeedback,
  comboFacts,
  couponErrorText,
  filterOrders,
  formatCountdown,
  payDialogKind,
  qrInstruction,
  splitCombos,
  timePackageTotal,
  yuan,
} from "./format.ts";
import { validateFeedback } from "./OrderDialogs.tsx";
import { UsdtPayBody } from "./PayDialogs.tsx";

const combo = (patch: Partial<Combo>): Combo => ({
  _id: "0".repeat(24),
  orderID: 0,
  name: "套餐",
  price: 15,
  traffic: 0,
  vipDuration: 0,
  duration: 0,
  limit: 50 * GB,
  additionPersend: 0,
  deviceNum: 0,
  speed: "",
  permissionsGain: [],
  permissionDuration: 0,
  permissionsDesc: "",
  ...patch,
});

const payResult = (patch: Partial<PayResult>): PayResult => ({
  _id: "1".repeat(24),
  status: "topay",
  add_traffic: 0,
  add_vip_duration: 0,
  third_pay_platform: "",
  payurl: "",
  qrcode: "",
  urlscheme: "",
  usdtAdress: "",
  request_pay_amound: 15,
  request_pay_amound_usdt: "",
  usdtNetwork: "",
  expireTime: 0,
  sandbox: false,
  ...patch,
});

const facts = (c: Combo) => Object.fromEntries(comboFacts(c).map((f) => [f.label, f.value]));

describe("combo cards", () => {
  test("traffic and time packs are split by vipDuration", () => {
    const traffic = combo({ name: "流量", traffic: 100 * GB });
    const time = combo({ name: "时间", vipDuration: 30 });
    const both = combo({ name: "两者", traffic: 10 * GB, vipDuration: 7 });
    const groups = splitCombos([time, traffic, both]);
    expect(groups.traffic.map((c) => c.name)).toEqual(["流量"]);
    expect(groups.time.map((c) => c.name)).toEqual(["时间", "两者"]);
  });

  test("a traffic pack shows its traffic, the bonus traffic, and never expires", () => {
    expect(facts(combo({ traffic: 100 * GB, additionPersend: 20, deviceNum: 3, speed: "150Mbps" }))).toEqual({
      流量: "100.00 G",
      实得流量: "120.00 G",
      有效期: "永久有效",
      设备数: "3 台",
      速度: "150Mbps",
    });
  });

  test("a combo with a duration says how long its traffic lasts after payment (seed 001 §3 duration)", () => {
    expect(facts(combo({ traffic: 10 * GB, duration: 30 }))).toEqual({
      流量: "10.00 G",
      有效期: "购买后 30 天",
      设备数: "不限",
      速度: "不限速",
    });
    expect(facts(combo({ traffic: 10 * GB, vipDuration: 7, duration: 14 }))).toMatchObject({
      时长: "7 天",
      流量: "10.00 G",
      流量有效期: "购买后 14 天",
    });
    // A time card's traffic without a duration is permanent, as before: nothing more is said.
    expect(facts(combo({ traffic: 10 * GB, vipDuration: 7 })).流量有效期).toBeUndefined();
  });

  test("a time pack: daily quota with the bonus, total = daily × days (seed 000 §9)", () => {
    const pack = combo({ vipDuration: 30, limit: 50 * GB, additionPersend: 20 });
    expect(timePackageTotal(pack)).toBe(60 * GB * 30);
    expect(facts(pack)).toEqual({
      时长: "30 天",
      每日流量: "60.00 G",
      总流量: "1.76 T",
      设备数: "不限",
      速度: "不限速",
    });
  });

  test("permission duration shows only when the combo grants permissions", () => {
    expect(facts(combo({ traffic: GB, permissionDuration: 360 })).权限有效期).toBeUndefined();
    expect(
      facts(combo({ traffic: GB, permissionsGain: ["a".repeat(24)], permissionDuration: 360 })),
    ).toMatchObject({
      权限有效期: "360 天",
    });
  });

  test("prices in yuan with two decimals", () => {
    expect(yuan(15)).toBe("¥15.00");
    expect(yuan(0.01)).toBe("¥0.01");
    expect(yuan(19.9)).toBe("¥19.90");
  });
});

describe("order coupon and buy texts (seed 000 §8)", () => {
  test("each coupon code has its text, anything else is 优惠券错误", () => {
    expect(couponErrorText(Code.couponTooManyTries)).toBe(OrderMsg.couponTooManyTries);
    expect(couponErrorText(Code.couponUsedUp)).toBe(OrderMsg.couponUsedUp);
    expect(couponErrorText(Code.couponTrialNotAllowed)).toBe(OrderMsg.couponTrial);
    expect(couponErrorText(Code.orderHasCoupon)).toBe(OrderMsg.orderHasCoupon);
    expect(couponErrorText(Code.couponExpired)).toBe(OrderMsg.couponExpired);
    expect(couponErrorText(Code.couponNotFound)).toBe("优惠券错误");
    expect(couponErrorText(Code.badInput)).toBe("优惠券错误");
  });

  test("a buy refused for coupon usage says so; other failures the generic text", () => {
    expect(buyErrorText(Code.couponUsedUp)).toBe(OrderMsg.couponUsedUp);
    expect(buyErrorText(Code.internal)).toBe("创建订单失败，请稍后重试");
    expect(buyErrorText(Code.tooManyRequests)).toBe("发起支付过于频繁，请稍后再试");
  });
});

describe("pay dialogs", () => {
  test("which dialog a pay result opens", () => {
    expect(payDialogKind(payResult({ status: "paied" }), "alipay", false)).toBe("paid");
    expect(payDialogKind(payResult({ usdtAdress: "T".repeat(34) }), "usdt", true)).toBe("usdt");
    expect(payDialogKind(payResult({ qrcode: "q", payurl: "u" }), "alipay", false)).toBe("qr");
    expect(payDialogKind(payResult({ qrcode: "q", payurl: "u" }), "alipay", true)).toBe("applink");
    expect(payDialogKind(payResult({ qrcode: "q" }), "wxpay", true)).toBe("qr");
    expect(payDialogKind(payResult({ urlscheme: "alipays://x", qrcode: "q" }), "alipay", false)).toBe("qr");
    expect(payDialogKind(payResult({ urlscheme: "alipays://x" }), "alipay", true)).toBe("applink");
    expect(payDialogKind(payResult({ payurl: "u" }), "wxpay", false)).toBe("applink");
    expect(payDialogKind(payResult({}), "alipay", false)).toBe("none");
  });

  test("wxpay instructions differ between phone and desktop (seed 000 §2)", () => {
    expect(qrInstruction("wxpay", true)).toContain("截屏");
    expect(qrInstruction("wxpay", true)).toContain("扫一扫");
    expect(qrInstruction("wxpay", true)).toContain("相册");
    expect(qrInstruction("wxpay", false)).toContain("手机");
    expect(qrInstruction("wxpay", false)).not.toContain("截屏");
  });

  test("countdown", () => {
    expect(formatCountdown(20 * 60_000)).toBe("20:00");
    expect(formatCountdown(61_500)).toBe("01:02");
    expect(formatCountdown(3_600_000)).toBe("1:00:00");
    expect(formatCountdown(-5)).toBe("00:00");
  });

  test("the USDT dialog shows the exact amount, network, address, time left and the warnings", () => {
    const now = 1_700_000_000_000;
    const address = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf";
    const html = renderToStaticMarkup(
      <UsdtPayBody
        result={payResult({
          usdtAdress: address,
          request_pay_amound: 15,
          request_pay_amound_usdt: "2.086",
          usdtNetwork: "TRC20",
          expireTime: now + 19 * 60_000 + 30_000,
        })}
        now={now}
      />,
    );
    expect(html).toContain('<strong class="usdt-amount">2.086</strong> USDT');
    expect(html).toContain("TRC20");
    expect(html).toContain(address);
    expect(html).toContain('aria-label="复制金额"');
    expect(html).toContain('aria-label="复制地址"');
    expect(html).toContain('aria-label="收款地址二维码"');
    expect(html).toContain("19:30");
    expect(html).toContain("精确到小数点后3位");
    expect(html).toContain("手续费不能从转账金额中扣除");
    expect(html).toContain("交易所须支持3位小数");
    expect(html).not.toContain(OrderMsg.sandboxMark);

    const expired = renderToStaticMarkup(
      <UsdtPayBody
        result={payResult({ usdtAdress: address, request_pay_amound_usdt: "2.086", expireTime: now - 1 })}
        now={now}
      />,
    );
    expect(expired).toContain(OrderMsg.usdtExpired);
  });
});

describe("order page rules", () => {
  test("every pay mode an order can carry has a name; none yet is empty", () => {
    expect(["alipay", "wxpay", "usdt", "wallet", "manual", ""].map(payModeText)).toEqual([
      "支付宝",
      "微信支付",
      "USDT-TRC20",
      "钱包",
      "人工",
      "",
    ]);
  });
  const orders = [
    { id: 1, status: "paied" as const },
    { id: 2, status: "topay" as const },
    { id: 3, status: "wallet_spend" as const },
    { id: 4, status: "cancled" as const },
  ];
  test("filters 全部 / 成功 / 未支付 / 已取消", () => {
    expect(filterOrders(orders, "all").map((o) => o.id)).toEqual([1, 2, 3, 4]);
    expect(filterOrders(orders, "success").map((o) => o.id)).toEqual([1]);
    expect(filterOrders(orders, "unpaid").map((o) => o.id)).toEqual([2, 3]);
    expect(filterOrders(orders, "cancelled").map((o) => o.id)).toEqual([4]);
  });

  test("cancel for topay and wallet_spend, feedback for paied and wallet_spend (seed 000 §4)", () => {
    expect(orders.filter((o) => canCancel(o.status)).map((o) => o.id)).toEqual([2, 3]);
    expect(orders.filter((o) => canFeedback(o.status)).map((o) => o.id)).toEqual([1, 3]);
  });

  test("feedback is required and at most 30 characters", () => {
    expect(validateFeedback("   ")).toBe(OrderMsg.feedbackHint);
    expect(validateFeedback("到账慢")).toBeUndefined();
    expect(validateFeedback("字".repeat(30))).toBeUndefined();
    expect(validateFeedback("字".repeat(31))).toBe("简单描述，不要超过30字，管理员尽快处理");
  });
});
