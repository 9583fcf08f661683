/**
 * What `/metrics` reports (issue 18 §4). Counters are bumped by hooks in the envelope runner
 * (rpc/call.ts), markPaid (payments/credit.ts) and applyNodeReport (traffic/charge.ts) and live
 * in memory, one set per database the process serves; gauges are read when Prometheus scrapes,
 * with a few cheap queries (the database-wide ones on one replica only, see metricsText).
 */
import { statSync } from "node:fs";
import { runsJob } from "../../cluster/leases.ts";
import type { AppContext } from "../../context.ts";
import { type Db, SqliteDb } from "../../db/db.ts";
import { writeFailureCounts } from "../../db/write-health.ts";
import { addressKind } from "../../lib/addresses.ts";
import { sameSecret } from "../../rpc/ids.ts";
import { type NodeState, nodeState } from "../node-record/schema.ts";
import { agentStatus, listAgentRows } from "../node-record/service.ts";
import { worstDivergences } from "../traffic/reconcile.ts";
import { CallMetrics, familyText, LabeledCounter, type Sample } from "./registry.ts";

export interface Metrics {
  calls: CallMetrics;
  paymentNotifications: LabeledCounter;
  ordersCredited: LabeledCounter;
  nodeReports: LabeledCounter;
  chargedBytes: LabeledCounter;
}

function newMetrics(): Metrics {
  return {
    calls: new CallMetrics(),
    paymentNotifications: new LabeledCounter(
      "ferry_payment_notifications_total",
      "Payment notifications that reached markPaid, by provider and result (credited, duplicate, rejected, anomaly).",
      ["provider", "result"],
    ),
    ordersCredited: new LabeledCounter("ferry_orders_credited_total", "Orders credited, by provider.", [
      "provider",
    ]),
    nodeReports: new LabeledCounter(
      "ferry_node_reports_total",
      "Node traffic reports, by result (applied, duplicate).",
      ["result"],
    ),
    chargedBytes: new LabeledCounter(
      "ferry_traffic_charged_bytes_total",
      "Traffic charged to customers by node reports, in bytes (after scales).",
      [],
    ),
  };
}

const registries = new WeakMap<Db, Metrics>();

/** The counters of the server using this database (made on first use). */
export function metricsOf(db: Db): Metrics {
  let metrics = registries.get(db);
  if (!metrics) {
    metrics = newMetrics();
    registries.set(db, metrics);
  }
  return metrics;
}

/** Hook of runCall: one envelope call answered with `code` after `seconds`. */
export function countCall(db: Db, path: string, code: number, seconds: number): void {
  metricsOf(db).calls.observe(path, code, seconds);
}

/** Hook of markPaid: what it decided for one notification (or query, watcher match, settlement). */
export function countPayment(db: Db, provider: string, result: string): void {
  const metrics = metricsOf(db);
  metrics.paymentNotifications.inc([provider, result]);
  if (result === "credited") metrics.ordersCredited.inc([provider]);
}

/** Hook of applyNodeReport: a report applied (with the bytes it charged) or recognised as a repeat. */
export function countNodeReport(db: Db, duplicate: boolean, chargedBytes: number): void {
  const metrics = metricsOf(db);
  metrics.nodeReports.inc([duplicate ? "duplicate" : "applied"]);
  if (!duplicate) metrics.chargedBytes.inc([], chargedBytes);
}

const NODE_STATES: NodeState[] = ["ok", "error", "never"];

async function nodeGauges(ctx: AppContext, now: number): Promise<string> {
  const updateSeconds = await ctx.settings.get("updateV2rayDuration");
  const byState = new Map<NodeState, number>(NODE_STATES.map((state) => [state, 0]));
  let online = 0;
  for (const row of await listAgentRows(ctx)) {
    const status = agentStatus(row, updateSeconds, now);
    const state = nodeState({ status, lastSeenTime: row.last_seen_time });
    byState.set(state, (byState.get(state) ?? 0) + 1);
    // A node that stopped calling keeps its last count; only nodes heard from count as online.
    if (status) online += row.online_users;
  }
  return (
    familyText(
      "ferry_nodes",
      "gauge",
      "Nodes by agent status as `ferry node status` shows it: ok (正常), error (异常), never (未连接).",
      NODE_STATES.map((state) => ({ labels: { status: state }, value: byState.get(state) ?? 0 })),
    ) +
    familyText("ferry_online_users", "gauge", "Users online on the nodes whose agents are calling in.", [
      { labels: {}, value: online },
    ])
  );
}

/**
 * ferry_reconcile_divergence_ratio{node}: per node, the largest divergence between charged and
 * expected bytes among its days of the last 30 business days (what 对账 shows); above 0.001 a day
 * is flagged. Nodes without reports in the window have no sample.
 */
async function reconcileGauges(ctx: AppContext, now: number): Promise<string> {
  const worst = await worstDivergences(ctx, now);
  return familyText(
    "ferry_reconcile_divergence_ratio",
    "gauge",
    "Per node, the largest |charged - expected| / expected among its business days of the last 30 (flagged above 0.001).",
    [...worst].map(([node, value]) => ({ labels: { node }, value })),
  );
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The size of PostgreSQL's WAL directory, or null when this role may not list it. */
async function postgresWalBytes(db: Db): Promise<number | null> {
  const allowed = await db.get<{ ok: number }>(
    "SELECT CASE WHEN has_function_privilege('pg_ls_waldir()', 'EXECUTE') THEN 1 ELSE 0 END AS ok",
  );
  if (allowed?.ok !== 1) return null;
  return (await db.get<{ n: number }>("SELECT COALESCE(SUM(size), 0) AS n FROM pg_ls_waldir()"))?.n ?? 0;
}

async function storageGauges(db: Db): Promise<string> {
  const help =
    "Size of the database files, by file (db, wal; PostgreSQL: the database as db, the cluster's WAL as wal when the role may list it, as pg_monitor may).";
  if (!(db instanceof SqliteDb)) {
    const size = await db.get<{ n: number }>("SELECT pg_database_size(current_database()) AS n");
    const samples = [{ labels: { file: "db" }, value: size?.n ?? 0 }];
    const wal = await postgresWalBytes(db);
    if (wal !== null) samples.push({ labels: { file: "wal" }, value: wal });
    return familyText("ferry_database_bytes", "gauge", help, samples);
  }
  return familyText("ferry_database_bytes", "gauge", help, [
    { labels: { file: "db" }, value: fileBytes(db.file) },
    { labels: { file: "wal" }, value: fileBytes(`${db.file}-wal`) },
  ]);
}

function writeFailures(db: Db): string {
  return familyText(
    "ferry_db_write_failures_total",
    "counter",
    "Writes that failed for lack of storage, by cause (SQLITE_FULL or ENOSPC: disk full; SQLITE_IOERR_*; SQLITE_READONLY_*): calls, node pushes and pulls, jobs.",
    [...writeFailureCounts(db)].map(([cause, value]) => ({ labels: { cause }, value })),
  );
}

async function logGauges(db: Db): Promise<string> {
  const errors =
    (await db.get<{ n: number }>("SELECT COALESCE(SUM(repeat_count), 0) AS n FROM error_logs"))?.n ?? 0;
  const events = await db.all<{ provider: string; result: string; n: number }>(
    "SELECT provider, result, SUM(repeat_count) AS n FROM payment_events GROUP BY provider, result",
  );
  return (
    familyText(
      "ferry_error_log_events",
      "gauge",
      "Unexpected errors in the error log (错误日志), repeats included; it drops when rows expire or are cleared.",
      [{ labels: {}, value: errors }],
    ) +
    familyText(
      "ferry_payment_log_events",
      "gauge",
      "Rows of the payment log by provider and result, repeats included: also notifications refused before markPaid (bad signature, unknown provider). Refused ones expire after 90 days.",
      events.map((row) => ({ labels: { provider: row.provider, result: row.result }, value: row.n })),
    )
  );
}

function processGauges(): string {
  const memory = process.memoryUsage();
  const gauge = (name: string, help: string, value: number) =>
    familyText(name, "gauge", help, [{ labels: {}, value } satisfies Sample]);
  return (
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", memory.rss) +
    gauge("ferry_heap_used_bytes", "JavaScript heap in use, in bytes.", memory.heapUsed) +
    gauge("ferry_heap_total_bytes", "JavaScript heap reserved, in bytes.", memory.heapTotal) +
    gauge(
      "process_start_time_seconds",
      "Start time of the process since the Unix epoch, in seconds.",
      Math.round((Date.now() - process.uptime() * 1000) / 1000),
    )
  );
}

/**
 * The whole exposition text. This process's counters and gauges come from every replica, so a sum
 * over all replicas' scrapes is the panel's total; the database-wide gauges (nodes, online users,
 * database size, log rows, reconciliation) only from the replica holding the metrics-gauges lease, or the sum would
 * count them once per replica.
 */
export async function metricsText(ctx: AppContext, now = Date.now()): Promise<string> {
  const metrics = metricsOf(ctx.db);
  const databaseWide = runsJob(ctx, "metrics-gauges");
  const parts = await Promise.all([
    metrics.calls.text(),
    metrics.paymentNotifications.text(),
    metrics.ordersCredited.text(),
    metrics.nodeReports.text(),
    metrics.chargedBytes.text(),
    databaseWide ? nodeGauges(ctx, now) : "",
    databaseWide ? reconcileGauges(ctx, now) : "",
    databaseWide ? storageGauges(ctx.db) : "",
    writeFailures(ctx.db),
    databaseWide ? logGauges(ctx.db) : "",
    processGauges(),
  ]);
  return parts.join("");
}

export type MetricsAccess = "allowed" | "unauthorized" | "hidden";

/**
 * Headers a proxy, load balancer or CDN adds (issue 26, C9): a request carrying any of them came
 * through one, whatever its socket says. Matched by name, so the family is covered, not a list:
 * Forwarded, Via, X-Forwarded-*, X-Real-IP, any *-Client-IP (True-, X-, X-Cluster-, Fastly-),
 * CF-Connecting-IP and the CDNs' own prefixes, X-Original-*, CDN-Loop.
 */
const PROXY_HEADER =
  /^(?:forwarded|via|cdn-loop|x-forwarded(?:-.+)?|x-real-ip|.*client-?ip|.*connecting-ip|x-originating-ip|x-remote-(?:ip|addr)|x-proxyuser-ip|x-original-.+|x-host|cf-.+|fastly-.+|akamai-.+|x-akamai-.+|x-azure-.+|x-envoy-.+|x-amz-cf-.+|x-appengine-.+|x-vercel-.+|x-nf-.+)$/;

/** Whether any header of the request is one a proxy adds. */
export function cameThroughProxy(headers: Headers): boolean {
  for (const name of headers.keys()) if (PROXY_HEADER.test(name)) return true;
  return false;
}

/**
 * Who may scrape. With `metrics_token` set: only `Authorization: Bearer <token>` (constant-time
 * compare), from anywhere; anyone else gets 401. Without it: only a client on this machine talking
 * to ferry directly: a loopback peer, no proxy header of any kind, and no trusted proxy configured
 * (`--trust-proxy` says a proxy forwards the public's requests, which then come from loopback, and
 * a proxy need not add any header). Everyone else gets 404, so the public site does not show it.
 */
export function metricsAccess(
  token: string,
  request: { ip: string; headers: Headers; behindProxy: boolean },
): MetricsAccess {
  if (token !== "") {
    const auth = request.headers.get("authorization") ?? "";
    const given = auth.startsWith("Bearer ") ? auth.slice(7).trim() : "";
    return given !== "" && sameSecret(given, token) ? "allowed" : "unauthorized";
  }
  const direct = addressKind(request.ip) === "loopback" && !request.behindProxy;
  return direct && !cameThroughProxy(request.headers) ? "allowed" : "hidden";
}
