import { useCallback, useEffect, useState } from "react";
import { useSearch } from "wouter";
import { type Order, OrderMsg } from "../../src/modules/order/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { Pager, usePaged } from "../components/Pager.tsx";
import { Segmented } from "../components/Segmented.tsx";
import {
  canCancel,
  canFeedback,
  filterOrders,
  ORDER_FILTERS,
  type OrderFilter,
  yuan,
} from "../components/shop/format.ts";
import {
  CancelOrderDialog,
  FeedbackDialog,
  OrderDetailDialog,
  StatusBadge,
} from "../components/shop/OrderDialogs.tsx";
import { type Column, Table } from "../components/Table.tsx";
import { TOAST_MEDIUM, TOAST_SHORT, toast } from "../components/Toast.tsx";
import { go } from "../lib/nav.ts";
import { useSession } from "../session.ts";

type OpenDialog = { kind: "detail" | "cancel" | "feedback"; order: Order } | null;

/** `?payment=success` (the gateways' return URL): one purchase-success toast, then the query goes. */
function usePaymentSuccessToast() {
  const search = useSearch();
  useEffect(() => {
    // Both return URLs (ours and the server's fallback) carry the query in the hash.
    if (new URLSearchParams(search).get("payment")?.replace(/\/$/, "") !== "success") return;
    toast.success(OrderMsg.purchaseSuccess, TOAST_MEDIUM);
    go("/order", { replace: true });
  }, [search]);
}

function OrderTable({
  orders,
  onOpen,
}: {
  orders: Order[];
  onOpen: (kind: "detail" | "cancel" | "feedback", order: Order) => void;
}) {
  const { slice, pager } = usePaged(orders);
  const columns: Column<Order>[] = [
    { key: "desc", title: "商品", render: (order) => order.desc },
    // Status early and the actions pinned right, so a phone shows both without scrolling sideways.
    { key: "status", title: "状态", render: (order) => <StatusBadge order={order} /> },
    { key: "money", title: "订单金额", render: (order) => yuan(order.order_money), className: "num" },
    {
      key: "coupon",
      title: "优惠券",
      render: (order) =>
        order.coupon_code ? `${order.coupon_name || order.coupon_code} −${yuan(order.coupon_discount)}` : "—",
    },
    { key: "wallet", title: "钱包抵扣", render: (order) => yuan(order.wallet_spend), className: "num" },
    { key: "time", title: "创建时间", render: (order) => formatDateTime(order.create_time) },
    {
      key: "actions",
      title: "操作",
      className: "order-actions",
      render: (order) => (
        <div className="row-actions">
          <button type="button" className="btn btn-small" onClick={() => onOpen("detail", order)}>
            详情
          </button>
          {canCancel(order.status) ? (
            <button type="button" className="btn btn-small" onClick={() => onOpen("cancel", order)}>
              取消
            </button>
          ) : null}
          {canFeedback(order.status) ? (
            <button type="button" className="btn btn-small" onClick={() => onOpen("feedback", order)}>
              反馈
            </button>
          ) : null}
        </div>
      ),
    },
  ];
  return (
    <>
      <Table columns={columns} rows={slice} rowKey={(order) => order._id} caption="订单列表" />
      <Pager {...pager} />
    </>
  );
}

export function OrderPage() {
  const session = useSession();
  const userId = session.user?._id ?? "";
  const [orders, setOrders] = useState<Order[] | null>(null);
  const [filter, setFilter] = useState<OrderFilter>("all");
  const [dialog, setDialog] = useState<OpenDialog>(null);
  const [busy, setBusy] = useState(false);
  usePaymentSuccessToast();

  const load = useCallback(async () => {
    const answer = await call("/api/order/order_list", {});
    setOrders(answer.code === Code.ok ? answer.data : []);
  }, []);

  useEffect(() => {
    if (userId) void load();
    else setOrders(null);
  }, [userId, load]);

  async function cancel(order: Order) {
    setBusy(true);
    const answer = await call("/api/order/cancel_order", { order_id: order._id });
    setBusy(false);
    setDialog(null);
    if (answer.code === Code.ok) toast.success(OrderMsg.cancelled, TOAST_SHORT);
    // 1026 (already paid or cancelled elsewhere) is ignored silently: the reload shows the truth.
    else if (answer.code !== Code.orderNotCancellable && answer.code !== Code.network)
      toast.error(OrderMsg.cancelFailed, TOAST_SHORT);
    await load();
  }

  async function feedback(order: Order, msg: string) {
    setBusy(true);
    const answer = await call("/api/order/feedback", { order_id: order._id, msg });
    setBusy(false);
    if (answer.code !== Code.ok) {
      if (answer.code !== Code.network) toast.error(OrderMsg.feedbackFailed, TOAST_SHORT);
      return;
    }
    setDialog(null);
    toast.success(OrderMsg.feedbackSent, TOAST_SHORT);
    setOrders((list) => list?.map((o) => (o._id === order._id ? answer.data : o)) ?? null);
  }

  if (!session.ready || (userId && orders === null)) {
    return (
      <div className="page">
        <h1 className="page-title">订单记录</h1>
        <div className="spinner page-spinner" role="status" aria-label="加载中" />
      </div>
    );
  }
  if (!userId) {
    return (
      <div className="page">
        <h1 className="page-title">订单记录</h1>
        <LoginPrompt title="登录后查看订单" note="登录后可查看购买记录、取消未支付的订单或反馈订单问题。" />
      </div>
    );
  }
  const shown = filterOrders(orders ?? [], filter);
  return (
    <div className="page">
      <h1 className="page-title">订单记录</h1>
      <Segmented legend="订单状态" items={ORDER_FILTERS} value={filter} onChange={setFilter} />
      <OrderTable key={filter} orders={shown} onOpen={(kind, order) => setDialog({ kind, order })} />
      {dialog?.kind === "detail" ? (
        <OrderDetailDialog
          order={dialog.order}
          permissions={session.permissions}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog?.kind === "cancel" ? (
        <CancelOrderDialog
          order={dialog.order}
          busy={busy}
          onConfirm={() => void cancel(dialog.order)}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog?.kind === "feedback" ? (
        <FeedbackDialog
          order={dialog.order}
          busy={busy}
          onSubmit={(msg) => void feedback(dialog.order, msg)}
          onClose={() => setDialog(null)}
        />
      ) : null}
    </div>
  );
}
