import { useCallback, useEffect, useRef, useState } from "react";
import type { Combo } from "../../src/modules/combo/schema.ts";
import { type Order, OrderMsg } from "../../src/modules/order/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { requireLogin } from "../components/requireLogin.ts";
import { CheckoutFlow } from "../components/shop/CheckoutFlow.tsx";
import { ComboCard } from "../components/shop/ComboCard.tsx";
import { HOME_AFTER_PAID_MS, splitCombos } from "../components/shop/format.ts";
import { usePayModes } from "../components/shop/usePayModes.ts";
import { TOAST_SHORT, toast } from "../components/Toast.tsx";
import { go } from "../lib/nav.ts";
import { isAgency, useSession } from "../session.ts";

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
  const payModes = usePayModes();
  const [creating, setCreating] = useState<string | null>(null);
  const [order, setOrder] = useState<Order | null>(null);
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

  useEffect(() => () => clearTimeout(homeTimer.current), []);

  // Seed 000 §9: home 5 s after the purchase-success toast.
  const paid = useCallback(() => {
    setOrder(null);
    clearTimeout(homeTimer.current);
    homeTimer.current = setTimeout(() => go("/"), HOME_AFTER_PAID_MS);
  }, []);

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
        <CheckoutFlow
          key={order._id}
          order={order}
          payModes={payModes}
          onClose={() => setOrder(null)}
          onPaid={paid}
        />
      ) : null}
    </div>
  );
}
