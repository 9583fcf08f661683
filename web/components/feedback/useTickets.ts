import { useCallback, useEffect, useRef, useState } from "react";
import { TICKET_POLL_MS, type Ticket } from "../../../src/modules/feedback/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";

/** The open ticket: loading, not visible to this user (or gone), or the ticket. */
export type OpenTicket = { state: "loading" } | { state: "missing" } | { state: "ok"; ticket: Ticket };

export interface TicketsState {
  /** null while the first list is loading. */
  tickets: Ticket[] | null;
  open: OpenTicket | null;
  /** Puts a ticket the server just answered with into the list and the open view. */
  update(ticket: Ticket): void;
  reload(): Promise<void>;
}

/**
 * The user's tickets (an admin's: everyone's) and the one in the URL (`openId`), polled every 30 s
 * with /api/feedback/my_list and /api/feedback/refresh (seed 000 §7, §9) while the page is shown;
 * leaving the page stops the poll.
 */
export function useTickets(userId: string, openId: string): TicketsState {
  const [tickets, setTickets] = useState<Ticket[] | null>(null);
  const [open, setOpen] = useState<OpenTicket | null>(null);
  const openIdRef = useRef(openId);
  openIdRef.current = openId;

  const loadList = useCallback(async () => {
    const answer = await call("/api/feedback/my_list", {});
    if (answer.code === Code.ok) setTickets(answer.data);
    else setTickets((current) => current ?? []);
  }, []);

  const loadOpen = useCallback(async () => {
    const id = openIdRef.current;
    if (!id) return;
    const answer = await call("/api/feedback/refresh", { id });
    // An answer for a ticket no longer open in the URL is dropped.
    if (openIdRef.current !== id) return;
    if (answer.code === Code.ok) setOpen({ state: "ok", ticket: answer.data });
    else if (answer.code === Code.notFound || answer.code === Code.badInput) setOpen({ state: "missing" });
  }, []);

  useEffect(() => {
    setTickets(null);
    if (!userId) return;
    void loadList();
    const timer = setInterval(() => {
      void loadList();
      void loadOpen();
    }, TICKET_POLL_MS);
    return () => clearInterval(timer);
  }, [userId, loadList, loadOpen]);

  useEffect(() => {
    if (!openId || !userId) {
      setOpen(null);
      return;
    }
    setOpen({ state: "loading" });
    void loadOpen();
  }, [openId, userId, loadOpen]);

  const update = useCallback((ticket: Ticket) => {
    setTickets((list) => {
      const others = (list ?? []).filter((t) => t._id !== ticket._id);
      return [ticket, ...others].sort((a, b) => b.updateTime - a.updateTime);
    });
    if (openIdRef.current === ticket._id) setOpen({ state: "ok", ticket });
  }, []);

  const reload = useCallback(async () => {
    await Promise.all([loadList(), loadOpen()]);
  }, [loadList, loadOpen]);

  return { tickets, open, update, reload };
}
