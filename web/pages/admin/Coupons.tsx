/**
 * /admin_coupon (seed 001 §2.14): the coupons of one type, Taobao or not, newest first. A new coupon
 * starts from the seed's defaults and the type shown; with 淘宝 on, adding makes 数量 coupons with
 * random codes in one call (batch_create) and 下载所有券码 saves the listed codes as a.txt. 删除所选
 * deletes every coupon listed. Customers' own lucky-draw coupons are listed with their owner.
 */
import { useState } from "react";
import {
  COUPON_TYPE_TEXT,
  COUPON_TYPES,
  type Coupon,
  CouponMsg,
  type CouponType,
  couponBatchInput,
  couponEffect,
  couponEffectText,
  couponInput,
  NEW_COUPON_DEFAULTS,
} from "../../../src/modules/coupon/schema.ts";
import { type CouponBatchForm, type CouponForm, call } from "../../api.ts";
import { AdminPage, AdminTable, editDeleteColumn } from "../../components/admin/AdminPage.tsx";
import { CONFIRM_DELETE_TEXT, useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { schemaErrors } from "../../components/admin/formErrors.ts";
import { SelectField, SwitchField } from "../../components/admin/inputs.tsx";
import { NumberField, numberFrom } from "../../components/admin/numbers.tsx";
import {
  type DraftDialogProps,
  type TextKey,
  useDraftEditor,
  useDraftForm,
} from "../../components/admin/useDraftForm.ts";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Field } from "../../components/Field.tsx";
import { formatDate } from "../../components/format.ts";
import type { Column } from "../../components/Table.tsx";

/** Seed 001 §9: the downloaded codes' file name. */
export const CODES_FILE_NAME = "a.txt";

const TYPE_OPTIONS = COUPON_TYPES.map((type) => ({ value: type, label: COUPON_TYPE_TEXT[type] }));

/** The form's state: numbers stay text while typed and are checked on save. */
export interface CouponDraft {
  _id?: string;
  name: string;
  type: CouponType;
  code: string;
  taobao: boolean;
  trafficG: string;
  traffixHaveLimitTime: boolean;
  traffixLimitTime: string;
  vipDay: string;
  forMoney: string;
  discount: string;
  useNumPerUser: string;
  NumberOfAuthorizations: string;
  /** YYYY-MM-DD, "" = never. */
  expireDay: string;
  /** The stored expiry (ms) of an edited coupon, sent back as it is while its day is not changed. */
  storedExpire?: { day: string; ms: number };
  /** How many a Taobao batch makes. */
  count: string;
}

const bytesToG = (bytes: number) => String(Number((bytes / 1024 ** 3).toFixed(6)));

export function newCouponDraft(type: CouponType, taobao: boolean): CouponDraft {
  return {
    name: "",
    type,
    code: "",
    taobao,
    trafficG: String(NEW_COUPON_DEFAULTS.trafficG),
    traffixHaveLimitTime: false,
    traffixLimitTime: "24",
    vipDay: String(NEW_COUPON_DEFAULTS.vipDay),
    forMoney: "",
    discount: "",
    useNumPerUser: String(NEW_COUPON_DEFAULTS.useNumPerUser),
    NumberOfAuthorizations: "1",
    expireDay: "",
    count: "1",
  };
}

export function couponToDraft(coupon: Coupon): CouponDraft {
  const day = coupon.expireTime ? formatDate(coupon.expireTime) : "";
  return {
    _id: coupon._id,
    name: coupon.name,
    type: coupon.type,
    code: coupon.code,
    taobao: coupon.taobao,
    trafficG: bytesToG(coupon.traffic),
    traffixHaveLimitTime: coupon.traffixHaveLimitTime,
    traffixLimitTime: String(coupon.traffixLimitTime),
    vipDay: String(coupon.vipDay),
    forMoney: String(coupon.forMoney),
    discount: String(coupon.discount),
    useNumPerUser: String(coupon.useNumPerUser),
    NumberOfAuthorizations: String(coupon.NumberOfAuthorizations),
    expireDay: day,
    storedExpire: coupon.expireTime ? { day, ms: coupon.expireTime } : undefined,
    count: "1",
  };
}

/** Copy (seed 001 §4): a new coupon of the same fields; the code is cleared too, codes being unique. */
export const copyDraft = (coupon: Coupon): CouponDraft => ({
  ...couponToDraft(coupon),
  _id: undefined,
  code: "",
});

/** A new coupon with 淘宝 on is made as a batch of random codes. */
export const isBatchDraft = (draft: CouponDraft) => !draft._id && draft.taobao;

/** The fields update_coupon / batch_create take; only the amount of the coupon's type is sent. */
function draftFields(draft: CouponDraft) {
  const expireTime =
    draft.storedExpire && draft.storedExpire.day === draft.expireDay
      ? draft.storedExpire.ms
      : draft.expireDay;
  return {
    name: draft.name.trim(),
    type: draft.type,
    taobao: draft.taobao,
    ...(draft.type === "freeUse"
      ? {
          trafficG: numberFrom(draft.trafficG),
          traffixHaveLimitTime: draft.traffixHaveLimitTime,
          traffixLimitTime: draft.traffixHaveLimitTime ? numberFrom(draft.traffixLimitTime) : 0,
        }
      : {}),
    ...(draft.type === "freeTime" ? { vipDay: numberFrom(draft.vipDay) } : {}),
    ...(draft.type === "cash" ? { forMoney: numberFrom(draft.forMoney) } : {}),
    ...(draft.type === "discount" ? { discount: numberFrom(draft.discount) } : {}),
    useNumPerUser: numberFrom(draft.useNumPerUser),
    NumberOfAuthorizations: numberFrom(draft.NumberOfAuthorizations),
    expireTime,
  };
}

export const draftToCoupon = (draft: CouponDraft): CouponForm => ({
  ...(draft._id ? { _id: draft._id } : {}),
  ...draftFields(draft),
  code: draft.code.trim(),
});

export const draftToBatch = (draft: CouponDraft): CouponBatchForm => ({
  ...draftFields(draft),
  count: numberFrom(draft.count),
});

/** Saves the listed codes as a.txt, one per line. */
function downloadCodes(codes: readonly string[]) {
  const url = URL.createObjectURL(new Blob([`${codes.join("\n")}\n`], { type: "text/plain;charset=utf-8" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = CODES_FILE_NAME;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference by now; the URL is only let go of later to be safe.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const limitText = (n: number) => (n === 0 ? "不限" : String(n));

function CouponFormDialog({ draft, onClose, onSaved }: DraftDialogProps<CouponDraft>) {
  const { form, set, bind, errors, dialog } = useDraftForm(draft, CouponMsg, onSaved, (form) =>
    isBatchDraft(form)
      ? {
          errors: schemaErrors(couponBatchInput, draftToBatch(form)),
          send: () => call("/api/yunying/coupon/batch_create", draftToBatch(form)),
        }
      : {
          errors: schemaErrors(couponInput, draftToCoupon(form)),
          send: () => call("/api/yunying/coupon/update_coupon", draftToCoupon(form)),
        },
  );
  const batch = isBatchDraft(form);

  const number = (key: TextKey<CouponDraft>, label: string, step = "1") => (
    <NumberField label={label} step={step} {...bind(key)} />
  );

  return (
    <FormDialog
      open
      title={form._id ? "编辑优惠券" : batch ? "批量生成淘宝优惠券" : "添加优惠券"}
      onClose={onClose}
      {...dialog}
    >
      <div className="admin-grid">
        <Field
          label="名称"
          value={form.name}
          error={errors.name}
          data-autofocus
          onChange={(event) => set("name", event.target.value)}
        />
        <SelectField
          label="类型"
          value={form.type}
          options={TYPE_OPTIONS}
          error={errors.type}
          onChange={(type) => set("type", type)}
        />
        {batch ? (
          number("count", "数量")
        ) : (
          <Field
            label="券码"
            value={form.code}
            placeholder="留空自动生成 6 位券码"
            error={errors.code}
            onChange={(event) => set("code", event.target.value)}
          />
        )}
        <SwitchField label="淘宝" checked={form.taobao} onChange={(on) => set("taobao", on)} />
        {form.type === "freeUse" ? number("trafficG", "流量(G)", "any") : null}
        {form.type === "freeTime" ? number("vipDay", "VIP天数") : null}
        {form.type === "cash" ? number("forMoney", "金额(元)", "0.01") : null}
        {form.type === "discount" ? number("discount", "折扣(0.1-1，0 为免单)", "0.01") : null}
        {form.type === "freeUse" ? (
          <SwitchField
            label="流量限时"
            checked={form.traffixHaveLimitTime}
            onChange={(on) => set("traffixHaveLimitTime", on)}
          />
        ) : null}
        {form.type === "freeUse" && form.traffixHaveLimitTime
          ? number("traffixLimitTime", "有效时长(小时)")
          : null}
        {number("useNumPerUser", "每人限用次数")}
        {number("NumberOfAuthorizations", "总次数")}
        <Field
          label="过期时间"
          type="date"
          value={form.expireDay}
          error={errors.expireTime}
          onChange={(event) => set("expireDay", event.target.value)}
        />
      </div>
      <p className="admin-hint">
        次数填 0 为不限；折扣 0.9 即九折；过期时间留空为永不过期。
        {batch ? " 淘宝券按数量批量生成，每张一个随机 6 位券码。" : ""}
      </p>
    </FormDialog>
  );
}

export function AdminCouponsPage() {
  const list = useRemoteList(() => call("/api/yunying/coupon/coupon_list", {}));
  const [type, setType] = useState<CouponType>("freeUse");
  const [taobao, setTaobao] = useState(false);
  const editor = useDraftEditor<CouponDraft>(list.reload);
  const { confirmedCall, dialog: confirmDialog } = useConfirmedCall(list.reload);

  const shown = list.rows.filter((c) => c.type === type && c.taobao === taobao);
  const position = new Map(shown.map((c, i) => [c._id, i + 1]));

  const remove = (coupon: Coupon) =>
    confirmedCall(
      { message: CONFIRM_DELETE_TEXT, confirmText: "删除" },
      () => call("/api/yunying/coupon/delete_coupon", { id_list: [coupon._id] }),
      CouponMsg.deleted,
      CouponMsg.deleteFailed,
    );

  const removeShown = () =>
    confirmedCall(
      {
        title: CouponMsg.confirmDeleteAllTitle,
        message: `${CouponMsg.confirmDeleteAll} 共 ${shown.length} 张。`,
        confirmText: "全部删除",
      },
      () => call("/api/yunying/coupon/delete_coupon", { id_list: shown.map((c) => c._id) }),
      CouponMsg.deletedAll,
      CouponMsg.deleteAllFailed,
    );

  const columns: Column<Coupon>[] = [
    { key: "index", title: "序号", render: (row) => position.get(row._id), className: "admin-num" },
    {
      key: "name",
      title: "名称",
      render: (row) => (
        <>
          {row.name || "-"}
          {row.ownerEmail ? <span className="coupon-owner">抽奖所得 · {row.ownerEmail}</span> : null}
        </>
      ),
    },
    { key: "type", title: "类型", render: (row) => COUPON_TYPE_TEXT[row.type] },
    { key: "code", title: "券码", render: (row) => <code className="coupon-code">{row.code}</code> },
    { key: "effect", title: "功能", render: (row) => couponEffectText(couponEffect(row)) },
    {
      key: "perUser",
      title: "每人限用",
      render: (row) => limitText(row.useNumPerUser),
      className: "admin-num",
    },
    {
      key: "total",
      title: "总次数",
      render: (row) => limitText(row.NumberOfAuthorizations),
      className: "admin-num",
    },
    { key: "used", title: "已使用", render: (row) => row.authTimes, className: "admin-num" },
    {
      key: "expire",
      title: "过期时间",
      render: (row) => (row.expireTime ? formatDate(row.expireTime) : "永不过期"),
    },
    {
      ...editDeleteColumn((row) => editor.edit(couponToDraft(row)), remove, [
        { label: "复制", onClick: (row) => editor.edit(copyDraft(row)) },
      ]),
      className: "admin-sticky-actions",
    },
  ];

  return (
    <AdminPage
      title="优惠券管理"
      actions={
        <>
          {taobao ? (
            <button
              type="button"
              className="btn"
              disabled={shown.length === 0}
              onClick={() => downloadCodes(shown.map((c) => c.code))}
            >
              下载所有券码
            </button>
          ) : null}
          <button
            type="button"
            className="btn admin-danger-text"
            disabled={shown.length === 0}
            onClick={removeShown}
          >
            删除所选
          </button>
          <button
            type="button"
            className="btn btn-primary"
            onClick={() => editor.edit(newCouponDraft(type, taobao))}
          >
            添加
          </button>
        </>
      }
    >
      <div className="coupon-filter">
        <SelectField label="类型" value={type} options={TYPE_OPTIONS} onChange={setType} />
        <label className="admin-check">
          <input type="checkbox" checked={taobao} onChange={(event) => setTaobao(event.target.checked)} />
          <span>淘宝</span>
        </label>
      </div>
      <AdminTable list={list} rows={shown} columns={columns} rowKey={(row) => row._id} caption="优惠券列表" />
      {editor.dialog ? <CouponFormDialog key={editor.key} {...editor.dialog} /> : null}
      {confirmDialog}
    </AdminPage>
  );
}
