import { useEffect, useState } from "react";
import type { PayMode } from "../../../src/modules/order/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";

/** The pay modes the server offers (/api/shop/pay_modes); null while loading or when `load` is false. */
export function usePayModes(load = true): PayMode[] | null {
  const [payModes, setPayModes] = useState<PayMode[] | null>(null);
  useEffect(() => {
    if (!load) return;
    let live = true;
    void call("/api/shop/pay_modes", {}).then((answer) => {
      if (live) setPayModes(answer.code === Code.ok ? answer.data : []);
    });
    return () => {
      live = false;
    };
  }, [load]);
  return payModes;
}
