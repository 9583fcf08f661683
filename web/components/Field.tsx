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

/** The e-mail of the login and register forms. */
export function EmailField(props: Omit<FieldProps, "label">) {
  return (
    <Field
      label="邮箱"
      type="email"
      name="email"
      autoComplete="email"
      inputMode="email"
      placeholder="请输入邮箱"
      {...props}
    />
  );
}

/** The full-width submit button of the sign-in forms; says `busyText` while the request runs. */
export function SubmitButton({
  busy,
  busyText,
  children,
}: {
  busy: boolean;
  busyText: string;
  children: string;
}) {
  return (
    <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
      {busy ? busyText : children}
    </button>
  );
}

/** A code to type in (体验券, 转赠码): no autocomplete or spell check, capitals; focused first. */
export function CodeField(props: FieldProps) {
  return (
    <Field
      name="code"
      autoComplete="off"
      autoCapitalize="characters"
      spellCheck={false}
      data-autofocus
      {...props}
    />
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
