/**
 * The statistics page's charts (income, traffic, active users), drawn with uPlot. Loaded with
 * React.lazy by Statistics.tsx, so uPlot travels in this page's chunk and not in app.js; its few
 * CSS rules are at the end of web/styles.css.
 */
import { useEffect, useMemo, useRef } from "react";
import uPlot from "uplot";
import type { StasticDay } from "../../../src/modules/stats/schema.ts";
import { EMPTY_TEXT } from "../../components/Table.tsx";

interface Series<Row> {
  label: string;
  color: string;
  /** null: no value that day (a gap). */
  value: (row: Row) => number | null;
  /** Drawn as marks on the days only, without a line (e.g. the days to notice). */
  marksOnly?: boolean;
}

export interface ChartSpec<Row> {
  title: string;
  unit: string;
  series: Series<Row>[];
  /** The x-axis label of a day (default MM-DD); e.g. to mark a day. */
  dayLabel?: (row: Row) => string;
}

const CHARTS: ChartSpec<StasticDay>[] = [
  { title: "收入", unit: "元", series: [{ label: "收入", color: "#1f6feb", value: (r) => r.income }] },
  {
    title: "流量消耗",
    unit: "G",
    series: [
      { label: "永久流量", color: "#12a150", value: (r) => r.normalTraffic },
      { label: "套餐流量", color: "#f79009", value: (r) => r.dayTrafficUse },
    ],
  },
  {
    title: "活跃用户",
    unit: "人",
    series: [
      { label: "活跃用户", color: "#7a5af8", value: (r) => r.activeUserNum },
      { label: "签到", color: "#1f6feb", value: (r) => r.signUseNum },
    ],
  },
];

const HEIGHT = 200;

/** One chart over the days (oldest first), x = index of the day, labelled MM-DD. Also used by 节点管理 → 对账. */
export function Chart<Row extends { day: string }>({ spec, days }: { spec: ChartSpec<Row>; days: Row[] }) {
  const box = useRef<HTMLDivElement>(null);
  const empty = days.every((row) => spec.series.every((s) => !s.value(row)));

  useEffect(() => {
    const element = box.current;
    if (!element || empty) return;
    const labels = days.map((row) => spec.dayLabel?.(row) ?? row.day.slice(5));
    const data: uPlot.AlignedData = [days.map((_, i) => i), ...spec.series.map((s) => days.map(s.value))];
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 200),
        height: HEIGHT,
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        axes: [
          {
            incrs: [1, 2, 3, 5, 7, 10, 14, 15, 30],
            space: 48,
            values: (_u, splits) => splits.map((i) => labels[i] ?? ""),
          },
          { size: 56, values: (_u, splits) => splits.map((v) => `${v}`) },
        ],
        series: [
          { label: "日期", value: (_u, i) => (i === null ? "" : (days[i]?.day ?? "")) },
          ...spec.series.map((s) =>
            s.marksOnly
              ? {
                  label: `${s.label}（${spec.unit}）`,
                  stroke: s.color,
                  width: 0,
                  points: { show: true, size: 12, width: 3, fill: s.color },
                }
              : {
                  label: `${s.label}（${spec.unit}）`,
                  stroke: s.color,
                  fill: `${s.color}1a`,
                  width: 2,
                  points: { show: days.length <= 31 },
                },
          ),
        ],
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(element.clientWidth, 200), height: HEIGHT }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, spec, empty]);

  return (
    <section className="stats-chart" aria-label={spec.title}>
      <h2 className="stats-chart-title">
        {spec.title}（{spec.unit}）
      </h2>
      {empty ? (
        <p className="stats-chart-empty">{EMPTY_TEXT}</p>
      ) : (
        <div ref={box} className="stats-chart-plot" />
      )}
    </section>
  );
}

/** The three charts for the rows of basic_stastic (newest first, as the server sends them). */
export default function StatsCharts({ rows }: { rows: StasticDay[] }) {
  const days = useMemo(() => [...rows].reverse(), [rows]);
  return (
    <div className="stats-charts">
      {CHARTS.map((spec) => (
        <Chart key={spec.title} spec={spec} days={days} />
      ))}
    </div>
  );
}
