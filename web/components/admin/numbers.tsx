/** Number fields of the back-office forms (typed as text, read on save) and the 开/关 cell. */
import { Field } from "../Field.tsx";

export const NUMBER_REQUIRED = "请输入数字";

/** 开 / 关 for a boolean column. */
export const onOff = (on: boolean) => (on ? "开" : "关");

type NumberErrors<K extends string> = Partial<Record<K, string>>;

/**
 * The numeric fields of a draft (kept as text while typed) as numbers, or the fields that are
 * blank or not numbers. Ranges are the server's to judge; its message reaches the failure toast.
 */
export function readNumbers<K extends string>(
  draft: Record<K, string>,
  keys: readonly K[],
): { ok: true; values: Record<K, number> } | { ok: false; errors: NumberErrors<K> } {
  const values = {} as Record<K, number>;
  const errors: NumberErrors<K> = {};
  for (const key of keys) {
    const text = draft[key].trim();
    const value = Number(text);
    if (text === "" || !Number.isFinite(value)) errors[key] = NUMBER_REQUIRED;
    else values[key] = value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, values };
}

/** A labelled number input whose value stays text until the form is saved. */
export function NumberField({
  label,
  value,
  error,
  step = "1",
  onChange,
}: {
  label: string;
  value: string;
  error?: string;
  step?: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field
      label={label}
      type="number"
      inputMode={step === "1" ? "numeric" : "decimal"}
      step={step}
      value={value}
      error={error}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}
