/**
 * /admin_audit 操作日志 (issue 30, admins only): who changed what, when, from where; filters by
 * who, what, target and business days; paged on the server (the trail is kept forever). Each
 * row's diff opens in place as a field / 原值 / 新值 table; secrets arrive masked.
 */
import { type FormEvent, useCallback, useEffect, useRef, useState } from "react";
import type { AuditListInput, AuditPage, AuditRow } from "../../../src/modules/audit/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminPage, LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { Field } from "../../components/Field.tsx";
import { formatDateTime } from "../../components/format.ts";
import { DEFAULT_PAGE_SIZE, Pager } from "../../components/Pager.tsx";
import { type Column, Table } from "../../components/Table.tsx";

type Filters = Pick<AuditListInput, "who" | "action" | "target" | "from" | "to">;
const NO_FILTERS: Filters = { who: "", action: "", target: "", from: "", to: "" };

/** A value of a diff as text: strings as they are, everything else as JSON. */
function shown(value: unknown): string {
  if (value === undefined) return "—";
  if (typeof value === "string") return value === "" ? "（空）" : value;
  return JSON.stringify(value);
}

function DiffCell({ row }: { row: AuditRow }) {
  const fields = Object.entries(row.diff);
  if (fields.length === 0) return <span className="audit-diff-none">无</span>;
  return (
    <details className="audit-diff">
      <summary>{fields.length} 项变更</summary>
      <table className="audit-diff-table">
        <thead>
          <tr>
            <th scope="col" className="audit-diff-cell">
              字段
            </th>
            <th scope="col" className="audit-diff-cell">
              原值
            </th>
            <th scope="col" className="audit-diff-cell">
              新值
            </th>
          </tr>
        </thead>
        <tbody>
          {fields.map(([field, change]) => (
            <tr key={field}>
              <th scope="row" className="audit-diff-cell">
                {field}
              </th>
              <td className="audit-diff-cell">{"old" in change ? shown(change.old) : "—"}</td>
              <td className="audit-diff-cell">{"new" in change ? shown(change.new) : "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

const columns: Column<AuditRow>[] = [
  { key: "time", title: "时间", render: (row) => formatDateTime(row.time), className: "audit-time" },
  { key: "actor", title: "操作人", render: (row) => row.actor },
  { key: "ip", title: "IP", render: (row) => row.ip || "-" },
  { key: "action", title: "操作", render: (row) => <code>{row.action}</code> },
  { key: "target", title: "对象", render: (row) => row.target || "-", className: "audit-target" },
  { key: "diff", title: "变更", render: (row) => <DiffCell row={row} />, className: "admin-sticky-actions" },
];

export function AdminAuditPage() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [query, setQuery] = useState({ filters: NO_FILTERS, page: 1, pageSize: DEFAULT_PAGE_SIZE });
  const [answer, setAnswer] = useState<{ page: AuditPage | null; loading: boolean; loaded: boolean }>({
    page: null,
    loading: true,
    loaded: false,
  });
  const latest = useRef(0);

  const load = useCallback(async (wanted: typeof query) => {
    const request = ++latest.current;
    setAnswer((previous) => ({ ...previous, loading: true }));
    const result = await call("/api/admin/audit/list", {
      ...wanted.filters,
      page: wanted.page,
      pageSize: wanted.pageSize,
    });
    if (request !== latest.current) return;
    setAnswer({ page: result.code === Code.ok ? result.data : null, loading: false, loaded: true });
  }, []);

  useEffect(() => {
    void load(query);
  }, [load, query]);
  useEffect(
    () => () => {
      latest.current += 1;
    },
    [],
  );

  const set = (key: keyof Filters) => (event: { target: { value: string } }) =>
    setDraft((previous) => ({ ...previous, [key]: event.target.value }));
  const search = (event: FormEvent) => {
    event.preventDefault();
    setQuery((previous) => ({ ...previous, filters: draft, page: 1 }));
  };
  const clear = () => {
    setDraft(NO_FILTERS);
    setQuery((previous) => ({ ...previous, filters: NO_FILTERS, page: 1 }));
  };

  const filtered = Object.values(query.filters).some((value) => value);
  return (
    <AdminPage title="操作日志">
      <p className="card-note">
        管理员、运营和命令行（cli@主机）做出的每一项更改，永久保存，不可修改或删除。
      </p>
      <form className="admin-filter" onSubmit={search}>
        <Field label="操作人" placeholder="邮箱或 cli@主机" value={draft.who} onChange={set("who")} />
        <Field
          label="操作"
          placeholder="如 settings 或 combo.create"
          value={draft.action}
          onChange={set("action")}
        />
        <Field label="对象" placeholder="ID、邮箱或配置项" value={draft.target} onChange={set("target")} />
        <Field label="开始日期" type="date" value={draft.from} onChange={set("from")} />
        <Field label="结束日期" type="date" value={draft.to} onChange={set("to")} />
        <button type="submit" className="btn btn-primary" disabled={answer.loading && answer.loaded}>
          查询
        </button>
        <button type="button" className="btn" onClick={clear}>
          清除
        </button>
      </form>
      {!answer.loaded ? (
        <LoadingSpinner />
      ) : answer.page === null ? null : (
        <div
          className={answer.loading ? "admin-list admin-list-busy" : "admin-list"}
          aria-busy={answer.loading}
        >
          <Table
            columns={columns}
            rows={answer.page.list}
            rowKey={(row) => String(row.id)}
            caption="操作日志"
            empty={filtered ? "没有符合条件的记录" : "暂无操作记录"}
          />
          {answer.page.total > 0 ? (
            <Pager
              total={answer.page.total}
              page={query.page}
              pageSize={query.pageSize}
              onChange={(page, pageSize) => setQuery((previous) => ({ ...previous, page, pageSize }))}
            />
          ) : null}
        </div>
      )}
    </AdminPage>
  );
}
