import { type ReactNode, useCallback, useRef, useState } from "react";
import type { Answer } from "../../api.ts";
import { Dialog } from "../Dialog.tsx";
import { toastResult } from "./feedback.ts";

export interface ConfirmOptions {
  /** Dialog title; 删除确认 when not given (seed 001 §5). */
  title?: string;
  message: ReactNode;
  confirmText?: string;
  /** The confirm button is styled as dangerous (deletes, resets). */
  danger?: boolean;
}

interface Pending extends ConfirmOptions {
  resolve: (confirmed: boolean) => void;
}

export const CONFIRM_DELETE_TITLE = "删除确认";
export const CONFIRM_DELETE_TEXT = "确认删除?";

/**
 * A confirmation step before a destructive action: `const [confirm, dialog] = useConfirm()`,
 * render `dialog`, then `if (await confirm({message})) …`. Closing or cancelling answers false.
 */
export function useConfirm(): [(options: ConfirmOptions) => Promise<boolean>, ReactNode] {
  const [pending, setPending] = useState<Pending | null>(null);
  const current = useRef<Pending | null>(null);

  const settle = useCallback((confirmed: boolean) => {
    current.current?.resolve(confirmed);
    current.current = null;
    setPending(null);
  }, []);

  const confirm = useCallback(
    (options: ConfirmOptions) =>
      new Promise<boolean>((resolve) => {
        current.current?.resolve(false);
        current.current = { ...options, resolve };
        setPending(current.current);
      }),
    [],
  );

  const dialog = (
    <Dialog
      open={pending !== null}
      onClose={() => settle(false)}
      title={pending?.title ?? CONFIRM_DELETE_TITLE}
      size="sm"
      footer={
        <>
          <button type="button" className="btn" onClick={() => settle(false)}>
            取消
          </button>
          <button
            type="button"
            className={`btn ${pending?.danger === false ? "btn-primary" : "admin-danger"}`}
            data-autofocus
            onClick={() => settle(true)}
          >
            {pending?.confirmText ?? "确定"}
          </button>
        </>
      }
    >
      <div className="admin-confirm">{pending?.message}</div>
    </Dialog>
  );
  return [confirm, dialog];
}

/** The toasts of a delete: `deleted`, or `deleteFailed:{server message}`. */
export interface DeleteMessages {
  deleted: string;
  deleteFailed: string;
}

/**
 * useConfirm for actions that call the server: `confirmedCall` asks, sends once confirmed, toasts
 * the answer and runs `onDone` when it succeeded; `confirmDelete` asks 确认删除? and then `what`.
 */
export function useConfirmedCall(onDone: () => unknown) {
  const [confirm, dialog] = useConfirm();
  const confirmedCall = async (
    options: ConfirmOptions,
    send: () => Promise<Answer<unknown>>,
    success: string,
    failure: string,
  ) => {
    if (!(await confirm(options))) return;
    if (toastResult(await send(), success, failure)) void onDone();
  };
  const confirmDelete = (what: string, send: () => Promise<Answer<unknown>>, messages: DeleteMessages) =>
    confirmedCall(
      { message: `${CONFIRM_DELETE_TEXT} ${what}`, confirmText: "删除" },
      send,
      messages.deleted,
      messages.deleteFailed,
    );
  return { confirm, confirmedCall, confirmDelete, dialog };
}
