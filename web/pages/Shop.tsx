import { useCallback, useEffect, useRef, useState } from "react";
import type { Combo } from "../../src/modules/combo/schema.ts";
import { type Order, OrderMsg, type PayMode, type PayResult } from "../../src/modules/order/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { isMobile } from "../components/platform.ts";
import { requireLogin } from "../components/requireLogin.ts";
import { ComboCard } from "../components/shop/ComboCard.tsx";
import {
  HOME_AFTER_PAID_MS,
  type PayDialogKind,
  payDialogKind,
  splitCombos,
} from "../components/shop/format.ts";
import { OrderConfirmDialog } from "../components/shop/OrderConfirmDialog.tsx";
import { PayDialog } from "../components/shop/PayDialogs.tsx";
import { usePaymentPoll } from "../components/shop/usePaymentPoll.ts";
import { TOAST_MEDIUM, TOAST_SHORT, toast } from "../components/Toast.tsx";
import { go } from "../lib/nav.ts";
import { isAgency, refreshUserInfo, useSession } from "../session.ts";

interface OpenPayment {
  result: PayResult;
  payMode: PayMode;
  kind: PayDialogKind;
  mobile: boolean;
}

function ComboSection({
  id,
  title,
  note,
  combos,
  creating,
  onBuy,
}: {
  id: string;
  title: string;
  note: string;
  combos: Combo[];
  creating: string | null;
  onBuy: (combo: Combo) => void;
}) {
  if (combos.length === 0) return null;
  return (
    <section className="shop-section" aria-labelledby={id}>
      <div className="shop-section-head">
        <h2 id={id} className="shop-section-title">
          {title}
        </h2>
        <span className="card-note">{note}</span>
      </div>
      <div className="shop-grid">
        {combos.map((combo) => (
          <ComboCard
            key={combo._id}
            combo={combo}
            busy={creating === combo._id}
            disabled={creating !== null && creating !== combo._id}
            onBuy={onBuy}
          />
        ))}
      </div>
    </section>
  );
}

export function ShopPage() {
  const session = useSession();
  const agency = isAgency(session);
  const userId = session.user?._id ?? "";
  const [combos, setCombos] = useState<Combo[] | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);
  const [payModes, setPayModes] = useState<PayMode[] | null>(null);
  const [creating, setCreating] = useState<string | null>(null);
  const [order, setOrder] = useState<Order | null>(null);
  const [payment, setPayment] = useState<OpenPayment | null>(null);
  const homeTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // Seed 000 §2: agency users have no shop.
  useEffect(() => {
    if (agency) go("/", { replace: true });
  }, [agency]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the server filters by who asks (channel code), so a login or logout reloads
  useEffect(() => {
    if (!session.ready) return;
    let live = true;
    setLoadFailed(false);
    void call("/api/shop/list", {}).then((answer) => {
      if (!live) return;
      if (answer.code === Code.ok) setCombos(answer.data);
      else {
        setCombos([]);
        setLoadFailed(true);
      }
    });
    return () => {
      live = false;
    };
  }, [session.ready, userId]);

  useEffect(() => {
    let live = true;
    void call("/api/shop/pay_modes", {}).then((answer) => {
      if (live) setPayModes(answer.code === Code.ok ? answer.data : []);
    });
    return () => {
      live = false;
    };
  }, []);

  useEffect(() => () => clearTimeout(homeTimer.current), []);

  const paid = useCallback(() => {
    setPayment(null);
    setOrder(null);
    toast.success(OrderMsg.purchaseSuccess, TOAST_MEDIUM);
    void refreshUserInfo();
    clearTimeout(homeTimer.current);
    homeTimer.current = setTimeout(() => go("/"), HOME_AFTER_PAID_MS);
  }, []);

  usePaymentPoll(payment ? payment.result._id : null, paid);

  async function buy(combo: Combo) {
    if (creating || !requireLogin()) return;
    setCreating(combo._id);
    const answer = await call("/api/shop/create_order", { combo_id: combo._id });
    setCreating(null);
    if (answer.code !== Code.ok) {
      // Nobody could pay it (no pay mode, and the wallet does not cover it): the server made no order.
      if (answer.msg === OrderMsg.noPayModes) toast.error(OrderMsg.noPayModes, TOAST_SHORT);
      else if (answer.code !== Code.network)
        toast.error(`${OrderMsg.createFailed}${answer.msg}`, TOAST_SHORT);
      return;
    }
    setOrder(answer.data);
  }

  function payResult(result: PayResult, payMode: PayMode) {
    const mobile = isMobile();
    const kind = payDialogKind(result, payMode, mobile);
    setOrder(null);
    if (kind === "paid") paid();
    else if (kind === "none") toast.error(OrderMsg.buyFailed, TOAST_SHORT);
    else setPayment({ result, payMode, kind, mobile });
  }

  if (agency) return <div className="page" />;
  const groups = splitCombos(combos ?? []);
  return (
    <div className="page">
      <h1 className="page-title">商店</h1>
      <p className="page-subtitle">流量套餐按量使用、永不过期；时间套餐在有效期内每天享有流量额度。</p>
      {payModes?.length === 0 && (combos?.length ?? 0) > 0 ? (
        <p className="pay-none" role="alert">
          {OrderMsg.noPayModes}
        </p>
      ) : null}
      {combos === null ? (
        <div className="spinner page-spinner" role="status" aria-label="加载中" />
      ) : combos.length === 0 ? (
        <section className="card shop-empty">
          <p>{loadFailed ? OrderMsg.loadFailed : "暂无可购买的套餐"}</p>
        </section>
      ) : (
        <>
          <ComboSection
            id="shop-traffic"
            title="流量套餐"
            note="按量付费，流量永不过期"
            combos={groups.traffic}
            creating={creating}
            onBuy={(combo) => void buy(combo)}
          />
          <ComboSection
            id="shop-time"
            title="时间套餐"
            note="有效期内每日享有流量额度，优先于不限时流量使用"
            combos={groups.time}
            creating={creating}
            onBuy={(combo) => void buy(combo)}
          />
        </>
      )}
      {order ? (
        <OrderConfirmDialog
          order={order}
          payModes={payModes}
          onOrderChange={setOrder}
          onClose={() => setOrder(null)}
          onPayResult={payResult}
        />
      ) : null}
      {payment ? (
        <PayDialog
          kind={payment.kind}
          result={payment.result}
          payMode={payment.payMode}
          mobile={payment.mobile}
          onClose={() => setPayment(null)}
        />
      ) : null}
    </div>
  );
}
