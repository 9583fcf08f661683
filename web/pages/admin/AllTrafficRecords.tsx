/**
 * /all_traffic_records (seed 001 §2.11): every user's traffic records of the last days (2 unless
 * another number is asked for), one type or all, newest first.
 */
import { type FormEvent, useState } from "react";
import { formatGB, formatSignedGB } from "../../../src/lib/traffic.ts";
import {
  type AdminTrafficRecord,
  ALL_TRAFFIC_RECORD_DAYS,
  ALL_TRAFFIC_RECORD_LIMIT,
} from "../../../src/modules/traffic/admin-schema.ts";
import {
  ALL_TRAFFIC_FILTERS,
  TRAFFIC_TYPE_TEXT,
  type TrafficFilter,
} from "../../../src/modules/traffic/schema.ts";
import { call } from "../../api.ts";
import { AdminPage, AdminTable } from "../../components/admin/AdminPage.tsx";
import { SearchButton, useWholeNumber } from "../../components/admin/filters.tsx";
import { SelectField } from "../../components/admin/inputs.tsx";
import { NumberField } from "../../components/admin/numbers.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import type { Column } from "../../components/Table.tsx";

interface Query {
  type: TrafficFilter;
  day_num: number;
}

const TYPE_OPTIONS = ALL_TRAFFIC_FILTERS.map((item) => ({ value: item.key, label: item.label }));

const changeClass = (bytes: number) => (bytes > 0 ? "traffic-plus" : bytes < 0 ? "traffic-minus" : "");

const columns: Column<AdminTrafficRecord>[] = [
  { key: "uid", title: "用户ID", render: (r) => <code className="admin-uid">{r.uid}</code> },
  { key: "email", title: "邮箱", render: (r) => r.email || "无" },
  { key: "day", title: "日期", render: (r) => r.day },
  { key: "type", title: "类型", render: (r) => TRAFFIC_TYPE_TEXT[r.type] ?? r.type },
  {
    key: "change",
    title: "流量变化(G)",
    render: (r) => <span className={changeClass(r.trafficChange)}>{formatSignedGB(r.trafficChange)}</span>,
  },
  { key: "spend", title: "累计消耗(G)", render: (r) => formatGB(r.allSpend) },
  { key: "traffic", title: "剩余流量(G)", render: (r) => formatGB(r.allTraffic) },
  { key: "desc", title: "说明", render: (r) => r.desc },
];

export function AdminAllTrafficRecordsPage() {
  const [type, setType] = useState<TrafficFilter>("all");
  const days = useWholeNumber(ALL_TRAFFIC_RECORD_DAYS, { max: 90, message: "请输入1到90的整数" });
  const [truncated, setTruncated] = useState(false);
  const list = useRemoteList(
    async (query: Query) => {
      const answer = await call("/api/admin/traffic_spend/traffic_records", query);
      setTruncated(answer.data?.truncated ?? false);
      return { ...answer, data: answer.data?.records ?? null } as typeof answer & {
        data: AdminTrafficRecord[];
      };
    },
    { type: "all", day_num: ALL_TRAFFIC_RECORD_DAYS },
  );

  const search = (next: TrafficFilter, event?: FormEvent) => {
    event?.preventDefault();
    const dayNum = days.read();
    if (dayNum === undefined) return;
    void list.reload({ type: next, day_num: dayNum });
  };

  return (
    <AdminPage title="全部流量记录">
      <form className="admin-filter records-filter" onSubmit={(event) => search(type, event)}>
        <SelectField
          label="记录类型"
          className="records-filter-type"
          value={type}
          options={TYPE_OPTIONS}
          onChange={(next) => {
            setType(next);
            search(next);
          }}
        />
        <NumberField label="天数" {...days.field} />
        <SearchButton list={list} />
      </form>
      {truncated ? (
        <p className="card-note">
          记录过多，只显示最新的 {ALL_TRAFFIC_RECORD_LIMIT} 条，请缩短天数或选择类型。
        </p>
      ) : null}
      <AdminTable list={list} columns={columns} rowKey={(r) => String(r._id)} caption="全部流量记录" />
    </AdminPage>
  );
}
