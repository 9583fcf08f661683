/** Seed 000 §2: /checkout shows static sample data only; it says so. */
import { yuan } from "../components/shop/format.ts";

const SAMPLE_ITEMS = [
  { name: "流量套餐 100G", price: 15, count: 1 },
  { name: "时间套餐 30天", price: 30, count: 1 },
];
const SAMPLE_DISCOUNT = 5;

export function CheckoutPage() {
  const subtotal = SAMPLE_ITEMS.reduce((sum, item) => sum + item.price * item.count, 0);
  return (
    <div className="page">
      <h1 className="page-title">结算</h1>
      <p className="sample-note" role="note">
        示例页面：以下为静态示例数据，不会生成订单，也不会扣款。购买请前往<a href="#/shop">商店</a>。
      </p>
      <section className="card">
        <dl className="order-detail">
          {SAMPLE_ITEMS.map((item) => (
            <div key={item.name}>
              <dt>
                {item.name} × {item.count}
              </dt>
              <dd>{yuan(item.price * item.count)}</dd>
            </div>
          ))}
          <div>
            <dt>小计</dt>
            <dd>{yuan(subtotal)}</dd>
          </div>
          <div>
            <dt>优惠</dt>
            <dd>−{yuan(SAMPLE_DISCOUNT)}</dd>
          </div>
          <div>
            <dt>合计</dt>
            <dd>
              <strong>{yuan(subtotal - SAMPLE_DISCOUNT)}</strong>
            </dd>
          </div>
        </dl>
        <button type="button" className="btn btn-primary btn-block card-action" disabled>
          提交订单（示例）
        </button>
      </section>
    </div>
  );
}
