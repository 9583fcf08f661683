import { useCallback, useEffect, useRef, useState } from "react";
import { useSearch } from "wouter";
import { type Order, OrderMsg } from "../../src/modules/order/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { DEFAULT_PAGE_SIZE, Pager, type PagerProps } from "../components/Pager.tsx";
import { Segmented } from "../components/Segmented.tsx";
import { CheckoutFlow } from "../components/shop/CheckoutFlow.tsx";
import {
  canCancel,
  canFeedback,
  canPay,
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
import { type Column, EMPTY_TEXT, Table } from "../components/Table.tsx";
import { TOAST_MEDIUM, TOAST_SHORT, toast } from "../components/Toast.tsx";
import { go } from "../lib/nav.ts";
import { useMediaQuery } from "../lib/useMediaQuery.ts";
import { useSession } from "../session.ts";

type DialogKind = "pay" | "detail" | "cancel" | "feedback";
type OpenDialog = { kind: DialogKind; order: Order } | null;
type OnOpen = (kind: DialogKind, order: Order) => void;

/** Below this width the orders are cards: a table with a pinned 操作 column covered 订单金额 (issue 26). */
const CARDS_QUERY = "(max-width: 1023px)";

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

/** 去支付 for an unpaid order (the shop's confirm and pay dialogs again), then the seed's actions. */
function OrderActions({ order, onOpen }: { order: Order; onOpen: OnOpen }) {
  return (
    <div className="row-actions">
      {canPay(order.status) ? (
        <button type="button" className="btn btn-small btn-primary" onClick={() => onOpen("pay", order)}>
          去支付
        </button>
      ) : null}
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
  );
}

const couponText = (order: Order) =>
  order.coupon_code ? `${order.coupon_name || order.coupon_code} −${yuan(order.coupon_discount)}` : "—";

function OrderTable({ orders, onOpen }: { orders: readonly Order[]; onOpen: OnOpen }) {
  const columns: Column<Order>[] = [
    { key: "desc", title: "商品", render: (order) => order.desc, className: "order-desc" },
    { key: "status", title: "状态", render: (order) => <StatusBadge order={order} /> },
    { key: "money", title: "订单金额", render: (order) => yuan(order.order_money), className: "num" },
    { key: "coupon", title: "优惠券", render: couponText },
    { key: "wallet", title: "钱包抵扣", render: (order) => yuan(order.wallet_spend), className: "num" },
    { key: "time", title: "创建时间", render: (order) => formatDateTime(order.create_time) },
    // Pinned right, so the actions stay in view when a narrow window scrolls the table sideways.
    {
      key: "actions",
      title: "操作",
      className: "order-actions",
      render: (order) => <OrderActions order={order} onOpen={onOpen} />,
    },
  ];
  return <Table columns={columns} rows={orders} rowKey={(order) => order._id} caption="订单列表" />;
}

/** On a phone: one card per order, every figure on its own line and the actions below. */
function OrderCards({ orders, onOpen }: { orders: readonly Order[]; onOpen: OnOpen }) {
  if (orders.length === 0) return <p className="card order-cards-empty">{EMPTY_TEXT}</p>;
  return (
    <ul className="order-cards" aria-label="订单列表">
      {orders.map((order) => (
        <li key={order._id} className="card order-card">
          <div className="order-card-head">
            <strong className="order-card-title">{order.desc}</strong>
            <StatusBadge order={order} />
          </div>
          <dl className="order-lines">
            <div>
              <dt>订单金额</dt>
              <dd>{yuan(order.order_money)}</dd>
            </div>
            {order.coupon_code ? (
              <div>
                <dt>优惠券</dt>
                <dd>{couponText(order)}</dd>
              </div>
            ) : null}
            {order.wallet_spend > 0 ? (
              <div>
                <dt>钱包抵扣</dt>
                <dd>{yuan(order.wallet_spend)}</dd>
              </div>
            ) : null}
            <div>
              <dt>创建时间</dt>
              <dd>{formatDateTime(order.create_time)}</dd>
            </div>
          </dl>
          <OrderActions order={order} onOpen={onOpen} />
        </li>
      ))}
    </ul>
  );
}

/** One page of orders, paged on the server (issue 31: a long history is not sent whole). */
function OrderList({ orders, pager, onOpen }: { orders: Order[]; pager: PagerProps; onOpen: OnOpen }) {
  const cards = useMediaQuery(CARDS_QUERY);
  return (
    <>
      {cards ? (
        <OrderCards orders={orders} onOpen={onOpen} />
      ) : (
        <OrderTable orders={orders} onOpen={onOpen} />
      )}
      <Pager {...pager} />
    </>
  );
}

export function OrderPage() {
  const session = useSession();
  const userId = session.user?._id ?? "";
  const [orders, setOrders] = useState<Order[] | null>(null);
  const [total, setTotal] = useState(0);
  const [filter, setFilter] = useState<OrderFilter>("all");
  const [paging, setPaging] = useState({ page: 1, pageSize: DEFAULT_PAGE_SIZE });
  const [dialog, setDialog] = useState<OpenDialog>(null);
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);
  usePaymentSuccessToast();

  const load = useCallback(async () => {
    const asked = ++latest.current;
    const answer = await call("/api/order/order_list", { filter, ...paging });
    if (asked !== latest.current) return; // a later page or filter was asked for meanwhile
    if (answer.code !== Code.ok) {
      setOrders([]);
      setTotal(0);
      return;
    }
    setOrders(answer.data.orders);
    setTotal(answer.data.total);
    // Past the end (orders cancelled meanwhile): the server answered the last page.
    if (answer.data.page !== paging.page) setPaging((current) => ({ ...current, page: answer.data.page }));
  }, [filter, paging]);

  useEffect(() => {
    if (userId) void load();
    else setOrders(null);
  }, [userId, load]);

  // Stays on 订单记录: the list shows the order as 成功 (the shop goes home instead, seed 000 §9).
  const paid = useCallback(() => {
    setDialog(null);
    void load();
  }, [load]);

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
        <LoginPrompt
          title="登录后查看订单"
          note="登录后可查看购买记录、支付或取消未支付的订单、反馈订单问题。"
        />
      </div>
    );
  }
  const pager: PagerProps = {
    total,
    ...paging,
    onChange: (page, pageSize) => setPaging({ page, pageSize }),
  };
  return (
    <div className="page">
      <h1 className="page-title">订单记录</h1>
      <Segmented
        legend="订单状态"
        items={ORDER_FILTERS}
        value={filter}
        onChange={(next) => {
          setFilter(next);
          setPaging((current) => ({ ...current, page: 1 }));
        }}
      />
      <OrderList orders={orders ?? []} pager={pager} onOpen={(kind, order) => setDialog({ kind, order })} />
      {dialog?.kind === "pay" ? (
        <CheckoutFlow
          order={dialog.order}
          onClose={() => {
            setDialog(null);
            void load(); // a coupon or the wallet may have changed the order
          }}
          onPaid={paid}
        />
      ) : null}
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
