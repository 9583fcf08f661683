import { useSyncExternalStore } from "react";

/** Toast durations of seed 000 §9: default 2 s, 5 s for resets etc., 10 s for some failures. */
export const TOAST_SHORT = 2000;
export const TOAST_MEDIUM = 5000;
export const TOAST_LONG = 10_000;

export type ToastKind = "success" | "error" | "info";

interface ToastItem {
  id: number;
  kind: ToastKind;
  msg: string;
}

let items: ToastItem[] = [];
let nextId = 1;
const listeners = new Set<() => void>();

function emit() {
  for (const listener of listeners) listener();
}

function show(kind: ToastKind, msg: string, ms: number = TOAST_SHORT): number {
  const id = nextId++;
  items = [...items, { id, kind, msg }].slice(-5);
  emit();
  setTimeout(() => dismiss(id), ms);
  return id;
}

function dismiss(id: number) {
  const before = items.length;
  items = items.filter((item) => item.id !== id);
  if (items.length !== before) emit();
}

/** `toast.success(msg)`, `toast.error(msg, TOAST_MEDIUM)` … */
export const toast = {
  success: (msg: string, ms?: number) => show("success", msg, ms),
  error: (msg: string, ms?: number) => show("error", msg, ms),
  info: (msg: string, ms?: number) => show("info", msg, ms),
  dismiss,
};

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};
const snapshot = () => items;

const ICONS: Record<ToastKind, string> = { success: "✓", error: "!", info: "i" };

/** Renders the toasts; mount once at the root. */
export function Toaster() {
  const list = useSyncExternalStore(subscribe, snapshot);
  return (
    <div className="toaster" aria-live="polite">
      {list.map((item) => (
        <div
          key={item.id}
          className={`toast toast-${item.kind}`}
          role={item.kind === "error" ? "alert" : "status"}
        >
          <span className="toast-icon" aria-hidden="true">
            {ICONS[item.kind]}
          </span>
          <span className="toast-msg">{item.msg}</span>
        </div>
      ))}
    </div>
  );
}
