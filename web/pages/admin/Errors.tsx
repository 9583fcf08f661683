/**
 * /admin_error (seed 001 §2.12, §8): the error log (createTime, name, msg, stack unfolded on demand)
 * and 清理, asked first and blocked while it runs; 成功清理了 N 条错误记录 / 清理失败 for 3 s. Below it,
 * 集群状态: the replicas and the jobs each runs (issue 28).
 */
import { useState } from "react";
import type { ErrorRecord } from "../../../src/modules/errors/service.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable } from "../../components/admin/AdminPage.tsx";
import { useConfirm } from "../../components/admin/ConfirmDialog.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { formatDateTime } from "../../components/format.ts";
import type { Column } from "../../components/Table.tsx";
import { toast } from "../../components/Toast.tsx";
import { ClusterStatus } from "./ClusterStatus.tsx";

/** Seed 001 §9: the error list asks for 7 by default. */
export const DEFAULT_ERROR_COUNT = 7;
/** Seed 001 §8: the clear toasts show 3 s. */
const CLEAR_TOAST_MS = 3000;

const columns: Column<ErrorRecord>[] = [
  { key: "createTime", title: "时间", render: (r) => formatDateTime(r.createTime) },
  { key: "name", title: "来源", render: (r) => r.name },
  {
    key: "msg",
    title: "信息",
    render: (r) => (
      <span className="admin-error-msg">
        {r.msg}
        {r.count > 1 ? <span className="badge">×{r.count}</span> : null}
      </span>
    ),
  },
  {
    key: "stack",
    title: "堆栈",
    render: (r) =>
      r.stack ? (
        <details className="admin-error-stack">
          <summary>展开</summary>
          <pre>{r.stack}</pre>
        </details>
      ) : (
        "无"
      ),
  },
];

export function AdminErrorsPage() {
  const [confirm, confirmDialog] = useConfirm();
  const [clearing, setClearing] = useState(false);
  const list = useRemoteList(() => call("/api/admin/errors/list", { num: DEFAULT_ERROR_COUNT }));

  async function clear() {
    const ok = await confirm({ title: "清理确认", message: "确认清理全部错误记录?", confirmText: "清理" });
    if (!ok) return;
    setClearing(true);
    const answer = await call("/api/admin/errors/clear", {});
    setClearing(false);
    if (answer.code === Code.ok) {
      toast.success(`成功清理了 ${answer.data.deletedCount} 条错误记录`, CLEAR_TOAST_MS);
      void list.reload();
    } else if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) {
      toast.error("清理失败", CLEAR_TOAST_MS);
    }
  }

  return (
    <AdminPage
      title="运维日志"
      actions={
        <button type="button" className="btn admin-danger" disabled={clearing} onClick={() => void clear()}>
          {clearing ? "清理中…" : "清理"}
        </button>
      }
    >
      <p className="card-note">最近 {DEFAULT_ERROR_COUNT} 天内出现过的错误，同一错误只占一行（×次数）。</p>
      <AdminTable list={list} columns={columns} rowKey={(r) => String(r._id)} caption="错误记录" />
      <ClusterStatus />
      {confirmDialog}
    </AdminPage>
  );
}
