/**
 * /coupon_records (seed 001 §2.13): the latest uses of coupons, 100 unless another number is asked
 * for; a use given back (an order cancelled) shows 已恢复.
 */
import { type FormEvent, useState } from "react";
import {
  type CouponUseRecord,
  couponEffectText,
  couponUseEffect,
} from "../../../src/modules/coupon/schema.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable } from "../../components/admin/AdminPage.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { Field } from "../../components/Field.tsx";
import { formatDateTime } from "../../components/format.ts";
import type { Column } from "../../components/Table.tsx";

/** Seed 001 §9: the coupon records ask for the latest 100 by default. */
export const DEFAULT_RECORD_COUNT = 100;

function StatusBadge({ restored }: { restored: boolean }) {
  return (
    <span className={`badge ${restored ? "admin-status-off" : "admin-status-ok"}`}>
      {restored ? "已恢复" : "已使用"}
    </span>
  );
}

export function AdminCouponRecordsPage() {
  const [count, setCount] = useState(String(DEFAULT_RECORD_COUNT));
  const [countError, setCountError] = useState<string>();
  const list = useRemoteList(
    (query: { limit: number }) => call("/api/yunying/coupon/coupon_record_list", query),
    {
      limit: DEFAULT_RECORD_COUNT,
    },
  );

  const search = (event: FormEvent) => {
    event.preventDefault();
    const limit = Number(count);
    if (!Number.isInteger(limit) || limit < 1) {
      setCountError("请输入正整数");
      return;
    }
    setCountError(undefined);
    void list.reload({ limit });
  };

  const columns: Column<CouponUseRecord>[] = [
    { key: "email", title: "邮箱", render: (row) => row.email || "无" },
    { key: "code", title: "券码", render: (row) => <code className="coupon-code">{row.code}</code> },
    { key: "effect", title: "效果", render: (row) => couponEffectText(couponUseEffect(row)) },
    { key: "time", title: "时间", render: (row) => formatDateTime(row.time) },
    { key: "status", title: "状态", render: (row) => <StatusBadge restored={row.is_delete} /> },
  ];

  return (
    <AdminPage title="优惠券记录">
      <form className="admin-filter" onSubmit={search}>
        <Field
          label="数量"
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          value={count}
          error={countError}
          onChange={(event) => setCount(event.target.value)}
        />
        <button type="submit" className="btn btn-primary" disabled={list.loading && list.loaded}>
          查询
        </button>
      </form>
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="优惠券使用记录" />
    </AdminPage>
  );
}
