/**
 * /admin_prize (seed 001 §2.15): the lucky-draw prizes with the statistics (total weight, Σ traffic
 * × weight in G, the traffic one draw gives on average — the seed's "win rate" — and the real win
 * rate), add (+), edit, delete after confirmation, and an edit modal with the
 * prize image. The form is checked with the server's prizeInput before saving; a new prize starts
 * from the seed's defaults (一等奖, 10 G, 0 days, weight 1, no discount coupon).
 */

import { formatTraffic } from "../../../src/lib/traffic.ts";
import {
  NEW_PRIZE_DEFAULTS,
  type Prize,
  PrizeMsg,
  prizeDiscountText,
  prizeInput,
  prizeStats,
} from "../../../src/modules/prize/schema.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable, editDeleteColumn } from "../../components/admin/AdminPage.tsx";
import { useConfirmedCall } from "../../components/admin/ConfirmDialog.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { schemaErrors } from "../../components/admin/formErrors.ts";
import { FieldFrame, SwitchField, TextAreaField } from "../../components/admin/inputs.tsx";
import { NumberField, readNumbers } from "../../components/admin/numbers.tsx";
import { type DraftDialogProps, useDraftEditor, useDraftForm } from "../../components/admin/useDraftForm.ts";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Field } from "../../components/Field.tsx";
import { ImageUpload } from "../../components/ImageUpload.tsx";
import type { Column } from "../../components/Table.tsx";

/** The form's state: numbers stay text while typed and are checked on save. */
export interface PrizeDraft {
  _id?: string;
  name: string;
  gainTraffic: string;
  gainVipTime: string;
  weight: string;
  desc: string;
  hasDiscountCoupon: boolean;
  discountValue: string;
  discountDuration: string;
  photoUrl: string;
}

const NUMBER_KEYS = ["gainTraffic", "gainVipTime", "weight", "discountValue", "discountDuration"] as const;

export function newPrizeDraft(): PrizeDraft {
  const d = NEW_PRIZE_DEFAULTS;
  return {
    name: d.name,
    gainTraffic: String(d.gainTraffic),
    gainVipTime: String(d.gainVipTime),
    weight: String(d.weight),
    desc: d.desc,
    hasDiscountCoupon: d.hasDiscountCoupon,
    discountValue: String(d.discountValue),
    discountDuration: String(d.discountDuration),
    photoUrl: d.photoUrl,
  };
}

export function prizeToDraft(prize: Prize): PrizeDraft {
  return {
    _id: prize._id,
    name: prize.name,
    gainTraffic: String(prize.gainTraffic),
    gainVipTime: String(prize.gainVipTime),
    weight: String(prize.weight),
    desc: prize.desc,
    hasDiscountCoupon: prize.hasDiscountCoupon,
    // A prize saved without a coupon keeps the neutral 1 / 1: offer the presets when it is switched on.
    discountValue: String(prize.hasDiscountCoupon ? prize.discountValue : NEW_PRIZE_DEFAULTS.discountValue),
    discountDuration: String(
      prize.hasDiscountCoupon ? prize.discountDuration : NEW_PRIZE_DEFAULTS.discountDuration,
    ),
    photoUrl: prize.photoUrl,
  };
}

/** The payload of prize/update; prizeInput judges it (a number left blank is NaN: 请输入数字). */
export function draftToPrize(draft: PrizeDraft) {
  const numbers = readNumbers(draft, NUMBER_KEYS);
  return {
    ...(draft._id ? { _id: draft._id } : {}),
    name: draft.name.trim(),
    gainTraffic: numbers.gainTraffic,
    gainVipTime: numbers.gainVipTime,
    weight: numbers.weight,
    desc: draft.desc.trim(),
    hasDiscountCoupon: draft.hasDiscountCoupon,
    ...(draft.hasDiscountCoupon
      ? { discountValue: numbers.discountValue, discountDuration: numbers.discountDuration }
      : {}),
    photoUrl: draft.photoUrl,
  };
}

function PrizeFormDialog({ draft, onClose, onSaved }: DraftDialogProps<PrizeDraft>) {
  const { form, set, bind, errors, dialog } = useDraftForm(draft, PrizeMsg, onSaved, (form) => {
    const prize = draftToPrize(form);
    return { errors: schemaErrors(prizeInput, prize), send: () => call("/api/yunying/prize/update", prize) };
  });

  const numberField = (key: (typeof NUMBER_KEYS)[number], label: string, step = "1") => (
    <NumberField label={label} step={step} {...bind(key)} />
  );

  return (
    <FormDialog open title={form._id ? "编辑奖品" : "添加奖品"} onClose={onClose} size="lg" {...dialog}>
      <div className="admin-grid">
        <Field
          label="名称"
          value={form.name}
          error={errors.name}
          data-autofocus
          onChange={(event) => set("name", event.target.value)}
        />
        {numberField("gainTraffic", "奖励流量(G)", "any")}
        {numberField("gainVipTime", "奖励时长(天)")}
        {numberField("weight", "权重")}
      </div>
      <SwitchField
        label="赠送折扣券"
        hint="中奖者获得一张仅限本人使用一次的折扣券"
        checked={form.hasDiscountCoupon}
        onChange={(checked) => set("hasDiscountCoupon", checked)}
      />
      {form.hasDiscountCoupon ? (
        <div className="admin-grid">
          {numberField("discountValue", "折扣(0-1，0.9 即九折，0 为免单)", "0.1")}
          {numberField("discountDuration", "折扣券有效天数")}
        </div>
      ) : null}
      <FieldFrame label="奖品图片" hint="jpg、png、webp，图片限制在4M内" error={errors.photoUrl}>
        <ImageUpload
          label="上传奖品图片"
          value={form.photoUrl}
          onChange={(photoUrl) => set("photoUrl", photoUrl)}
        />
      </FieldFrame>
      <TextAreaField
        label="描述"
        value={form.desc}
        error={errors.desc}
        onChange={(value) => set("desc", value)}
      />
    </FormDialog>
  );
}

/** "8 折 · 5 天" (discountValue 0.8), "免单 · 5 天" (0) or 无. */
const couponText = (prize: Prize) =>
  prize.hasDiscountCoupon ? `${prizeDiscountText(prize.discountValue)} · ${prize.discountDuration} 天` : "无";

export function AdminPrizesPage() {
  const list = useRemoteList(async () => {
    const answer = await call("/api/yunying/prize/list", {});
    return { ...answer, data: answer.data?.prizes ?? null } as typeof answer & { data: Prize[] };
  });
  const editor = useDraftEditor<PrizeDraft>(list.reload);
  const { confirmDelete, dialog: confirmDialog } = useConfirmedCall(list.reload);
  const stats = prizeStats(list.rows);

  const remove = (prize: Prize) =>
    confirmDelete(
      `奖品「${prize.name}」将被删除，已抽中的记录保留。`,
      () => call("/api/yunying/prize/delete", { id: prize._id }),
      PrizeMsg,
    );

  const share = (prize: Prize) =>
    stats.totalWeight > 0 ? `${((prize.weight / stats.totalWeight) * 100).toFixed(2)}%` : "—";

  const columns: Column<Prize>[] = [
    {
      key: "photo",
      title: "图片",
      render: (row) =>
        row.photoUrl ? (
          <img className="prize-thumb" src={row.photoUrl} alt={`${row.name}的图片`} />
        ) : (
          <span className="prize-thumb prize-thumb-empty" title="无图片">
            —
          </span>
        ),
    },
    { key: "name", title: "名称", render: (row) => row.name },
    { key: "traffic", title: "流量(G)", render: (row) => row.gainTraffic, className: "admin-num" },
    { key: "vip", title: "时长(天)", render: (row) => row.gainVipTime, className: "admin-num" },
    { key: "weight", title: "权重", render: (row) => row.weight, className: "admin-num" },
    { key: "share", title: "概率", render: share, className: "admin-num" },
    { key: "coupon", title: "折扣券", render: couponText },
    { key: "desc", title: "描述", render: (row) => row.desc || "—", className: "admin-wrap" },
    editDeleteColumn((row) => editor.edit(prizeToDraft(row)), remove),
  ];

  return (
    <AdminPage
      title="抽奖管理"
      actions={
        <button
          type="button"
          className="btn btn-primary"
          aria-label="添加奖品"
          onClick={() => editor.edit(newPrizeDraft())}
        >
          + 添加
        </button>
      }
    >
      {list.loaded && !list.failed ? (
        <dl className="prize-stats" aria-label="奖品统计">
          <div>
            <dt>总权重</dt>
            <dd>{stats.totalWeight}</dd>
          </div>
          <div>
            <dt>流量×权重(G)</dt>
            <dd>{stats.trafficWeightG}</dd>
          </div>
          <div>
            <dt>每次期望流量</dt>
            <dd title="流量×权重 ÷ 总权重：平均每次抽奖送出的流量">{formatTraffic(stats.expectedTraffic)}</dd>
          </div>
          <div>
            <dt>中奖率</dt>
            <dd title="送出流量、时长或折扣券的奖品所占的权重比例">{stats.winRate}</dd>
          </div>
        </dl>
      ) : null}
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="奖品列表" />
      {editor.dialog ? <PrizeFormDialog key={editor.key} {...editor.dialog} /> : null}
      {confirmDialog}
    </AdminPage>
  );
}
