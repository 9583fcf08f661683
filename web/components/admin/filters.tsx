/** The filter form above a back-office record list: whole-number boxes (数量, 天数) and its submit button. */
import { type ReactNode, useState } from "react";
import type { RemoteList } from "./useRemoteList.ts";

/**
 * A whole number from 1 to `max`, kept as the text typed: `read()` gives it, or undefined after
 * putting `message` under the box. Spread `field` on a NumberField.
 */
export function useWholeNumber(
  initial: number,
  { max, message = "请输入正整数" }: { max?: number; message?: string } = {},
) {
  const [value, setValue] = useState(String(initial));
  const [error, setError] = useState<string>();
  const read = () => {
    const number = Number(value);
    const valid = Number.isInteger(number) && number >= 1 && (max === undefined || number <= max);
    setError(valid ? undefined : message);
    return valid ? number : undefined;
  };
  return { field: { value, error, min: 1, max, onChange: setValue }, read };
}

/** 查询 by default; off while a new query loads (the first load leaves it on). */
export function SearchButton({
  list,
  children = "查询",
}: {
  list: Pick<RemoteList<unknown>, "loading" | "loaded">;
  children?: ReactNode;
}) {
  return (
    <button type="submit" className="btn btn-primary" disabled={list.loading && list.loaded}>
      {children}
    </button>
  );
}
