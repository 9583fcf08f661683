import { type FormEvent, type ReactNode, type Ref, useId } from "react";
import { Dialog } from "../Dialog.tsx";

export interface FormDialogProps {
  open: boolean;
  title: ReactNode;
  onClose: () => void;
  onSubmit: () => void;
  /** A save is in flight: the submit button is disabled. */
  busy?: boolean;
  submitText?: string;
  size?: "sm" | "md" | "lg";
  /** The form element, for useFormErrors to find the first invalid field in. */
  formRef?: Ref<HTMLFormElement>;
  children: ReactNode;
}

/** The modal add/edit form of the back office: Enter or 保存 submits, 取消 / Esc closes. */
export function FormDialog({
  open,
  title,
  onClose,
  onSubmit,
  busy = false,
  submitText = "保存",
  size = "md",
  formRef,
  children,
}: FormDialogProps) {
  const formId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!busy) onSubmit();
  };
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title={title}
      size={size}
      closeOnBackdrop={false}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            取消
          </button>
          <button type="submit" form={formId} className="btn btn-primary" disabled={busy}>
            {busy ? "保存中…" : submitText}
          </button>
        </>
      }
    >
      <form ref={formRef} id={formId} className="admin-form" onSubmit={submit} noValidate>
        {children}
      </form>
    </Dialog>
  );
}
