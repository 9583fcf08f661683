/** The order page's dialogs: detail, cancel confirmation, feedback (seed 000 §2 Orders). */
import { type FormEvent, type ReactNode, useState } from "react";
import { formatTraffic } from "../../../src/lib/traffic.ts";
import {
  ORDER_FEEDBACK_MAX,
  ORDER_STATUS_TEXT,
  type Order,
  OrderMsg,
  payModeText,
} from "../../../src/modules/order/schema.ts";
import type { PermissionGrant } from "../../../src/modules/user/schema.ts";
import { Dialog } from "../Dialog.tsx";
import { formatDateTime } from "../format.ts";
import { yuan } from "./format.ts";

const COUPON_TYPE_TEXT: Record<string, string> = { cash: "现金券", discount: "折扣券" };

export function StatusBadge({ order }: { order: Order }) {
  return (
    <span className={`badge order-status order-status-${order.status}`}>
      {ORDER_STATUS_TEXT[order.status]}
    </span>
  );
}

/** Every field of the order, with permission names where the user holds them. */
function detailRows(order: Order, permissions: readonly PermissionGrant[]): [string, ReactNode][] {
  const permissionNames = order.gainPermission.map(
    (id) => permissions.find((grant) => grant.id === id)?.name || id,
  );
  return [
    ["订单号", <code key="id">{order._id}</code>],
    ["商品", order.desc],
    ["订单金额", yuan(order.order_money)],
    ["优惠券", order.coupon_code ? `${order.coupon_name || order.coupon_code}（${order.coupon_code}）` : "—"],
    ["优惠券类型", order.couponType ? (COUPON_TYPE_TEXT[order.couponType] ?? order.couponType) : "—"],
    ["优惠金额", yuan(order.coupon_discount)],
    ["钱包抵扣", yuan(order.wallet_spend)],
    ["在线支付", yuan(order.pay_money)],
    ["支付方式", payModeText(order.pay_mode) || "—"],
    ["状态", <StatusBadge key="status" order={order} />],
    ["创建时间", formatDateTime(order.create_time)],
    ["支付时间", order.pay_time ? formatDateTime(order.pay_time) : "—"],
    ["增加流量", formatTraffic(order.add_traffic)],
    ["增加天数", `${order.add_vip_duration} 天`],
    ["获得权限", permissionNames.length > 0 ? permissionNames.join("、") : "—"],
    ["权限有效期", order.gainPermission.length > 0 ? `${order.permissionDuration} 天` : "—"],
    ["反馈", order.user_feedback || "—"],
  ];
}

export function OrderDetailDialog({
  order,
  permissions,
  onClose,
}: {
  order: Order;
  permissions: readonly PermissionGrant[];
  onClose: () => void;
}) {
  return (
    <Dialog
      open
      onClose={onClose}
      title="订单详情"
      footer={
        <button type="button" className="btn" onClick={onClose}>
          关闭
        </button>
      }
    >
      <dl className="order-detail">
        {detailRows(order, permissions).map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </Dialog>
  );
}

export function CancelOrderDialog({
  order,
  busy,
  onConfirm,
  onClose,
}: {
  order: Order;
  busy: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Dialog
      open
      onClose={onClose}
      title="取消订单"
      size="sm"
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            返回
          </button>
          <button type="button" className="btn btn-primary" disabled={busy} onClick={onConfirm}>
            确定取消
          </button>
        </>
      }
    >
      <p>
        订单「{order.desc}」：{OrderMsg.cancelConfirm}
      </p>
    </Dialog>
  );
}

/** Seed 000 §5: required, at most 30 characters (counted as the server counts); the hint is also the validation text. */
export function validateFeedback(msg: string): string | undefined {
  const trimmed = msg.trim();
  return trimmed === "" || trimmed.length > ORDER_FEEDBACK_MAX ? OrderMsg.feedbackHint : undefined;
}

export function FeedbackDialog({
  order,
  busy,
  onSubmit,
  onClose,
}: {
  order: Order;
  busy: boolean;
  onSubmit: (msg: string) => void;
  onClose: () => void;
}) {
  const [msg, setMsg] = useState(order.user_feedback);
  const [error, setError] = useState<string | undefined>();
  const length = msg.trim().length;

  function submit(event?: FormEvent) {
    event?.preventDefault();
    const invalid = validateFeedback(msg);
    setError(invalid);
    if (!invalid) onSubmit(msg.trim());
  }

  return (
    <Dialog
      open
      onClose={onClose}
      title="订单反馈"
      size="sm"
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            取消
          </button>
          <button type="button" className="btn btn-primary" disabled={busy} onClick={() => submit()}>
            提交
          </button>
        </>
      }
    >
      <form className="form" onSubmit={submit} noValidate>
        <p className="card-note">订单：{order.desc}</p>
        <div className={`field${error ? " field-invalid" : ""}`}>
          <label className="field-label" htmlFor={`feedback-${order._id}`}>
            反馈内容
          </label>
          <textarea
            id={`feedback-${order._id}`}
            className="input feedback-input"
            rows={3}
            placeholder={OrderMsg.feedbackHint}
            value={msg}
            aria-invalid={error ? true : undefined}
            aria-describedby={`feedback-${order._id}-hint`}
            data-autofocus
            onChange={(event) => setMsg(event.target.value)}
          />
          <p id={`feedback-${order._id}-hint`} className={error ? "field-error" : "card-note"}>
            {error ?? OrderMsg.feedbackHint}（{length}/{ORDER_FEEDBACK_MAX}）
          </p>
        </div>
      </form>
    </Dialog>
  );
}
