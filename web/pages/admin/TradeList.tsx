/** /admin_tradeList (seed 001 §2.6): every order with its latest payment attempt, and the order detail. */
import { type FormEvent, useEffect, useState } from "react";
import { formatYuan, yuanToFen } from "../../../src/lib/money.ts";
import { formatGB } from "../../../src/lib/traffic.ts";
import {
  ORDER_STATUS_TEXT,
  type OrderDetail,
  payModeText,
  type Trade,
} from "../../../src/modules/order/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable, LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { SearchButton, useWholeNumber } from "../../components/admin/filters.tsx";
import { NumberField } from "../../components/admin/numbers.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { Field } from "../../components/Field.tsx";
import { formatDateTime } from "../../components/format.ts";
import type { Column } from "../../components/Table.tsx";

/** Seed 001 §9: the trade list asks for the latest 100 by default. */
export const DEFAULT_TRADE_COUNT = 100;

interface TradeQuery {
  requestNumber: number;
  filterStr: string;
}

const yuan = (value: number) => formatYuan(yuanToFen(value));
const orDash = (text: string) => text || "-";

function StatusBadge({ status }: { status: Trade["status"] }) {
  const tone =
    status === "paied" ? "admin-status-ok" : status === "cancled" ? "admin-status-off" : "admin-status-wait";
  return <span className={`badge ${tone}`}>{ORDER_STATUS_TEXT[status] ?? status}</span>;
}

function OrderDetailDialog({ trade, onClose }: { trade: Trade | null; onClose: () => void }) {
  const orderId = trade?.order_id ?? "";
  const [detail, setDetail] = useState<{ orderId: string; data: OrderDetail | null } | null>(null);

  useEffect(() => {
    if (!orderId) return;
    let current = true;
    setDetail(null);
    void call("/api/admin/trades/get_order_for_trade", { order_id: orderId }).then((answer) => {
      if (current) setDetail({ orderId, data: answer.code === Code.ok ? answer.data : null });
    });
    return () => {
      current = false;
    };
  }, [orderId]);

  const answered = detail !== null && detail.orderId === orderId;
  const data = answered ? detail.data : null;
  const failed = answered && data === null;
  return (
    <Dialog open={trade !== null} onClose={onClose} title="订单详情" size="sm">
      {failed ? (
        <p className="admin-hint">订单详情加载失败</p>
      ) : data ? (
        <dl className="admin-details">
          <dt>描述</dt>
          <dd>{data.desc}</dd>
          <dt>订单金额</dt>
          <dd>{yuan(data.order_money)} 元</dd>
          <dt>优惠券</dt>
          <dd>{orDash(data.coupon_name)}</dd>
          <dt>优惠金额</dt>
          <dd>{yuan(data.coupon_discount)} 元</dd>
          <dt>钱包抵扣</dt>
          <dd>{yuan(data.wallet_spend)} 元</dd>
          <dt>状态</dt>
          <dd>
            <StatusBadge status={data.status} />
          </dd>
          <dt>创建时间</dt>
          <dd>{formatDateTime(data.create_time)}</dd>
          <dt>用户反馈</dt>
          <dd>{orDash(data.user_feedback)}</dd>
        </dl>
      ) : (
        <LoadingSpinner />
      )}
    </Dialog>
  );
}

export function AdminTradeListPage() {
  const count = useWholeNumber(DEFAULT_TRADE_COUNT);
  const [filter, setFilter] = useState("");
  const list = useRemoteList((query: TradeQuery) => call("/api/admin/trades/tradelist", query), {
    requestNumber: DEFAULT_TRADE_COUNT,
    filterStr: "",
  });
  const [open, setOpen] = useState<Trade | null>(null);

  const search = (event: FormEvent) => {
    event.preventDefault();
    const requestNumber = count.read();
    if (requestNumber === undefined) return;
    void list.reload({ requestNumber, filterStr: filter.trim() });
  };

  const columns: Column<Trade>[] = [
    { key: "user", title: "用户", render: (row) => row.username },
    { key: "desc", title: "商品", render: (row) => row.desc },
    {
      key: "tradeno",
      title: "交易号",
      render: (row) => <code className="admin-id">{orDash(row.tradeno)}</code>,
    },
    { key: "channel", title: "渠道", render: (row) => orDash(row.fromChannel) },
    {
      key: "amount",
      title: "金额(元)",
      render: (row) => yuan(row.request_pay_amound),
      className: "admin-num",
    },
    { key: "reward", title: "返利(元)", render: (row) => yuan(row.rewardMoney), className: "admin-num" },
    {
      key: "mode",
      title: "支付方式",
      render: (row) => orDash(payModeText(row.pay_mode)),
    },
    { key: "device", title: "设备", render: (row) => orDash(row.device) },
    { key: "platform", title: "第三方支付", render: (row) => orDash(row.third_pay_platform) },
    { key: "status", title: "状态", render: (row) => <StatusBadge status={row.status} /> },
    { key: "created", title: "创建时间", render: (row) => formatDateTime(row.create_time) },
    {
      key: "traffic",
      title: "增加流量(G)",
      render: (row) => formatGB(row.add_traffic),
      className: "admin-num",
    },
    { key: "days", title: "增加时长(天)", render: (row) => row.add_vip_duration, className: "admin-num" },
    {
      key: "actions",
      title: "操作",
      className: "admin-sticky-actions",
      render: (row) => (
        <button type="button" className="btn btn-small" onClick={() => setOpen(row)}>
          详情
        </button>
      ),
    },
  ];

  return (
    <AdminPage title="交易流水管理">
      <form className="admin-filter" onSubmit={search}>
        <NumberField label="数量" {...count.field} />
        <Field
          label="筛选"
          placeholder="邮箱、商品、订单号、交易号或渠道"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
        />
        <SearchButton list={list} />
      </form>
      <AdminTable list={list} columns={columns} rowKey={(row) => row.order_id} caption="交易列表" />
      <OrderDetailDialog trade={open} onClose={() => setOpen(null)} />
    </AdminPage>
  );
}
