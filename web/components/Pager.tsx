import { useEffect, useState } from "react";

/** Page sizes of seed 000 §9; 0 stands for 全部 (everything on one page). */
export const PAGE_SIZES = [5, 20, 50, 100, 0] as const;
export const DEFAULT_PAGE_SIZE = 20;

export interface PagerProps {
  total: number;
  /** 1-based. */
  page: number;
  pageSize: number;
  onChange: (page: number, pageSize: number) => void;
}

export function pageCount(total: number, pageSize: number): number {
  return pageSize === 0 ? 1 : Math.max(1, Math.ceil(total / pageSize));
}

/** First / previous / next / last, the page-size select, total pages and item counts. */
export function Pager({ total, page, pageSize, onChange }: PagerProps) {
  const pages = pageCount(total, pageSize);
  const current = Math.min(Math.max(1, page), pages);
  return (
    <nav className="pager" aria-label="分页">
      <span className="pager-info">
        共 {total} 条，第 {current}/{pages} 页
      </span>
      <div className="pager-buttons">
        <button
          type="button"
          className="btn btn-small"
          disabled={current <= 1}
          onClick={() => onChange(1, pageSize)}
        >
          首页
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={current <= 1}
          onClick={() => onChange(current - 1, pageSize)}
        >
          上一页
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={current >= pages}
          onClick={() => onChange(current + 1, pageSize)}
        >
          下一页
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={current >= pages}
          onClick={() => onChange(pages, pageSize)}
        >
          末页
        </button>
        <select
          className="pager-size"
          aria-label="每页条数"
          value={pageSize}
          onChange={(event) => onChange(1, Number(event.target.value))}
        >
          {PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size === 0 ? "全部" : `${size} 条/页`}
            </option>
          ))}
        </select>
      </div>
    </nav>
  );
}

/** Client-side paging state for a list: the visible slice plus the props for <Pager>. */
export function usePaged<T>(items: readonly T[], initialSize: number = DEFAULT_PAGE_SIZE) {
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(initialSize);
  const pages = pageCount(items.length, pageSize);
  useEffect(() => {
    if (page > pages) setPage(pages);
  }, [page, pages]);
  const current = Math.min(page, pages);
  const slice = pageSize === 0 ? items : items.slice((current - 1) * pageSize, current * pageSize);
  return {
    slice,
    pager: {
      total: items.length,
      page: current,
      pageSize,
      onChange: (nextPage: number, nextSize: number) => {
        setPage(nextPage);
        setPageSize(nextSize);
      },
    } satisfies PagerProps,
  };
}
