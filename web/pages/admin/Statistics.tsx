/**
 * /admin_stastic (seed 001 §2.10): remaining traffic and running time packages as tiles, charts of
 * income, traffic and active users over 7 / 30 / 90 days, and the seed's three tables for the
 * last 7 days (payments and check-ins, traffic, lucky draw). One basic_stastic call per range.
 */
import { lazy, Suspense, useEffect, useRef, useState } from "react";
import {
  BASIC_STASTIC_CALL,
  type BasicStastic,
  STATS_DEFAULT_DAYS,
  STATS_RANGES,
  type StasticDay,
} from "../../../src/modules/stats/schema.ts";
import { Code } from "../../../src/rpc/codes.ts";
import { call } from "../../api.ts";
import { AdminPage, LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { Segmented } from "../../components/Segmented.tsx";
import { type Column, EMPTY_TEXT, Table } from "../../components/Table.tsx";

// uPlot is fetched with this page's charts only (its own chunk), never in the first download.
const StatsCharts = lazy(() => import("./StatsCharts.tsx"));

type Range = `${(typeof STATS_RANGES)[number]}`;
const RANGE_ITEMS = STATS_RANGES.map((days) => ({ key: `${days}` as Range, label: `${days} 天` }));

const dayColumn: Column<StasticDay> = { key: "day", title: "日期", render: (r) => r.day };
const numberColumn = (key: keyof StasticDay, title: string, digits = 0): Column<StasticDay> => ({
  key,
  title,
  className: "num",
  render: (r) => (digits ? (r[key] as number).toFixed(digits) : r[key]),
});

const TABLES: { caption: string; columns: Column<StasticDay>[] }[] = [
  {
    caption: "支付与签到",
    columns: [
      dayColumn,
      numberColumn("signUseNum", "签到人数"),
      numberColumn("payNum", "支付笔数"),
      numberColumn("income", "收入（元）", 2),
    ],
  },
  {
    caption: "流量使用",
    columns: [
      dayColumn,
      numberColumn("normalUserNum", "流量用户数"),
      numberColumn("normalTraffic", "流量消耗（G）", 2),
      numberColumn("normalAvg", "人均（G）", 2),
      numberColumn("dayUserNum", "套餐用户数"),
      numberColumn("dayTrafficUse", "套餐消耗（G）", 2),
      numberColumn("dayAvg", "人均（G）", 2),
    ],
  },
  {
    caption: "抽奖",
    columns: [
      dayColumn,
      numberColumn("lotterySpendNum", "抽奖次数"),
      numberColumn("lotterySpendTraffic", "消耗流量（G）", 2),
      numberColumn("lotteryRewardNum", "中奖次数"),
      numberColumn("lotteryRewardTraffic", "奖励流量（G）", 2),
    ],
  },
];

/** basic_stastic for the chosen range; only the latest request's answer is kept. */
function useStats(num: number): { stats: BasicStastic | null; loading: boolean; failed: boolean } {
  const latest = useRef(0);
  const [state, setState] = useState({ stats: null as BasicStastic | null, loading: true, failed: false });
  useEffect(() => {
    const request = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    void call(BASIC_STASTIC_CALL, { num }).then((answer) => {
      if (request !== latest.current) return;
      const ok = answer.code === Code.ok;
      setState({ stats: ok ? answer.data : null, loading: false, failed: !ok });
    });
    return () => {
      latest.current += 1;
    };
  }, [num]);
  return state;
}

function Tiles({ stats }: { stats: BasicStastic }) {
  return (
    <dl className="prize-stats stats-tiles" aria-label="总览">
      <div>
        <dt>剩余总流量</dt>
        <dd>{stats.totalRemainingTraffic.toFixed(2)} T</dd>
      </div>
      <div>
        <dt>有效VIP用户</dt>
        <dd>{stats.activeVipCount}</dd>
      </div>
    </dl>
  );
}

export function AdminStatisticsPage() {
  const [range, setRange] = useState<Range>(`${STATS_DEFAULT_DAYS}` as Range);
  const { stats, loading, failed } = useStats(Number(range));
  const lastWeek = stats?.stastic_list.slice(0, STATS_DEFAULT_DAYS) ?? [];

  return (
    <AdminPage title="统计">
      {stats ? <Tiles stats={stats} /> : null}
      <div className="stats-range">
        <Segmented legend="图表范围" items={RANGE_ITEMS} value={range} onChange={setRange} />
      </div>
      {!stats && loading ? <LoadingSpinner /> : null}
      {failed ? <p className="table-empty">{EMPTY_TEXT}</p> : null}
      {stats ? (
        <div className={loading ? "admin-list-busy" : undefined} aria-busy={loading}>
          <Suspense fallback={<LoadingSpinner />}>
            <StatsCharts rows={stats.stastic_list} />
          </Suspense>
          {TABLES.map((table) => (
            <section key={table.caption} className="stats-table">
              <h2 className="stats-chart-title">
                {table.caption}（最近 {STATS_DEFAULT_DAYS} 天）
              </h2>
              <Table columns={table.columns} rows={lastWeek} rowKey={(r) => r.day} caption={table.caption} />
            </section>
          ))}
        </div>
      ) : null}
    </AdminPage>
  );
}
