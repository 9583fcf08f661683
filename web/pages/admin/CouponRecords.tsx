/**
 * /coupon_records (seed 001 §2.13): the latest uses of coupons, 100 unless another number is asked
 * for; a use given back (an order cancelled) shows 已恢复.
 */
import type { FormEvent } from "react";
import {
  type CouponUseRecord,
  couponEffectText,
  couponUseEffect,
} from "../../../src/modules/coupon/schema.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable } from "../../components/admin/AdminPage.tsx";
import { SearchButton, useWholeNumber } from "../../components/admin/filters.tsx";
import { NumberField } from "../../components/admin/numbers.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
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
  const count = useWholeNumber(DEFAULT_RECORD_COUNT);
  const list = useRemoteList(
    (query: { limit: number }) => call("/api/yunying/coupon/coupon_record_list", query),
    {
      limit: DEFAULT_RECORD_COUNT,
    },
  );

  const search = (event: FormEvent) => {
    event.preventDefault();
    const limit = count.read();
    if (limit === undefined) return;
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
        <NumberField label="数量" {...count.field} />
        <SearchButton list={list} />
      </form>
      <AdminTable list={list} columns={columns} rowKey={(row) => row._id} caption="优惠券使用记录" />
    </AdminPage>
  );
}
