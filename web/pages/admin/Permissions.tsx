/** /admin_permissions (seed 001 §2.2): named entitlements that combos grant and lines require. */
import { useState } from "react";
import type { PermissionItem } from "../../../src/modules/permission/schema.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable, editDeleteColumn } from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { savedToast, toastResult } from "../../components/admin/feedback.ts";
import { useFormErrors } from "../../components/admin/formErrors.ts";
import { TextAreaField } from "../../components/admin/inputs.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Field } from "../../components/Field.tsx";
import type { Column } from "../../components/Table.tsx";

/** Seed 001 §8 toasts of this screen. */
export const PermissionMsg = {
  saveFailed: "配置失败",
  deleted: "权限删除成功",
  deleteFailed: "权限删除失败",
} as const;

interface Draft {
  _id?: string;
  name: string;
  desc: string;
}

const NEW_PERMISSION: Draft = { name: "", desc: "" };

export function AdminPermissionsPage() {
  const list = useRemoteList(() => call("/api/admin/permissions/list", {}));
  const [draft, setDraft] = useState<Draft | null>(null);
  const { errors, formRef, check } = useFormErrors(PermissionMsg.saveFailed);
  const [busy, setBusy] = useState(false);
  const { confirmDelete, dialog: confirmDialog } = useConfirmedCall(list.reload);

  const open = (next: Draft) => {
    check({});
    setDraft(next);
  };

  const save = async () => {
    if (!draft) return;
    if (!check(draft.name.trim() === "" ? { name: "名称不能为空" } : {})) return;
    setBusy(true);
    const answer = await call("/api/admin/permissions/update", draft);
    setBusy(false);
    if (toastResult(answer, savedToast(draft), PermissionMsg.saveFailed)) {
      setDraft(null);
      void list.reload();
    }
  };

  const remove = (item: PermissionItem) =>
    confirmDelete(
      `权限「${item.name}」将被删除。`,
      () => call("/api/admin/permissions/delete", { id: item._id }),
      PermissionMsg,
    );

  const columns: Column<PermissionItem>[] = [
    { key: "name", title: "名称", render: (row) => row.name },
    { key: "desc", title: "描述", render: (row) => row.desc, className: "admin-wrap" },
    { key: "useTimes", title: "购买次数", render: (row) => row.useTimes, className: "admin-num" },
    editDeleteColumn((row) => open({ _id: row._id, name: row.name, desc: row.desc }), remove),
  ];

  return (
    <AdminPage
      title="权限管理"
      actions={
        <button type="button" className="btn btn-primary" onClick={() => open(NEW_PERMISSION)}>
          添加
        </button>
      }
    >
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="权限列表" />
      <FormDialog
        open={draft !== null}
        title={draft?._id ? "编辑权限" : "添加权限"}
        onClose={() => setDraft(null)}
        onSubmit={save}
        busy={busy}
        formRef={formRef}
      >
        {draft ? (
          <>
            <Field
              label="名称"
              value={draft.name}
              error={errors.name}
              data-autofocus
              onChange={(event) => setDraft({ ...draft, name: event.target.value })}
            />
            <TextAreaField
              label="描述"
              value={draft.desc}
              onChange={(desc) => setDraft({ ...draft, desc })}
            />
          </>
        ) : null}
      </FormDialog>
      {confirmDialog}
    </AdminPage>
  );
}
