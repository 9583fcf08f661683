/** Pure rules of the SPA shell: the tab table, platform detection, paging, time-package figures. */
import { describe, expect, test } from "bun:test";
import { GB } from "../src/lib/traffic.ts";
import { pageCount } from "./components/Pager.tsx";
import { detectPlatform } from "./components/platform.ts";
import { timePackage } from "./lib/timePackage.ts";
import { visibleTabs } from "./routes.ts";

const labels = (viewer: Parameters<typeof visibleTabs>[0], agency = false) =>
  visibleTabs(viewer, agency).map((tab) => tab.label);

describe("header tabs (seed 000 §2, seed 001 §2)", () => {
  test("visitors see tutorial, shop, nodes, invite rebate and wallet", () => {
    expect(labels("none")).toEqual(["使用教程", "商店", "节点列表", "邀请返利", "钱包"]);
  });
  test("normal users have no invite rebate or wallet tab", () => {
    expect(labels("normal")).toEqual([
      "使用教程",
      "商店",
      "节点列表",
      "订单记录",
      "流量记录",
      "常见问题",
      "问题反馈",
      "流量转赠",
      "我的账户",
    ]);
  });
  test("channel users get invite rebate and wallet", () => {
    expect(labels("channel")).toContain("邀请返利");
    expect(labels("channel")).toContain("钱包");
    expect(labels("channel")).not.toContain("统计");
  });
  test("yunying sees coupon manager, coupon records and prize manager only among back-office tabs", () => {
    const tabs = labels("yunying");
    expect(tabs.slice(11)).toEqual(["优惠券管理", "优惠券记录", "抽奖管理"]);
  });
  test("admins see all 27 tabs: the seeds' 26 and 操作日志 (issue 30), which yunying does not see", () => {
    expect(labels("admin")).toHaveLength(27);
    expect(labels("admin")).toContain("操作日志");
    expect(labels("yunying")).not.toContain("操作日志");
  });
  test("agency mode keeps only the tabs marked allowed", () => {
    expect(labels("normal", true)).toEqual(["使用教程", "节点列表", "流量记录", "我的账户"]);
    expect(labels("none", true)).toEqual(["使用教程", "节点列表"]);
  });
});

describe("helpers", () => {
  test("platform detection defaults to Windows", () => {
    expect(detectPlatform("Mozilla/5.0 (Windows NT 10.0; Win64; x64)", 0)).toBe("Windows");
    expect(detectPlatform("Mozilla/5.0 (X11; Linux x86_64)", 0)).toBe("Windows");
    expect(detectPlatform("Mozilla/5.0 (Linux; Android 14; Pixel 8)", 5)).toBe("Android");
    expect(detectPlatform("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", 5)).toBe("iOS");
    expect(detectPlatform("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0)", 0)).toBe("macOS");
    expect(detectPlatform("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0)", 5)).toBe("iOS");
  });
  test("page count, 0 meaning everything on one page", () => {
    expect(pageCount(0, 20)).toBe(1);
    expect(pageCount(41, 20)).toBe(3);
    expect(pageCount(41, 0)).toBe(1);
  });
  test("time package: rounded days, usage capped at 100 %, default 50 GB limit", () => {
    const now = 1_700_000_000_000;
    const pkg = timePackage(
      { limit: 0, dailyTimePackageUsage: 80 * GB, vipExpireTime: now + 2.6 * 86_400_000 },
      now,
    );
    expect(pkg).toMatchObject({ active: true, limit: 50 * GB, percent: 100, daysLeft: 3 });
    expect(timePackage({ limit: 10 * GB, dailyTimePackageUsage: GB, vipExpireTime: now }, now).active).toBe(
      false,
    );
    expect(
      timePackage({ limit: 10 * GB, dailyTimePackageUsage: GB, vipExpireTime: now + 1 }, now).percent,
    ).toBe(10);
  });
});
