import { useEffect, useRef } from "react";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { PAY_POLL_MS } from "./format.ts";

/**
 * Asks /api/shop/trade_status every 3 s while `orderId` is set (a payment dialog is open) and
 * calls `onPaid` once when the order is paid. Clearing `orderId` or unmounting stops it.
 */
export function usePaymentPoll(orderId: string | null, onPaid: () => void): void {
  const paid = useRef(onPaid);
  paid.current = onPaid;

  useEffect(() => {
    if (!orderId) return;
    let stopped = false;
    let inFlight = false;
    const timer = setInterval(async () => {
      if (inFlight) return;
      inFlight = true;
      const answer = await call("/api/shop/trade_status", { trade_id: orderId });
      inFlight = false;
      if (stopped || answer.code !== Code.ok || answer.data.status !== "paied") return;
      stopped = true;
      clearInterval(timer);
      paid.current();
    }, PAY_POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [orderId]);
}
