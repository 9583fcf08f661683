/**
 * The dashboard's promo card (seed 000 §2, §6; hidden in agency mode, like the top-up link): the
 * package selling points of seed 000 §1 that the login page also makes, and the way to the shop.
 */
import { SELLING_POINTS } from "./AuthLayout.tsx";

/** The selling points about what a package gives; the rest (lines, clients) the dashboard shows itself. */
export const PROMO_POINTS = SELLING_POINTS.filter((point) =>
  ["流量套餐不限时", "时间套餐不限量", "不限设备", "不限速度", "4K 专线"].includes(point.title),
);

export function PromoCard() {
  return (
    <section className="card promo-card" aria-labelledby="card-promo">
      <div className="promo-text">
        <h2 id="card-promo" className="card-title">
          选购套餐
        </h2>
        <p className="card-note">流量套餐永不过期，时间套餐每日流量充足，按需选择。</p>
        <ul className="promo-points">
          {PROMO_POINTS.map((point) => (
            <li key={point.title}>{point.title}</li>
          ))}
        </ul>
      </div>
      <a className="btn btn-primary promo-action" href="/#/shop">
        查看套餐
      </a>
    </section>
  );
}
