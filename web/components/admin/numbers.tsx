/** Number fields of the back-office forms (typed as text, read on save) and the 开/关 cell. */
import { Field } from "../Field.tsx";

/** 开 / 关 for a boolean column. */
export const onOff = (on: boolean) => (on ? "开" : "关");

/** Typed text as a number; NaN when blank or not a number, which the schema reports (请输入数字). */
export const numberFrom = (text: string) => (text.trim() === "" ? Number.NaN : Number(text));

/** The numeric fields of a draft (kept as text while typed) as numbers for the schema to judge. */
export function readNumbers<K extends string>(
  draft: Record<K, string>,
  keys: readonly K[],
): Record<K, number> {
  const values = {} as Record<K, number>;
  for (const key of keys) values[key] = numberFrom(draft[key]);
  return values;
}

/** A labelled number input whose value stays text until the form is saved (or the filter is read). */
export function NumberField({
  label,
  value,
  error,
  step = "1",
  min,
  max,
  onChange,
}: {
  label: string;
  value: string;
  error?: string;
  step?: string;
  min?: number;
  max?: number;
  onChange: (value: string) => void;
}) {
  return (
    <Field
      label={label}
      type="number"
      inputMode={step === "1" ? "numeric" : "decimal"}
      step={step}
      min={min}
      max={max}
      value={value}
      error={error}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}
