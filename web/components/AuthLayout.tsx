import type { ReactNode } from "react";

/** Selling points of seed 000 §1 on the login and register pages. */
export const SELLING_POINTS = [
  { title: "多国家住宅 IP", text: "覆盖多个国家和地区的原生住宅 IP" },
  { title: "回国住宅线路", text: "身在海外也能顺畅访问国内服务" },
  { title: "流量套餐不限时", text: "按量付费，流量永不过期" },
  { title: "时间套餐不限量", text: "包时段畅用，每日流量充足" },
  { title: "不限设备", text: "手机、电脑、平板同时在线" },
  { title: "不限速度", text: "带宽不设限，高峰也流畅" },
  { title: "4K 专线", text: "高清视频秒开不卡顿" },
  { title: "全平台客户端", text: "Windows、macOS、iOS、Android 全支持" },
] as const;

/** The reset page also names these. */
export const RESET_SELLING_POINTS = [
  { title: "企业专线", text: "为团队与业务提供稳定专属线路" },
  { title: "USDT 支付", text: "支持 USDT 付款，安全便捷" },
  { title: "中转线路", text: "优质中转，延迟更低更稳定" },
] as const;

export function AuthLayout({
  children,
  points = SELLING_POINTS,
}: {
  children: ReactNode;
  points?: readonly { title: string; text: string }[];
}) {
  return (
    <div className="auth-layout">
      <section className="auth-card">{children}</section>
      <aside className="auth-points" aria-label="服务特色">
        <h2 className="auth-points-title">飞渡，安全快速的全球网络</h2>
        <ul className="points">
          {points.map((point) => (
            <li key={point.title} className="point">
              <span className="point-mark" aria-hidden="true">
                ✓
              </span>
              <div>
                <strong>{point.title}</strong>
                <span>{point.text}</span>
              </div>
            </li>
          ))}
        </ul>
      </aside>
    </div>
  );
}
