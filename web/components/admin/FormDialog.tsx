import type { ReactNode, Ref } from "react";
import { SubmitDialog } from "../SubmitDialog.tsx";

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
export function FormDialog({ busy = false, submitText = "保存", size = "md", ...form }: FormDialogProps) {
  return (
    <SubmitDialog
      {...form}
      size={size}
      busy={busy}
      submitText={busy ? "保存中…" : submitText}
      closeOnBackdrop={false}
      formClassName="admin-form"
    />
  );
}
