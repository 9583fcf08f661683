/**
 * The back office's add/edit dialogs: `useDraftEditor` is the list page's side (which draft is
 * open), `useDraftForm` the dialog's (the draft being typed, its field errors and the save).
 */
import { useState } from "react";
import type { Answer } from "../../api.ts";
import { savedToast, toastResult } from "./feedback.ts";
import { type FieldErrors, useFormErrors } from "./formErrors.ts";

/** The failure toast of a save, `saveFailed:{server message}`; success is savedToast's. */
export interface SaveMessages {
  saveFailed: string;
}

/** A save about to happen: what the schema finds wrong (nothing is sent unless none) and the call. */
export interface SaveRequest {
  errors: FieldErrors;
  send: () => Promise<Answer<unknown>>;
}

/** The fields of a draft typed as text (numbers too, until saved). */
export type TextKey<D> = { [K in keyof D]-?: D[K] extends string ? K : never }[keyof D] & string;

/** What a list page gives its add/edit dialog. */
export interface DraftDialogProps<D> {
  draft: D;
  onClose: () => void;
  onSaved: () => void;
}

/**
 * A list page's add/edit dialog: `edit(draft)` opens it, closing drops the draft, saving also
 * reloads the list. `key` gives another row (or a new one) a fresh form.
 */
export function useDraftEditor<D extends { _id?: string }>(reload: () => unknown) {
  const [draft, setDraft] = useState<D | null>(null);
  const dialog: DraftDialogProps<D> | null = draft
    ? {
        draft,
        onClose: () => setDraft(null),
        onSaved: () => {
          setDraft(null);
          void reload();
        },
      }
    : null;
  return { edit: setDraft, dialog, key: draft?._id ?? "new" };
}

/**
 * The dialog's form: `set` edits one field, `bind(key)` is a field's value, error and onChange for
 * the inputs that hand back a value (NumberField, …). Saving checks `request(form).errors` under
 * the fields, sends, toasts the answer (添加成功 for a draft without `_id`, else 更新成功) and calls
 * `onSaved` when it succeeded. Spread `dialog` on the FormDialog.
 */
export function useDraftForm<D extends { _id?: string }>(
  initial: D | (() => D),
  messages: SaveMessages,
  onSaved: () => void,
  request: (form: D) => SaveRequest,
) {
  const [form, setForm] = useState(initial);
  const { errors, formRef, check } = useFormErrors(messages.saveFailed);
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof D>(key: K, value: D[K]) => setForm({ ...form, [key]: value });
  const bind = <K extends keyof D & string>(key: K) => ({
    value: form[key],
    error: errors[key],
    onChange: (value: D[K]) => set(key, value),
  });

  const save = async () => {
    const { errors: found, send } = request(form);
    if (!check(found)) return;
    setBusy(true);
    const answer = await send();
    setBusy(false);
    if (toastResult(answer, savedToast(form), messages.saveFailed)) onSaved();
  };

  return { form, setForm, set, bind, errors, dialog: { onSubmit: save, busy, formRef } };
}
