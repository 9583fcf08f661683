/**
 * /admin_entrys (seed 001 §2.4): the relay fronts lines marked 中转 are published on. The IP list
 * is edited one address a line; an empty list means the default IP alone. Copy opens the form
 * without the id, so saving creates a new entry. The form is checked with the server's entryInput
 * before saving; a bad value is marked on its field.
 */
import { type Entry, entryInput } from "../../../src/modules/entry/schema.ts";
import { call, type EntryForm } from "../../api.ts";
import { AdminPage, AdminTable, editDeleteColumn } from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { schemaErrors } from "../../components/admin/formErrors.ts";
import { SwitchField, TextAreaField } from "../../components/admin/inputs.tsx";
import { NumberField, numberFrom } from "../../components/admin/numbers.tsx";
import { type DraftDialogProps, useDraftEditor, useDraftForm } from "../../components/admin/useDraftForm.ts";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Field } from "../../components/Field.tsx";
import type { Column } from "../../components/Table.tsx";

/** Seed 001 §8 toasts of this screen. */
export const EntryMsg = {
  saveFailed: "配置失败",
  deleted: "删除成功",
  deleteFailed: "删除失败",
} as const;

export interface EntryDraft {
  _id?: string;
  name: string;
  index: string;
  ip: string;
  /** One address a line. */
  ipList: string;
  desc: string;
  visible: boolean;
}

const NEW_ENTRY: EntryDraft = { name: "", index: "0", ip: "", ipList: "", desc: "", visible: true };

export function entryToDraft(entry: Entry): EntryDraft {
  return {
    _id: entry._id,
    name: entry.name,
    index: String(entry.index),
    ip: entry.ip,
    ipList: entry.ipList.join("\n"),
    desc: entry.desc,
    visible: entry.visible,
  };
}

/** The textarea's addresses: one a line, blank lines and surrounding spaces dropped. */
export const parseIpList = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/** The payload of entrys/update; entryInput judges it. */
export function draftToEntry(draft: EntryDraft): EntryForm {
  return {
    ...(draft._id ? { _id: draft._id } : {}),
    name: draft.name.trim(),
    index: numberFrom(draft.index),
    ip: draft.ip.trim(),
    ipList: parseIpList(draft.ipList),
    desc: draft.desc,
    visible: draft.visible,
  };
}

function EntryFormDialog({ draft, onClose, onSaved }: DraftDialogProps<EntryDraft>) {
  const { form, set, errors, dialog } = useDraftForm(draft, EntryMsg, onSaved, (form) => {
    const entry = draftToEntry(form);
    return { errors: schemaErrors(entryInput, entry), send: () => call("/api/admin/entrys/update", entry) };
  });

  return (
    <FormDialog open title={form._id ? "编辑入口" : "添加入口"} onClose={onClose} {...dialog}>
      <div className="admin-grid">
        <Field
          label="名称"
          value={form.name}
          error={errors.name}
          data-autofocus
          onChange={(event) => set("name", event.target.value)}
        />
        <NumberField
          label="排序"
          value={form.index}
          error={errors.index}
          onChange={(value) => set("index", value)}
        />
        <Field
          label="默认IP"
          value={form.ip}
          error={errors.ip}
          onChange={(event) => set("ip", event.target.value)}
        />
        <SwitchField label="可用" checked={form.visible} onChange={(visible) => set("visible", visible)} />
      </div>
      <TextAreaField
        label="IP列表"
        value={form.ipList}
        rows={5}
        placeholder={"一行一个地址，例如\n198.51.100.10\nrelay.example.com"}
        hint="填写后按列表逐个发布，为空时使用默认IP。"
        error={errors.ipList}
        onChange={(ipList) => set("ipList", ipList)}
      />
      <TextAreaField
        label="描述"
        value={form.desc}
        error={errors.desc}
        onChange={(desc) => set("desc", desc)}
      />
    </FormDialog>
  );
}

export function AdminEntrysPage() {
  const list = useRemoteList(() => call("/api/admin/entrys/list", {}));
  const editor = useDraftEditor<EntryDraft>(list.reload);
  const { confirmDelete, dialog: confirmDialog } = useConfirmedCall(list.reload);

  const remove = (entry: Entry) =>
    confirmDelete(
      `入口「${entry.name}」将被删除，经它中转的线路将不再下发。`,
      () => call("/api/admin/entrys/delete", { id: entry._id }),
      EntryMsg,
    );

  const columns: Column<Entry>[] = [
    { key: "index", title: "排序", render: (row) => row.index, className: "admin-num" },
    { key: "name", title: "名称", render: (row) => row.name },
    { key: "ip", title: "默认IP", render: (row) => row.ip || "-" },
    {
      key: "ipList",
      title: "IP列表",
      render: (row) =>
        row.ipList.length === 0 ? (
          "-"
        ) : (
          <ul className="network-ip-list">
            {row.ipList.map((ip) => (
              <li key={ip}>{ip}</li>
            ))}
          </ul>
        ),
    },
    { key: "desc", title: "描述", render: (row) => row.desc, className: "admin-wrap" },
    {
      key: "visible",
      title: "可用",
      render: (row) => (
        <span className={`badge ${row.visible ? "admin-status-ok" : "admin-status-off"}`}>
          {row.visible ? "可用" : "停用"}
        </span>
      ),
    },
    editDeleteColumn((row) => editor.edit(entryToDraft(row)), remove, [
      { label: "复制", onClick: (row) => editor.edit({ ...entryToDraft(row), _id: undefined }) },
    ]),
  ];

  return (
    <AdminPage
      title="入口管理"
      actions={
        <button type="button" className="btn btn-primary" onClick={() => editor.edit(NEW_ENTRY)}>
          添加
        </button>
      }
    >
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="入口列表" />
      {editor.dialog ? <EntryFormDialog key={editor.key} {...editor.dialog} /> : null}
      {confirmDialog}
    </AdminPage>
  );
}
