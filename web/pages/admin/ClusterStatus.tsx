/**
 * 集群状态 on 运维日志 (issue 28 item 5): every replica (`ferry serve` process) on the database, as
 * `ferry replicas` lists it, with the background jobs whose leases it holds; one not seen for 30 s
 * is 离线. Admin only (`/api/admin/replicas`, checked on the server).
 */
import type { ReplicaView } from "../../../src/cluster/schema.ts";
import { call } from "../../api.ts";
import { LoadingSpinner } from "../../components/admin/AdminPage.tsx";
import { useRemoteList } from "../../components/admin/useRemoteList.ts";
import { formatDateTime } from "../../components/format.ts";
import { type Column, Table } from "../../components/Table.tsx";

export const CLUSTER_TITLE = "集群状态";

const columns: Column<ReplicaView>[] = [
  { key: "id", title: "副本", className: "cluster-id", render: (r) => <code>{r.id}</code> },
  { key: "host", title: "主机", className: "cluster-host", render: (r) => `${r.host}:${r.port}` },
  { key: "pid", title: "进程号", className: "admin-num", render: (r) => r.pid },
  { key: "version", title: "版本", render: (r) => r.version },
  { key: "startedAt", title: "启动时间", render: (r) => formatDateTime(r.startedAt) },
  { key: "lastSeen", title: "最后上报", render: (r) => formatDateTime(r.lastSeen) },
  {
    key: "state",
    title: "状态",
    render: (r) => (
      <span className={`badge ${r.offline ? "admin-status-off" : "admin-status-ok"}`}>
        {r.offline ? "离线" : "在线"}
      </span>
    ),
  },
  {
    key: "leases",
    title: "持有的任务",
    className: "cluster-leases",
    render: (r) =>
      r.leases.length
        ? r.leases.map((job) => (
            <span key={job}>
              <code>{job}</code>{" "}
            </span>
          ))
        : "无",
  },
];

export function ClusterStatus() {
  const list = useRemoteList(() => call("/api/admin/replicas", {}));
  return (
    <section className="cluster-status" aria-labelledby="cluster-status-title">
      <h2 id="cluster-status-title" className="stats-chart-title">
        {CLUSTER_TITLE}
      </h2>
      <p className="card-note">
        每个副本（ferry serve 进程）和它持有租约的后台任务；每个任务同一时间只在一个副本上运行。超过 30
        秒未上报的副本显示为离线。
      </p>
      {!list.loaded ? (
        <LoadingSpinner />
      ) : list.failed ? null : (
        <Table
          columns={columns}
          rows={list.rows}
          rowKey={(r) => r.id}
          caption={CLUSTER_TITLE}
          empty="暂无副本"
        />
      )}
    </section>
  );
}
