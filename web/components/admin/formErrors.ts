/**
 * Per-field errors of the back-office forms (issue 12): a form checks its payload with the zod
 * schema the server uses before sending it, shows each message under its field and focuses the
 * first field marked invalid. What the server refuses beyond that still arrives as a toast.
 */
import { type RefObject, useCallback, useEffect, useRef, useState } from "react";
import type { z } from "zod";
import { TOAST_SHORT, toast } from "../Toast.tsx";

/** Message per field of the form; "" for a problem of the whole payload. */
export type FieldErrors = Partial<Record<string, string>>;

/**
 * The first message of each field, keyed by the first segment of the issue's path; `rename` maps a
 * payload key to the form field that edits it (traffic → trafficG).
 */
export function fieldErrors(error: z.ZodError, rename: Record<string, string> = {}): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const key = String(issue.path[0] ?? "");
    const field = rename[key] ?? key;
    errors[field] ??= issue.message;
  }
  return errors;
}

/** What `schema` finds wrong with `payload`, per field (empty when the server would accept it). */
export function schemaErrors(
  schema: z.ZodType,
  payload: unknown,
  rename?: Record<string, string>,
): FieldErrors {
  const parsed = schema.safeParse(payload);
  return parsed.success ? {} : fieldErrors(parsed.error, rename);
}

export interface FormErrors<E extends FieldErrors> {
  errors: E;
  /** The form the invalid fields are looked for in. */
  formRef: RefObject<HTMLFormElement | null>;
  /**
   * Shows `errors` under their fields (none clears them) and focuses the first field marked
   * invalid; a message no field shows becomes the `failure:message` toast. True when none.
   */
  check: (errors: E) => boolean;
}

export function useFormErrors<E extends FieldErrors = FieldErrors>(failure: string): FormErrors<E> {
  const formRef = useRef<HTMLFormElement>(null);
  const [errors, setErrors] = useState({} as E);

  // Runs after every check (each sets a new object), so saving twice with the same mistake
  // focuses the field again.
  useEffect(() => {
    const messages = Object.values(errors).filter(Boolean);
    if (messages.length === 0) return;
    const field = formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    if (field) {
      field.focus({ preventScroll: true });
      // The whole field in view, its label and error line too, not just the input's edge.
      (field.closest(".field") ?? field).scrollIntoView({ block: "center" });
    } else toast.error(`${failure}:${messages[0]}`, TOAST_SHORT);
  }, [errors, failure]);

  const check = useCallback((next: E) => {
    setErrors({ ...next });
    return Object.values(next).every((message) => !message);
  }, []);

  return { errors, formRef, check };
}
