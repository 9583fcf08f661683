import { type FormEvent, type ReactNode, type Ref, useId } from "react";
import { Dialog, type DialogProps } from "./Dialog.tsx";

export interface SubmitDialogProps extends Omit<DialogProps, "footer"> {
  submitText: ReactNode;
  /** A submit is in flight: the submit button is disabled. */
  busy: boolean;
  onSubmit: () => void;
  formClassName?: string;
  formRef?: Ref<HTMLFormElement>;
}

/** A dialog whose body is a form: Enter or the submit button submits, 取消 / Esc closes. */
export function SubmitDialog({
  submitText,
  busy,
  onSubmit,
  formClassName = "form",
  formRef,
  children,
  ...dialog
}: SubmitDialogProps) {
  const formId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!busy) onSubmit();
  };
  return (
    <Dialog
      {...dialog}
      footer={
        <>
          <button type="button" className="btn" onClick={dialog.onClose}>
            取消
          </button>
          <button type="submit" form={formId} className="btn btn-primary" disabled={busy}>
            {submitText}
          </button>
        </>
      }
    >
      <form ref={formRef} id={formId} className={formClassName} onSubmit={submit} noValidate>
        {children}
      </form>
    </Dialog>
  );
}
