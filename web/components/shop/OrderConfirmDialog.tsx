/** Seed 000 §4 payment flow after create_order: optional coupon, pay mode, wallet check, buy. */
import { type FormEvent, useEffect, useState } from "react";
import {
  type Order,
  OrderMsg,
  PAY_MODE_TEXT,
  type PayMode,
  type PayResult,
} from "../../../src/modules/order/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { Dialog } from "../Dialog.tsx";
import { isMobile } from "../platform.ts";
import { TOAST_SHORT, toast } from "../Toast.tsx";
import { buyErrorText, couponErrorText, yuan } from "./format.ts";

export interface OrderConfirmDialogProps {
  order: Order;
  /** Pay modes the server offers; null while loading. */
  payModes: PayMode[] | null;
  onOrderChange: (order: Order) => void;
  onClose: () => void;
  onPayResult: (result: PayResult, payMode: PayMode) => void;
}

/** Where the gateway sends the customer back to (the order page shows the success toast). */
export const returnUrl = () => `${location.origin}/#/order?payment=success`;

const fail = (code: number, msg: string) => {
  if (code !== Code.network) toast.error(msg, TOAST_SHORT);
};

function CouponField({ order, onOrderChange }: { order: Order; onOrderChange: (order: Order) => void }) {
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const locked = order.status !== "topay";

  async function use(event: FormEvent) {
    event.preventDefault();
    const trimmed = code.trim();
    if (trimmed === "") {
      toast.error(OrderMsg.couponEmpty, TOAST_SHORT);
      return;
    }
    setBusy(true);
    const answer = await call("/api/coupon/orderUseCoupon", { order_id: order._id, code: trimmed });
    setBusy(false);
    if (answer.code !== Code.ok) {
      setCode("");
      fail(answer.code, couponErrorText(answer.code));
      return;
    }
    setCode("");
    onOrderChange(answer.data);
    toast.success(OrderMsg.couponApplied, TOAST_SHORT);
  }

  async function cancel() {
    setBusy(true);
    const answer = await call("/api/coupon/orderCancleCoupon", { order_id: order._id });
    setBusy(false);
    if (answer.code !== Code.ok) {
      fail(answer.code, OrderMsg.cancelCouponFailed);
      return;
    }
    onOrderChange(answer.data);
    toast.success(OrderMsg.couponCancelled, TOAST_SHORT);
  }

  if (order.coupon_code) {
    return (
      <div className="order-coupon-applied">
        <span>
          优惠券 <strong>{order.coupon_name || order.coupon_code}</strong>（{order.coupon_code}）已抵扣{" "}
          {yuan(order.coupon_discount)}
        </span>
        {locked ? null : (
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => void cancel()}>
            取消
          </button>
        )}
      </div>
    );
  }
  return (
    <form className="field" onSubmit={use} noValidate>
      <label className="field-label" htmlFor={`coupon-${order._id}`}>
        优惠券
      </label>
      <div className="field-row">
        <input
          id={`coupon-${order._id}`}
          className="input"
          name="coupon"
          autoComplete="off"
          placeholder={locked ? "该订单已使用钱包抵扣，不能再使用优惠券" : "输入优惠券码（可选）"}
          value={code}
          disabled={locked || busy}
          onChange={(event) => setCode(event.target.value)}
        />
        <button type="submit" className="btn" disabled={locked || busy}>
          使用
        </button>
      </div>
    </form>
  );
}

function PayModeChoice({
  payModes,
  value,
  onChange,
}: {
  payModes: PayMode[] | null;
  value: PayMode | null;
  onChange: (mode: PayMode) => void;
}) {
  if (payModes === null) return <div className="spinner pay-spinner" role="status" aria-label="加载中" />;
  if (payModes.length === 0) {
    return (
      <p className="pay-none" role="alert">
        {OrderMsg.noPayModes}
      </p>
    );
  }
  return (
    <fieldset className="pay-modes">
      <legend className="field-label">支付方式</legend>
      <div className="pay-mode-list">
        {payModes.map((mode) => (
          <label key={mode} className={`pay-mode pay-mode-${mode}${value === mode ? " pay-mode-on" : ""}`}>
            <input
              type="radio"
              name="pay_mode"
              value={mode}
              checked={value === mode}
              onChange={() => onChange(mode)}
            />
            <span>{PAY_MODE_TEXT[mode]}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

export function OrderConfirmDialog({
  order,
  payModes,
  onOrderChange,
  onClose,
  onPayResult,
}: OrderConfirmDialogProps) {
  const [payMode, setPayMode] = useState<PayMode | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (payModes && payModes.length > 0 && (payMode === null || !payModes.includes(payMode))) {
      setPayMode(payModes[0] as PayMode);
    }
  }, [payModes, payMode]);

  // Nothing left to pay online (coupon or wallet covers it): the server settles it whatever the mode.
  const free = order.pay_money <= 0;
  const mode: PayMode | null = payMode ?? (free ? "alipay" : null);

  async function confirm() {
    if (!mode || busy) return;
    setBusy(true);
    const checked = await call("/api/shop/wallet_check", { order_id: order._id });
    if (checked.code !== Code.ok) {
      setBusy(false);
      fail(checked.code, OrderMsg.walletCheckFailed);
      return;
    }
    onOrderChange(checked.data);
    const bought = await call("/api/shop/dobuy", {
      order_id: order._id,
      pay_mode: mode,
      isMobile: isMobile(),
      return_url: returnUrl(),
    });
    setBusy(false);
    if (bought.code !== Code.ok) {
      fail(bought.code, buyErrorText(bought.code));
      return;
    }
    onPayResult(bought.data, mode);
  }

  return (
    <Dialog
      open
      onClose={onClose}
      title="确认订单"
      closeOnBackdrop={false}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            返回
          </button>
          <button
            type="button"
            className="btn btn-primary"
            disabled={busy || !mode}
            aria-busy={busy || undefined}
            onClick={() => void confirm()}
          >
            {busy ? "处理中…" : "确认支付"}
          </button>
        </>
      }
    >
      <div className="order-confirm">
        <dl className="order-lines">
          <div>
            <dt>商品</dt>
            <dd>{order.desc}</dd>
          </div>
          <div>
            <dt>价格</dt>
            <dd>{yuan(order.order_money)}</dd>
          </div>
          {order.coupon_discount > 0 ? (
            <div>
              <dt>优惠券抵扣</dt>
              <dd>−{yuan(order.coupon_discount)}</dd>
            </div>
          ) : null}
          {order.wallet_spend > 0 ? (
            <div>
              <dt>钱包抵扣</dt>
              <dd>−{yuan(order.wallet_spend)}</dd>
            </div>
          ) : null}
        </dl>
        <CouponField order={order} onOrderChange={onOrderChange} />
        {free ? null : <PayModeChoice payModes={payModes} value={payMode} onChange={setPayMode} />}
        <p className="order-due">
          应付金额 <strong>{yuan(order.pay_money)}</strong>
        </p>
        <p className="card-note">钱包有余额时将优先抵扣，剩余部分在线支付。</p>
      </div>
    </Dialog>
  );
}
