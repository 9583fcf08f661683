import { useId } from "react";
import type { Combo } from "../../../src/modules/combo/schema.ts";
import { comboFacts, yuan } from "./format.ts";

export interface ComboCardProps {
  combo: Combo;
  /** This card's order is being created. */
  busy: boolean;
  /** Another card's order is being created. */
  disabled: boolean;
  onBuy: (combo: Combo) => void;
}

/** One product of the shop: name, bonus, price, what it gives, the buy button. */
export function ComboCard({ combo, busy, disabled, onBuy }: ComboCardProps) {
  const id = useId();
  return (
    <article className="card combo-card" aria-labelledby={id}>
      <div className="combo-head">
        <h3 id={id} className="combo-name">
          {combo.name}
        </h3>
        {combo.additionPersend > 0 ? (
          <span className="badge combo-bonus">赠送{combo.additionPersend}%</span>
        ) : null}
      </div>
      <p className="combo-price">{yuan(combo.price)}</p>
      <dl className="combo-facts">
        {comboFacts(combo).map((fact) => (
          <div key={fact.label} className="combo-fact">
            <dt>{fact.label}</dt>
            <dd>{fact.value}</dd>
          </div>
        ))}
      </dl>
      {combo.permissionsDesc ? <p className="combo-perms">{combo.permissionsDesc}</p> : null}
      <button
        type="button"
        className="btn btn-primary btn-block combo-buy"
        disabled={busy || disabled}
        aria-busy={busy || undefined}
        onClick={() => onBuy(combo)}
      >
        {busy ? "下单中…" : "立即购买"}
      </button>
    </article>
  );
}
