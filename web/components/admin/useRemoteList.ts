import { useCallback, useEffect, useRef, useState } from "react";
import { Code } from "../../../src/rpc/codes.ts";
import type { Answer } from "../../api.ts";

export interface RemoteList<T, Q = undefined> {
  rows: T[];
  /** A load is in flight. */
  loading: boolean;
  /** At least one load has answered (success or not). */
  loaded: boolean;
  /** The last load failed: the seed shows nothing then (no toast, no rows). */
  failed: boolean;
  /** Loads again; a given query replaces the remembered one (filters). */
  reload: (query?: Q) => Promise<void>;
}

/**
 * A back-office list loaded on mount with `initialQuery` and on `reload(query?)`. Only the latest
 * request's answer is kept, and none after unmount.
 */
export function useRemoteList<T, Q = undefined>(
  load: (query: Q) => Promise<Answer<T[]>>,
  initialQuery?: Q,
): RemoteList<T, Q> {
  const loadRef = useRef(load);
  loadRef.current = load;
  const queryRef = useRef(initialQuery as Q);
  const latest = useRef(0);
  const [state, setState] = useState({ rows: [] as T[], loading: true, loaded: false, failed: false });

  const reload = useCallback(async (query?: Q) => {
    if (query !== undefined) queryRef.current = query;
    const request = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    const answer = await loadRef.current(queryRef.current);
    if (request !== latest.current) return;
    const ok = answer.code === Code.ok && Array.isArray(answer.data);
    setState({ rows: ok ? answer.data : [], loading: false, loaded: true, failed: !ok });
  }, []);

  useEffect(() => {
    void reload();
    return () => {
      latest.current += 1;
    };
  }, [reload]);

  return { ...state, reload };
}
