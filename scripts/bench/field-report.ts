/**
 * The pure parts of `bun run bench:field` (scripts/bench/field.ts): what a node report should
 * charge, the exact-charge check, and docs/benchmarks.md rendered from a results object. No I/O,
 * so scripts/bench/field-report.test.ts checks them cheaply.
 */

/** The multipliers a report is charged at (DESIGN §7), as the bench configured them. */
export interface ChargeScales {
  upload: number;
  download: number;
  line: number;
  user: number;
}

/** What one user's [upload, download] in one report should cost, computed without the code under test. */
export function expectedUserCharge([upload, download]: [number, number], scales: ChargeScales): number {
  if (upload + download <= 0) return 0;
  return Math.round((upload * scales.upload + download * scales.download) * scales.line * scales.user);
}

/** Σ of every acknowledged report's expected charge. */
export function expectedCharge(reports: [number, number][][], scales: ChargeScales): number {
  let total = 0;
  for (const report of reports) for (const usage of report) total += expectedUserCharge(usage, scales);
  return total;
}

export interface ChargeCheck {
  /** Σ bytes reported × the scales, over the acknowledged reports. */
  expected: number;
  /** What the ledger says was charged over the same time: Δ Σ balances.spend_traffic. */
  balances: number;
  /** The same from the day's spend records (traffic_records, type 'spend'). */
  records: number;
  exact: boolean;
}

/** Exact equality on both ledgers, nothing approximate. */
export function checkCharge(expected: number, balances: number, records: number): ChargeCheck {
  return { expected, balances, records, exact: expected === balances && expected === records };
}

// ---- results and their page ------------------------------------------------------------------

export interface Machine {
  cores: number;
  cpu: string;
  ramGiB: number;
  date: string;
  bun: string;
  sqlite: string;
  postgres: string | null;
  commit: string;
}

export interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
  /** Failed requests: refused or cut connections, non-200 answers, envelope errors. */
  errors: number;
}

export interface MemoryRow {
  users: number;
  /** RSS of each `ferry serve` process, MiB. */
  rssMiB: number[];
}

export interface BadDay {
  seconds: number;
  kinds: Record<string, Latency & { perSecond: number }>;
  errors: number;
  reports: number;
  charge: ChargeCheck;
  /** Failures the fake nodes saw and the servers' error log over the scenario, as found. */
  notes: string[];
}

export interface Restart {
  /** kill -9 → the API answers again, through the other replicas (null with one server). */
  othersMs: number | null;
  /** kill -9 → the restarted process answers the API. */
  restartedMs: number;
  /** Requests that failed while a process was down (requests sent to it; expected). */
  failedDuringOutage: number;
  charge: ChargeCheck;
  reports: number;
  notes: string[];
}

export interface EngineResults {
  engine: "sqlite" | "postgres";
  replicas: number;
  memory: MemoryRow[];
  subscriptions: {
    clients: number;
    users: number;
    seconds: number;
    rps: number;
    p99Ms: number;
    errors: number;
  };
  /** Customers logging in (password checked, session made), for Xboard's published figure. */
  logins: { clients: number; seconds: number; perSecond: number; p99Ms: number; errors: number };
  badDay: BadDay;
  restart: Restart;
}

export interface FieldResults {
  command: string;
  machine: Machine;
  engines: EngineResults[];
  /** Said on the page when PostgreSQL was not measured. */
  note: string | null;
}

/** Whether a run is a failure: any error in the bad day, or any inexact charge. */
export function failures(results: FieldResults): string[] {
  const found: string[] = [];
  for (const engine of results.engines) {
    const name = ENGINE_NAME[engine.engine];
    if (engine.badDay.errors > 0) found.push(`${name}: ${engine.badDay.errors} errors on the bad day`);
    if (engine.subscriptions.errors > 0)
      found.push(`${name}: ${engine.subscriptions.errors} failed subscription fetches`);
    if (engine.logins.errors > 0) found.push(`${name}: ${engine.logins.errors} failed logins`);
    if (!engine.badDay.charge.exact) found.push(`${name}: the bad day's reports were not charged exactly`);
    if (!engine.restart.charge.exact) found.push(`${name}: the restart's reports were not charged exactly`);
  }
  return found;
}

const ENGINE_NAME = { sqlite: "SQLite", postgres: "PostgreSQL" } as const;

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const mib = (value: number) => value.toFixed(1);
const count = (value: number) => value.toLocaleString("en-US");
const setUp = (engine: EngineResults) =>
  `${ENGINE_NAME[engine.engine]}, ${engine.replicas === 1 ? "one server" : `${engine.replicas} replicas`}`;

type Measure = "logins" | "subscriptions" | "memory";

/** The published figures of other panels Ferry is compared with (issue 31), with their caveats. */
export const ANCHORS: { panel: string; figure: string; source: string; measures: Measure[] }[] = [
  {
    panel: "Xboard",
    figure: "642 logins/s",
    source: "Xboard's own load test, on an AMD EPYC server (as quoted in Ferry issue 31)",
    measures: ["logins"],
  },
  {
    panel: "3x-ui",
    figure: "148 subscription fetches/s; idle 68–74 MiB",
    source: "measured by Mistgate, a 2026 single-binary challenger (as quoted in Ferry issue 31)",
    measures: ["subscriptions", "memory"],
  },
  {
    panel: "Remnawave",
    figure: "271 subscription fetches/s; idle 426–454 MiB",
    source: "measured by Mistgate (as quoted in Ferry issue 31)",
    measures: ["subscriptions", "memory"],
  },
  {
    panel: "PasarGuard",
    figure: "idle 262 MiB",
    source: "measured by Mistgate (as quoted in Ferry issue 31)",
    measures: ["memory"],
  },
];

/** Ferry's figure of this run that an anchor's figure compares with, per set-up. */
function ours(measure: Measure, engines: EngineResults[]): string {
  return engines
    .map((engine) => {
      const where = engine.engine === "sqlite" ? "SQLite" : `PostgreSQL ×${engine.replicas}`;
      if (measure === "logins") return `${where}: ${count(Math.round(engine.logins.perSecond))} logins/s`;
      if (measure === "subscriptions")
        return `${where}: ${count(Math.round(engine.subscriptions.rps))} subscription fetches/s`;
      const idle = engine.memory[0]?.rssMiB ?? [];
      return `${where}: idle ${idle.map(mib).join(" / ")} MiB`;
    })
    .join("; ");
}

function chargeLine(charge: ChargeCheck): string {
  const verdict = charge.exact ? "exact" : "NOT exact";
  return `${verdict}: expected ${count(charge.expected)} bytes, balances ${count(charge.balances)}, spend records ${count(charge.records)}`;
}

/** docs/benchmarks.md from a run's results. */
export function renderMarkdown(results: FieldResults): string {
  const { machine } = results;
  const out: string[] = [
    "# Benchmarks: the field's scenarios",
    "",
    "<!-- Generated by `bun run bench:field`; do not edit by hand, run it again. -->",
    "",
    `Generated by \`${results.command}\` (scripts/bench/field.ts) on ${machine.date}.`,
    "",
    `Machine: ${machine.cores} cores (${machine.cpu}), ${machine.ramGiB.toFixed(1)} GiB RAM; ` +
      `Bun ${machine.bun}, SQLite ${machine.sqlite}` +
      `${machine.postgres ? `, PostgreSQL ${machine.postgres}` : ""}; ferry at ${machine.commit}.`,
    "Everything (servers, load generators, fake nodes, PostgreSQL) ran on this one machine over loopback.",
    "",
  ];
  if (results.note) out.push(`> ${results.note}`, "");

  out.push(
    "## Idle memory (panel only)",
    "",
    "RSS of each `ferry serve` process a few seconds after it became healthy, no load, with the given",
    "number of customers in the database (real migrations, real rows).",
    "",
    "| set-up | users | RSS per process (MiB) |",
    "| --- | ---: | --- |",
  );
  for (const engine of results.engines) {
    for (const row of engine.memory) {
      out.push(`| ${setUp(engine)} | ${count(row.users)} | ${row.rssMiB.map(mib).join(", ")} |`);
    }
  }

  out.push(
    "",
    "## Subscriptions: 50 clients",
    "",
    "Closed loop: each client fetches a subscription again as soon as the last one arrived, rotating over",
    "the customers, with the User-Agent `v2rayN/7.5.0`.",
    "",
    "| set-up | clients | customers | seconds | fetches/s | p99 (ms) | errors |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const engine of results.engines) {
    const s = engine.subscriptions;
    out.push(
      `| ${setUp(engine)} | ${s.clients} | ${s.users} | ${s.seconds} | ${count(Math.round(s.rps))} | ${ms(s.p99Ms)} | ${s.errors} |`,
    );
  }

  out.push(
    "",
    "## Logins",
    "",
    "Customers logging in (the password checked, a session made) in a closed loop, rotating over the",
    "customers. Ferry keeps passwords as argon2id at 64 MiB and 2 passes (about 270 ms of a small core",
    "per check), so logins/s is bounded by that choice, on purpose.",
    "",
    "| set-up | clients | seconds | logins/s | p99 (ms) | errors |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const engine of results.engines) {
    const l = engine.logins;
    out.push(
      `| ${setUp(engine)} | ${l.clients} | ${l.seconds} | ${count(Math.round(l.perSecond))} | ${ms(l.p99Ms)} | ${l.errors} |`,
    );
  }

  out.push(
    "",
    "## A bad day",
    "",
    "At once: 64 logged-in customers calling portal reads in a closed loop (userinfo and the others the",
    "portal shows), 300 subscription fetches/s (open loop: latency counts from the scheduled time), one",
    "user added or disabled per second (the service `ferry user` calls), and 10 fake nodes (registered as",
    "the product registers nodes) that each pull their user list and push a report of 1,000 users every",
    "10 s through the UniProxy API. Errors must be 0, and the ledger must hold exactly what the reports",
    "carried times the scales.",
    "",
    "| set-up | kind | requests | per second | p50 (ms) | p99 (ms) | errors |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const engine of results.engines) {
    for (const [kind, k] of Object.entries(engine.badDay.kinds)) {
      out.push(
        `| ${setUp(engine)} | ${kind} | ${count(k.count)} | ${k.perSecond.toFixed(1)} | ${ms(k.p50Ms)} | ${ms(k.p99Ms)} | ${k.errors} |`,
      );
    }
  }
  out.push("");
  for (const engine of results.engines) {
    const b = engine.badDay;
    out.push(
      `- ${setUp(engine)}, ${b.seconds} s: ${b.errors} errors; ${b.reports} node reports, charged ${chargeLine(b.charge)}.`,
    );
    for (const note of b.notes) out.push(`  - ${note}`);
  }

  out.push(
    "",
    "## Panel restart under that load",
    "",
    "The same load; a `ferry serve` process is killed (SIGKILL) and started again. On one server that is",
    "the panel; with replicas one of them, while the others keep serving. Nodes resend an unacknowledged",
    "report with the same X-Request-Id, so every report must still be charged exactly once.",
    "",
    "| set-up | API answers again through the others | restarted process answers | requests failed meanwhile |",
    "| --- | ---: | ---: | ---: |",
  );
  for (const engine of results.engines) {
    const r = engine.restart;
    out.push(
      `| ${setUp(engine)} | ${r.othersMs === null ? "—" : `${ms(r.othersMs)} ms`} | ${ms(r.restartedMs)} ms | ${r.failedDuringOutage} |`,
    );
  }
  out.push("");
  for (const engine of results.engines) {
    out.push(
      `- ${setUp(engine)}: ${engine.restart.reports} node reports, charged ${chargeLine(engine.restart.charge)}.`,
    );
    for (const note of engine.restart.notes) out.push(`  - ${note}`);
  }

  out.push(
    "",
    "## Published figures of other panels",
    "",
    "For orientation only: measured on other hardware, with other scenarios, and in Mistgate's case by",
    "a competitor of the panels it measured. Compare orders of magnitude, not digits.",
    "",
    "| panel | published figure | source and caveat | Ferry in this run |",
    "| --- | --- | --- | --- |",
  );
  for (const anchor of ANCHORS) {
    const here = anchor.measures.map((measure) => ours(measure, results.engines)).join("; ");
    out.push(`| ${anchor.panel} | ${anchor.figure} | ${anchor.source} | ${here} |`);
  }
  out.push("");
  return out.join("\n");
}
