/** Seed 000 §2: /orderinfo shows static sample data only; it says so. */
import { formatTraffic } from "../../src/lib/traffic.ts";
import { ORDER_STATUS_TEXT } from "../../src/modules/order/schema.ts";
import { yuan } from "../components/shop/format.ts";

const SAMPLE = {
  id: "65a1b2c3d4e5f60718293a4b",
  desc: "流量套餐 100G",
  orderMoney: 15,
  couponDiscount: 2,
  walletSpend: 0,
  addTraffic: 100 * 1024 ** 3,
  createTime: "2024-01-13 10:24:36",
  payMode: "支付宝",
};

export function OrderInfoPage() {
  const rows: [string, string][] = [
    ["订单号", SAMPLE.id],
    ["商品", SAMPLE.desc],
    ["订单金额", yuan(SAMPLE.orderMoney)],
    ["优惠金额", yuan(SAMPLE.couponDiscount)],
    ["钱包抵扣", yuan(SAMPLE.walletSpend)],
    ["实付金额", yuan(SAMPLE.orderMoney - SAMPLE.couponDiscount - SAMPLE.walletSpend)],
    ["支付方式", SAMPLE.payMode],
    ["增加流量", formatTraffic(SAMPLE.addTraffic)],
    ["状态", ORDER_STATUS_TEXT.paied],
    ["创建时间", SAMPLE.createTime],
  ];
  return (
    <div className="page">
      <h1 className="page-title">订单详情</h1>
      <p className="sample-note" role="note">
        示例页面：以下为静态示例数据，不是您的真实订单。您的订单请在
        <a href="#/order">订单记录</a>中查看。
      </p>
      <section className="card">
        <dl className="order-detail">
          {rows.map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      </section>
    </div>
  );
}
