/**
 * /admin_combos (seed 001 §2.8): the products. Traffic and the daily quota are edited in G and sent
 * in bytes (G × 1024³); a new combo starts from the seed's defaults (NEW_COMBO_DEFAULTS). The form
 * is checked with the server's comboInput before saving; a bad value is marked on its field.
 * 流量有效期 is the seed's `duration`: days the traffic lasts after payment, 0 = permanent.
 */

import { DEFAULT_DAILY_LIMIT, formatGB, GB } from "../../../src/lib/traffic.ts";
import { type Combo, ComboMsg, comboInput, NEW_COMBO_DEFAULTS } from "../../../src/modules/combo/schema.ts";
import { type ComboForm, call } from "../../api.ts";
import { AdminPage, AdminTable, editDeleteColumn } from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { schemaErrors } from "../../components/admin/formErrors.ts";
import { CheckListField, TextAreaField } from "../../components/admin/inputs.tsx";
import { readNumbers } from "../../components/admin/numbers.tsx";
import { type DraftDialogProps, useDraftEditor, useDraftForm } from "../../components/admin/useDraftForm.ts";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Field } from "../../components/Field.tsx";
import type { Column } from "../../components/Table.tsx";

/** The form's state: numbers stay text while typed and are checked on save. */
export interface ComboDraft {
  _id?: string;
  name: string;
  price: string;
  trafficG: string;
  vipDuration: string;
  /** Days the traffic lasts after payment; 0 = never expires. */
  duration: string;
  /** Daily quota of a time pack in G; blank = the server default (50 G). */
  limitG: string;
  additionPersend: string;
  deviceNum: string;
  speed: string;
  orderID: string;
  permissionsGain: string[];
  permissionDuration: string;
  permissionsDesc: string;
}

type NumberKey =
  | "price"
  | "trafficG"
  | "vipDuration"
  | "duration"
  | "additionPersend"
  | "deviceNum"
  | "orderID"
  | "permissionDuration";

/** G (possibly fractional) to whole bytes. */
export const gToBytes = (g: number) => Math.round(g * GB);
/** Bytes to G for the form, without float noise (1.5 G stays "1.5"). */
const bytesToG = (bytes: number) => String(Number((bytes / GB).toFixed(6)));

export function newComboDraft(): ComboDraft {
  const d = NEW_COMBO_DEFAULTS;
  return {
    name: d.name,
    price: String(d.price),
    trafficG: String(d.trafficG),
    vipDuration: String(d.vipDuration),
    duration: String(d.duration),
    limitG: bytesToG(DEFAULT_DAILY_LIMIT),
    additionPersend: String(d.additionPersend),
    deviceNum: String(d.deviceNum),
    speed: d.speed,
    orderID: String(d.orderID),
    permissionsGain: [...d.permissionsGain],
    permissionDuration: String(d.permissionDuration),
    permissionsDesc: d.permissionsDesc,
  };
}

export function comboToDraft(combo: Combo): ComboDraft {
  return {
    _id: combo._id,
    name: combo.name,
    price: String(combo.price),
    trafficG: bytesToG(combo.traffic),
    vipDuration: String(combo.vipDuration),
    duration: String(combo.duration),
    limitG: bytesToG(combo.limit),
    additionPersend: String(combo.additionPersend),
    deviceNum: String(combo.deviceNum),
    speed: combo.speed,
    orderID: String(combo.orderID),
    permissionsGain: [...combo.permissionsGain],
    permissionDuration: String(combo.permissionDuration),
    permissionsDesc: combo.permissionsDesc,
  };
}

/** The form is a time pack (and shows the daily quota) once a number of days is typed. */
const isTimePackDraft = (draft: ComboDraft) => Number(draft.vipDuration) > 0;

const NUMBER_KEYS: readonly NumberKey[] = [
  "price",
  "trafficG",
  "vipDuration",
  "duration",
  "additionPersend",
  "deviceNum",
  "orderID",
  "permissionDuration",
];

/** The payload of update_combo; comboInput judges it (a number left blank is NaN: 请输入数字). */
export function draftToCombo(draft: ComboDraft): ComboForm {
  // A time pack's daily quota is optional: blank means the server's default.
  const withLimit = isTimePackDraft(draft) && draft.limitG.trim() !== "";
  const numbers = readNumbers(draft, withLimit ? [...NUMBER_KEYS, "limitG" as const] : NUMBER_KEYS);
  const limit = withLimit ? gToBytes(numbers.limitG) : undefined;
  return {
    ...(draft._id ? { _id: draft._id } : {}),
    name: draft.name.trim(),
    price: numbers.price,
    traffic: gToBytes(numbers.trafficG),
    vipDuration: numbers.vipDuration,
    duration: numbers.duration,
    ...(limit === undefined ? {} : { limit }),
    additionPersend: numbers.additionPersend,
    deviceNum: numbers.deviceNum,
    speed: draft.speed.trim(),
    orderID: numbers.orderID,
    permissionsGain: draft.permissionsGain,
    permissionDuration: numbers.permissionDuration,
    permissionsDesc: draft.permissionsDesc,
  };
}

/** The form fields that edit payload keys of another name (in G, not bytes). */
const FIELD_OF = { traffic: "trafficG", limit: "limitG" };

function ComboFormDialog({
  draft,
  permissions,
  onClose,
  onSaved,
}: DraftDialogProps<ComboDraft> & { permissions: { value: string; label: string }[] }) {
  const { form, set, errors, dialog } = useDraftForm(draft, ComboMsg, onSaved, (form) => {
    const combo = draftToCombo(form);
    return {
      errors: schemaErrors(comboInput, combo, FIELD_OF),
      send: () => call("/api/admin/combo/update_combo", combo),
    };
  });
  const isTimePack = isTimePackDraft(form);

  const numberField = (key: keyof ComboDraft & string, label: string, step = "1", extra = {}) => (
    <Field
      label={label}
      type="number"
      inputMode="decimal"
      step={step}
      value={form[key] as string}
      error={errors[key]}
      onChange={(event) => set(key, event.target.value)}
      {...extra}
    />
  );

  return (
    <FormDialog open title={form._id ? "编辑商品" : "添加商品"} onClose={onClose} size="lg" {...dialog}>
      <div className="admin-grid">
        <Field
          label="名称"
          value={form.name}
          error={errors.name}
          data-autofocus
          onChange={(event) => set("name", event.target.value)}
        />
        {numberField("price", "价格(元)", "0.01")}
        {numberField("trafficG", "流量(G)", "any")}
        {numberField("duration", "流量有效期(天)", "1")}
        {numberField("vipDuration", "VIP天数", "1")}
        {isTimePack ? numberField("limitG", "每日额度(G)", "any", { placeholder: "留空为 50" }) : null}
        {numberField("additionPersend", "赠送比例(%)", "any")}
        {numberField("deviceNum", "设备数", "1")}
        <Field
          label="速度"
          value={form.speed}
          error={errors.speed}
          onChange={(event) => set("speed", event.target.value)}
        />
        {numberField("orderID", "排序", "1")}
        {numberField("permissionDuration", "权限时长(天)", "1")}
      </div>
      <CheckListField
        label="获得权限"
        options={permissions}
        selected={form.permissionsGain}
        error={errors.permissionsGain}
        empty="暂无权限，请先在权限管理中添加"
        onChange={(selected) => set("permissionsGain", selected)}
      />
      <TextAreaField
        label="权限说明"
        value={form.permissionsDesc}
        error={errors.permissionsDesc}
        onChange={(value) => set("permissionsDesc", value)}
      />
      <p className="admin-hint">
        VIP天数大于 0 为时间套餐（每日额度），等于 0 为流量包。赠送比例 20 表示多送 20%
        流量。流量有效期为付款后流量可用的天数，到期未用完的部分清除；0 为永久有效。
      </p>
    </FormDialog>
  );
}

export function AdminCombosPage() {
  const list = useRemoteList(() => call("/api/admin/combo/list", {}));
  const permissions = useRemoteList(() => call("/api/admin/permissions/list", {}));
  const editor = useDraftEditor<ComboDraft>(list.reload);
  const { confirmDelete, dialog: confirmDialog } = useConfirmedCall(list.reload);

  const permissionName = new Map(permissions.rows.map((p) => [p._id, p.name]));
  const permissionOptions = permissions.rows.map((p) => ({ value: p._id, label: p.name }));

  const remove = (combo: Combo) =>
    confirmDelete(
      `商品「${combo.name}」将被删除。`,
      () => call("/api/admin/combo/delete_combo", { id: combo._id }),
      ComboMsg,
    );

  const columns: Column<Combo>[] = [
    { key: "id", title: "ID", render: (row) => <code className="admin-id">{row._id}</code> },
    { key: "name", title: "名称", render: (row) => row.name },
    { key: "price", title: "价格(元)", render: (row) => row.price.toFixed(2), className: "admin-num" },
    {
      key: "traffic",
      title: "流量(G)",
      // A duration is shown with the traffic it limits (the seed's table has no column for it).
      render: (row) =>
        row.duration > 0 ? `${formatGB(row.traffic)} · ${row.duration} 天` : formatGB(row.traffic),
      className: "admin-num",
    },
    { key: "vip", title: "VIP天数", render: (row) => row.vipDuration, className: "admin-num" },
    { key: "bonus", title: "赠送比例(%)", render: (row) => row.additionPersend, className: "admin-num" },
    { key: "devices", title: "设备数", render: (row) => row.deviceNum, className: "admin-num" },
    {
      key: "permissions",
      title: "获得权限",
      render: (row) =>
        row.permissionsGain.length === 0
          ? "无"
          : row.permissionsGain.map((id) => permissionName.get(id) ?? id).join("、"),
      className: "admin-wrap",
    },
    {
      key: "duration",
      title: "权限时长(天)",
      render: (row) => row.permissionDuration,
      className: "admin-num",
    },
    editDeleteColumn((row) => editor.edit(comboToDraft(row)), remove),
  ];

  return (
    <AdminPage
      title="商品管理"
      actions={
        <button type="button" className="btn btn-primary" onClick={() => editor.edit(newComboDraft())}>
          添加
        </button>
      }
    >
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="商品列表" />
      {editor.dialog ? (
        <ComboFormDialog key={editor.key} {...editor.dialog} permissions={permissionOptions} />
      ) : null}
      {confirmDialog}
    </AdminPage>
  );
}
