/**
 * Paying one open order (seed 000 §4): the order-confirm dialog, then the pay dialog with its 3 s
 * status poll. The shop opens it after create_order, 订单记录 with 去支付 (issue 26).
 */
import { useCallback, useState } from "react";
import { type Order, OrderMsg, type PayMode, type PayResult } from "../../../src/modules/order/schema.ts";
import { refreshUserInfo } from "../../session.ts";
import { isMobile } from "../platform.ts";
import { TOAST_MEDIUM, TOAST_SHORT, toast } from "../Toast.tsx";
import { type PayDialogKind, payDialogKind } from "./format.ts";
import { OrderConfirmDialog } from "./OrderConfirmDialog.tsx";
import { PayDialog } from "./PayDialogs.tsx";
import { usePayModes } from "./usePayModes.ts";
import { usePaymentPoll } from "./usePaymentPoll.ts";

interface OpenPayment {
  result: PayResult;
  payMode: PayMode;
  kind: PayDialogKind;
  mobile: boolean;
}

export interface CheckoutFlowProps {
  order: Order;
  /** The pay modes when the page has them already; loaded here otherwise. */
  payModes?: PayMode[] | null;
  /** Either dialog was closed before the order was paid. */
  onClose: () => void;
  /** The order is paid: the purchase-success toast is shown and the user info refreshed. */
  onPaid: () => void;
}

export function CheckoutFlow({ order: opened, payModes, onClose, onPaid }: CheckoutFlowProps) {
  const [order, setOrder] = useState(opened);
  const [payment, setPayment] = useState<OpenPayment | null>(null);
  const loadedModes = usePayModes(payModes === undefined);

  const paid = useCallback(() => {
    toast.success(OrderMsg.purchaseSuccess, TOAST_MEDIUM);
    void refreshUserInfo();
    onPaid();
  }, [onPaid]);

  usePaymentPoll(payment ? payment.result._id : null, paid);

  function payResult(result: PayResult, payMode: PayMode) {
    const mobile = isMobile();
    const kind = payDialogKind(result, payMode, mobile);
    if (kind === "paid") paid();
    else if (kind === "none") {
      onClose();
      toast.error(OrderMsg.buyFailed, TOAST_SHORT);
    } else setPayment({ result, payMode, kind, mobile });
  }

  if (payment) {
    return (
      <PayDialog
        kind={payment.kind}
        result={payment.result}
        payMode={payment.payMode}
        mobile={payment.mobile}
        onClose={onClose}
      />
    );
  }
  return (
    <OrderConfirmDialog
      order={order}
      payModes={payModes === undefined ? loadedModes : payModes}
      onOrderChange={setOrder}
      onClose={onClose}
      onPayResult={payResult}
    />
  );
}
