/**
 * 节点管理 → 对账's chart: bytes charged against bytes expected per business day, flagged days
 * marked (a red mark on the charged figure, ⚠ on the axis). The statistics page's chart (StatsCharts.tsx, uPlot), loaded with
 * React.lazy by Agents.tsx so uPlot stays out of app.js.
 */
import { useMemo } from "react";
import { MB } from "../../../src/lib/traffic.ts";
import type { ReconcileDay } from "../../../src/modules/traffic/reconcile-schema.ts";
import { Chart, type ChartSpec } from "./StatsCharts.tsx";

const SPEC: ChartSpec<ReconcileDay> = {
  title: "计费与应计",
  unit: "MB",
  series: [
    { label: "计费", color: "#1f6feb", value: (row) => row.chargedBytes / MB },
    { label: "应计", color: "#12a150", value: (row) => row.expectedChargedBytes / MB },
    {
      label: "不符",
      color: "#d92d20",
      value: (row) => (row.flagged ? row.chargedBytes / MB : null),
      marksOnly: true,
    },
  ],
  dayLabel: (row) => `${row.day.slice(5)}${row.flagged ? " ⚠" : ""}`,
};

/** The rows of /api/admin/agents/reconcile (newest first, as the server sends them). */
export default function ReconcileChart({ rows }: { rows: ReconcileDay[] }) {
  const days = useMemo(() => [...rows].reverse(), [rows]);
  return (
    <div className="stats-charts">
      <Chart spec={SPEC} days={days} />
    </div>
  );
}
