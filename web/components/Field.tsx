import { type InputHTMLAttributes, type ReactNode, type Ref, useId } from "react";

export interface FieldProps extends InputHTMLAttributes<HTMLInputElement> {
  label: string;
  /** Validation or server message shown under the input. */
  error?: string;
  /** Something beside the input (a button). */
  addon?: ReactNode;
  ref?: Ref<HTMLInputElement>;
}

/** A labelled input with its error line; the error is tied to the input for screen readers. */
export function Field({ label, error, addon, ref, id, className, ...input }: FieldProps) {
  const autoId = useId();
  const inputId = id ?? autoId;
  const errorId = `${inputId}-error`;
  return (
    <div className={`field${error ? " field-invalid" : ""}${className ? ` ${className}` : ""}`}>
      <label className="field-label" htmlFor={inputId}>
        {label}
      </label>
      <div className="field-row">
        <input
          ref={ref}
          id={inputId}
          className="input"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
          {...input}
        />
        {addon}
      </div>
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

interface NewPasswordFieldsProps {
  labels: [password: string, confirm: string];
  placeholders: [password: string, confirm: string];
  password: string;
  confirm: string;
  errors: { password?: string; confirm?: string };
  onPassword(value: string): void;
  onConfirm(value: string): void;
}

/** A new password and its confirmation (register, reset). */
export function NewPasswordFields(props: NewPasswordFieldsProps) {
  return (
    <>
      <Field
        label={props.labels[0]}
        type="password"
        name="password"
        autoComplete="new-password"
        placeholder={props.placeholders[0]}
        value={props.password}
        error={props.errors.password}
        onChange={(event) => props.onPassword(event.target.value)}
      />
      <Field
        label={props.labels[1]}
        type="password"
        name="confirm"
        autoComplete="new-password"
        placeholder={props.placeholders[1]}
        value={props.confirm}
        error={props.errors.confirm}
        onChange={(event) => props.onConfirm(event.target.value)}
      />
    </>
  );
}
