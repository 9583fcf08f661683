import type { ReactNode } from "react";
import { Pager, usePaged } from "../Pager.tsx";
import { type Column, Table } from "../Table.tsx";
import type { RemoteList } from "./useRemoteList.ts";

/** A back-office screen: title, header actions on the right, then the content. */
export function AdminPage({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="page admin-page">
      <div className="admin-head">
        <h1 className="page-title">{title}</h1>
        {actions ? <div className="admin-actions">{actions}</div> : null}
      </div>
      {children}
    </div>
  );
}

export function LoadingSpinner() {
  return <div className="spinner page-spinner" role="status" aria-label="加载中" />;
}

export interface AdminTableProps<T> {
  list: Pick<RemoteList<T>, "rows" | "loading" | "loaded" | "failed">;
  columns: readonly Column<T>[];
  rowKey: (row: T) => string;
  caption: string;
  /** Client-side filtering on top of what the server sent. */
  rows?: readonly T[];
}

/**
 * A back-office list: a spinner until the first answer, the paged table (暂无记录 when empty),
 * and nothing at all when the load failed (seed 001 §1).
 */
export function AdminTable<T>({ list, columns, rowKey, caption, rows }: AdminTableProps<T>) {
  const { slice, pager } = usePaged(rows ?? list.rows);
  if (!list.loaded) return <LoadingSpinner />;
  if (list.failed) return null;
  return (
    <div className={list.loading ? "admin-list admin-list-busy" : "admin-list"} aria-busy={list.loading}>
      <Table columns={columns} rows={slice} rowKey={(row) => rowKey(row)} caption={caption} />
      {pager.total > 0 ? <Pager {...pager} /> : null}
    </div>
  );
}

/** A further row button of the 操作 column (copy, …). */
export interface RowAction<T> {
  label: string;
  onClick: (row: T) => void;
}

/**
 * The 操作 column of a list whose rows can be edited and deleted (delete asks first in `onDelete`);
 * `more` buttons sit between 编辑 and 删除.
 */
export function editDeleteColumn<T>(
  onEdit: (row: T) => void,
  onDelete: (row: T) => void,
  more: readonly RowAction<T>[] = [],
): Column<T> {
  return {
    key: "actions",
    title: "操作",
    render: (row) => (
      <div className="admin-row-actions">
        <button type="button" className="btn btn-small" onClick={() => onEdit(row)}>
          编辑
        </button>
        {more.map((action) => (
          <button
            key={action.label}
            type="button"
            className="btn btn-small"
            onClick={() => action.onClick(row)}
          >
            {action.label}
          </button>
        ))}
        <button type="button" className="btn btn-small admin-danger-text" onClick={() => onDelete(row)}>
          删除
        </button>
      </div>
    ),
  };
}
