import { useEffect, useState } from "react";
import { formatGB, formatSignedGB } from "../../src/lib/traffic.ts";
import {
  TRAFFIC_FILTERS,
  TRAFFIC_RECORD_DAYS,
  TRAFFIC_TYPE_TEXT,
  type TrafficFilter,
  type TrafficRecord,
} from "../../src/modules/traffic/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { Pager, usePaged } from "../components/Pager.tsx";
import { type Column, Table } from "../components/Table.tsx";
import { useSession } from "../session.ts";

const EMPTY_TEXT = "暂无流量记录";
const NOTE =
  "节点流量每天汇总为一条「流量消耗」记录，随使用更新；套餐抵扣为时间套餐每日额度承担的部分，不占用剩余流量。";

const changeClass = (bytes: number) => (bytes > 0 ? "traffic-plus" : bytes < 0 ? "traffic-minus" : undefined);

const COLUMNS: Column<TrafficRecord>[] = [
  { key: "day", title: "日期", render: (record) => record.day },
  { key: "type", title: "类型", render: (record) => TRAFFIC_TYPE_TEXT[record.type] ?? record.type },
  { key: "desc", title: "说明", render: (record) => record.desc || "—" },
  {
    key: "change",
    title: "流量变化 (G)",
    className: "num",
    render: (record) => (
      <span className={changeClass(record.trafficChange)}>{formatSignedGB(record.trafficChange)}</span>
    ),
  },
  {
    key: "exemption",
    title: "套餐抵扣 (G)",
    className: "num",
    render: (record) => formatGB(record.exemptionTraffic),
  },
  { key: "left", title: "剩余流量 (G)", className: "num", render: (record) => formatGB(record.allTraffic) },
  { key: "spent", title: "累计使用 (G)", className: "num", render: (record) => formatGB(record.allSpend) },
  { key: "time", title: "更新时间", render: (record) => formatDateTime(record.updateTime) },
];

function RecordTable({ records }: { records: TrafficRecord[] }) {
  const { slice, pager } = usePaged(records);
  return (
    <>
      <Table
        columns={COLUMNS}
        rows={slice}
        rowKey={(record) => `${record.type}-${record.day}-${record.updateTime}`}
        caption="流量记录"
      />
      <Pager {...pager} />
    </>
  );
}

/** The logged-in user's records of one filter; null while loading. */
function useTrafficRecords(userId: string, filter: TrafficFilter): TrafficRecord[] | null {
  const [records, setRecords] = useState<TrafficRecord[] | null>(null);
  useEffect(() => {
    if (!userId) return;
    let current = true;
    setRecords(null);
    void call("/api/traffic/my_traffic_records", { type: filter }).then((answer) => {
      if (current) setRecords(answer.code === Code.ok ? answer.data : []);
    });
    return () => {
      current = false;
    };
  }, [userId, filter]);
  return records;
}

export function TrafficRecordsPage() {
  const session = useSession();
  const userId = session.user?._id ?? "";
  const [filter, setFilter] = useState<TrafficFilter>("all");
  const records = useTrafficRecords(userId, filter);

  if (session.ready && !userId) {
    return (
      <div className="page">
        <h1 className="page-title">流量记录</h1>
        <LoginPrompt
          title="登录后查看流量记录"
          note={`登录后可查看最近 ${TRAFFIC_RECORD_DAYS} 天的流量消耗、购买与转赠记录。`}
        />
      </div>
    );
  }
  return (
    <div className="page">
      <h1 className="page-title">流量记录</h1>
      <p className="card-note">
        仅显示最近 {TRAFFIC_RECORD_DAYS} 天的记录。{NOTE}
      </p>
      <div className="traffic-toolbar">
        <label className="traffic-filter">
          <span>记录类型</span>
          <select
            className="input"
            value={filter}
            disabled={!userId}
            onChange={(event) => setFilter(event.target.value as TrafficFilter)}
          >
            {TRAFFIC_FILTERS.map((item) => (
              <option key={item.key} value={item.key}>
                {item.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {records === null ? (
        <div className="spinner page-spinner" role="status" aria-label="加载中" />
      ) : records.length === 0 ? (
        // Not the table's own empty row: that one centres across all columns, off a phone's screen.
        <p className="table-wrap traffic-empty">{EMPTY_TEXT}</p>
      ) : (
        <RecordTable key={filter} records={records} />
      )}
    </div>
  );
}
