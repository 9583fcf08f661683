/** Labelled form controls the back-office forms need beyond <Field> (text inputs). */
import { type ReactNode, useId } from "react";

interface Labelled {
  label: string;
  /** A short hint under the control. */
  hint?: ReactNode;
  error?: string;
  className?: string;
}

/** The id of a control's error line, for its aria-describedby. */
const errorIdOf = (controlId: string) => `${controlId}-error`;

/** What marks a control invalid and ties it to its error line. */
export const invalidProps = (controlId: string, error: string | undefined) =>
  error ? { "aria-invalid": true, "aria-describedby": errorIdOf(controlId) } : {};

/**
 * Label, control, hint and error line. `htmlFor` labels the control and names its error line;
 * `describes` names the error line of a control a label cannot point at (a link).
 */
export function FieldFrame({
  label,
  hint,
  error,
  className,
  htmlFor,
  describes = htmlFor,
  children,
}: Labelled & { htmlFor?: string; describes?: string; children: ReactNode }) {
  return (
    <div className={`field${error ? " field-invalid" : ""}${className ? ` ${className}` : ""}`}>
      {htmlFor ? (
        <label className="field-label" htmlFor={htmlFor}>
          {label}
        </label>
      ) : (
        <span className="field-label">{label}</span>
      )}
      {children}
      {hint ? <p className="admin-hint">{hint}</p> : null}
      {error ? (
        <p className="field-error" id={describes ? errorIdOf(describes) : undefined}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

export interface SelectFieldProps<V extends string> extends Labelled {
  value: V;
  options: readonly { value: V; label: string }[];
  onChange: (value: V) => void;
}

export function SelectField<V extends string>({ value, options, onChange, ...frame }: SelectFieldProps<V>) {
  const id = useId();
  return (
    <FieldFrame {...frame} htmlFor={id}>
      <select
        id={id}
        className="input admin-control"
        {...invalidProps(id, frame.error)}
        value={value}
        onChange={(event) => onChange(event.target.value as V)}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

export interface TextAreaFieldProps extends Labelled {
  value: string;
  onChange: (value: string) => void;
  rows?: number;
  placeholder?: string;
}

export function TextAreaField({ value, onChange, rows = 3, placeholder, ...frame }: TextAreaFieldProps) {
  const id = useId();
  return (
    <FieldFrame {...frame} htmlFor={id}>
      <textarea
        id={id}
        className="input admin-control admin-textarea"
        {...invalidProps(id, frame.error)}
        rows={rows}
        value={value}
        placeholder={placeholder}
        onChange={(event) => onChange(event.target.value)}
      />
    </FieldFrame>
  );
}

export interface SwitchFieldProps extends Labelled {
  checked: boolean;
  disabled?: boolean;
  onChange: (checked: boolean) => void;
}

/** An on/off setting: a checkbox styled as a switch, labelled by `label`. */
export function SwitchField({
  checked,
  disabled,
  onChange,
  label,
  hint,
  error,
  className,
}: SwitchFieldProps) {
  const id = useId();
  return (
    <FieldFrame label={label} hint={hint} error={error} className={className}>
      <label className="admin-switch" htmlFor={id}>
        <input
          id={id}
          type="checkbox"
          role="switch"
          aria-invalid={error ? true : undefined}
          aria-checked={checked}
          aria-label={label}
          checked={checked}
          disabled={disabled}
          onChange={(event) => onChange(event.target.checked)}
        />
        <span>{checked ? "开启" : "关闭"}</span>
      </label>
    </FieldFrame>
  );
}

export interface CheckListFieldProps extends Labelled {
  selected: readonly string[];
  options: readonly { value: string; label: string }[];
  onChange: (selected: string[]) => void;
  /** Shown when there is nothing to choose from. */
  empty?: string;
}

/** A multi-select as a group of checkboxes (keeps the options' order in the answer). */
export function CheckListField({ selected, options, onChange, empty, ...frame }: CheckListFieldProps) {
  const toggle = (value: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(value);
    else next.delete(value);
    onChange(options.map((option) => option.value).filter((v) => next.has(v)));
  };
  return (
    <FieldFrame {...frame}>
      <fieldset className="admin-checklist" aria-label={frame.label}>
        {options.length === 0 ? <span className="admin-hint">{empty ?? "无可选项"}</span> : null}
        {options.map((option) => (
          <label key={option.value} className="admin-check">
            <input
              type="checkbox"
              aria-invalid={frame.error ? true : undefined}
              checked={selected.includes(option.value)}
              onChange={(event) => toggle(option.value, event.target.checked)}
            />
            <span>{option.label}</span>
          </label>
        ))}
      </fieldset>
    </FieldFrame>
  );
}
