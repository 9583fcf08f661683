import { type ReactNode, useEffect, useRef, useState } from "react";

export const EMPTY_TEXT = "暂无记录";

export interface Column<T> {
  key: string;
  title: ReactNode;
  render: (row: T, index: number) => ReactNode;
  className?: string;
}

export interface TableProps<T> {
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T, index: number) => string;
  empty?: ReactNode;
  caption?: string;
}

/**
 * True while the element's content is wider than the element, i.e. it scrolls sideways; watched
 * as the element and its first child resize.
 */
function useScrollsSideways() {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const check = () => setScrolls(element.scrollWidth > element.clientWidth);
    const observer = new ResizeObserver(check);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    check();
    return () => observer.disconnect();
  }, []);
  return [ref, scrolls] as const;
}

/**
 * A plain table that scrolls sideways on narrow screens and says 暂无记录 when empty. While it
 * scrolls, its frame is a tab stop named after the caption, so the arrow keys can scroll it
 * (WCAG 2.1.1; axe scrollable-region-focusable); a table that fits adds no tab stop.
 */
export function Table<T>({ columns, rows, rowKey, empty = EMPTY_TEXT, caption }: TableProps<T>) {
  const [frame, scrolls] = useScrollsSideways();
  const tabStop = scrolls
    ? { tabIndex: 0, ...(caption ? { role: "region", "aria-label": caption } : {}) }
    : {};
  return (
    <div ref={frame} className="table-wrap" {...tabStop}>
      <table className="table">
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.key} scope="col" className={column.className}>
                {column.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td className="table-empty" colSpan={columns.length}>
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row, index) => (
              <tr key={rowKey(row, index)}>
                {columns.map((column) => (
                  <td key={column.key} className={column.className}>
                    {column.render(row, index)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
