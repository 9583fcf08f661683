import { useSyncExternalStore } from "react";
import { go } from "../../lib/nav.ts";
import { hashPathAndQuery } from "../../lib/query.ts";

function subscribe(onChange: () => void) {
  addEventListener("hashchange", onChange);
  addEventListener("popstate", onChange);
  return () => {
    removeEventListener("hashchange", onChange);
    removeEventListener("popstate", onChange);
  };
}

/** Opens a ticket (or the list, with ""): `#/feedback?id=…`, where the bell's notices point. */
export function openTicket(id: string) {
  go(id ? `/feedback?id=${encodeURIComponent(id)}` : "/feedback");
}

/** The id of the ticket open in the URL, "" for none. */
export function useOpenTicketId(): string {
  const hash = useSyncExternalStore(subscribe, () => location.hash);
  return (hashPathAndQuery(hash).query.get("id") ?? "").replace(/\/$/, "");
}
