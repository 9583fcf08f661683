/**
 * Reports the panel has not acknowledged yet, one file each under `<data>/spool`, written and
 * fsync'd before the first send. Each has a stable id (sent as X-Request-Id, so a resend of a
 * report the panel did apply is a no-op there) and they are resent in the order they were made,
 * across outages and restarts. A file goes only after the panel answered 200 for it.
 *
 * Counter reads (issue 32) come every few seconds, far more often than pushes: each is merged into
 * the one open report of its inbound (`NNN.open.json`, rewritten whole through a fsync'd `.tmp`
 * and a rename), so the spool grows with the pushes, not with the reads. An open report is never
 * sent: `seal()` renames it to `NNN.json` (one atomic rename) right before a push, and from then
 * on it never changes, so a resend of its id always carries the same bytes.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { Usage } from "./stats.ts";

export interface Report {
  id: string;
  /** The inbound tag the traffic went through (`?inbound=` on the push). */
  inbound: string;
  usage: Usage;
  createdAt: number;
}

const SUFFIX = ".json";
const OPEN_SUFFIX = ".open.json";
const PARTIAL = ".tmp";
const SEQUENCE_DIGITS = 12;

interface Entry {
  file: string;
  report: Report;
  /** Still taking reads: not sent until sealed. */
  open: boolean;
}

function isReport(value: unknown): value is Report {
  if (!value || typeof value !== "object") return false;
  const report = value as Record<string, unknown>;
  return (
    typeof report.id === "string" &&
    typeof report.inbound === "string" &&
    typeof report.createdAt === "number" &&
    !!report.usage &&
    typeof report.usage === "object"
  );
}

function fsyncDirectory(dir: string) {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readReport(path: string): Report | undefined {
  try {
    const report: unknown = JSON.parse(readFileSync(path, "utf8"));
    return isReport(report) ? report : undefined;
  } catch {
    return undefined;
  }
}

/** `usage` added into `total`, user by user. */
function addUsage(total: Usage, usage: Usage): Usage {
  const sum: Usage = { ...total };
  for (const [userNo, [upload, download]] of Object.entries(usage)) {
    const [up, down] = sum[userNo] ?? [0, 0];
    sum[userNo] = [up + upload, down + download];
  }
  return sum;
}

export class Spool {
  private entries: Entry[] = [];
  private nextSequence = 1;

  constructor(
    readonly dir: string,
    private readonly log: (message: string) => void = () => {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.load();
  }

  /** Sealed, unacknowledged reports, oldest first: what may be sent. */
  get pending(): readonly Report[] {
    return this.entries.filter((entry) => !entry.open).map((entry) => entry.report);
  }

  /** Open reports (reads not yet sealed for a push), oldest first. */
  get open(): readonly Report[] {
    return this.entries.filter((entry) => entry.open).map((entry) => entry.report);
  }

  /** Reports on disk, open or sealed. */
  get size(): number {
    return this.entries.length;
  }

  /** Makes a sealed report durable (on disk and fsync'd) and queues it. */
  add(inbound: string, usage: Usage, now = Date.now()): Report {
    const report: Report = { id: randomUUID(), inbound, usage, createdAt: now };
    const file = `${this.takeSequence()}${SUFFIX}`;
    this.write(file, report);
    this.entries.push({ file, report, open: false });
    return report;
  }

  /**
   * Adds one counter read to the open report of its inbound (made if there is none), durably. A
   * crash before the rename keeps the report as it was before this read: only this read is lost.
   */
  merge(inbound: string, usage: Usage, now = Date.now()): Report {
    const entry = this.entries.find((candidate) => candidate.open && candidate.report.inbound === inbound);
    if (!entry) {
      const report: Report = { id: randomUUID(), inbound, usage, createdAt: now };
      const file = `${this.takeSequence()}${OPEN_SUFFIX}`;
      this.write(file, report);
      this.entries.push({ file, report, open: true });
      return report;
    }
    const report = { ...entry.report, usage: addUsage(entry.report.usage, usage) };
    this.write(entry.file, report);
    entry.report = report;
    return report;
  }

  /** Closes every open report for sending: from here on its content never changes. */
  seal() {
    let sealed = false;
    for (const entry of this.entries) {
      if (!entry.open) continue;
      const file = entry.file.slice(0, -OPEN_SUFFIX.length) + SUFFIX;
      renameSync(join(this.dir, entry.file), join(this.dir, file));
      entry.file = file;
      entry.open = false;
      sealed = true;
    }
    if (sealed) fsyncDirectory(this.dir);
  }

  /** The panel answered 200 for this report: forget it. */
  acknowledge(id: string) {
    const index = this.entries.findIndex((entry) => !entry.open && entry.report.id === id);
    const entry = this.entries[index];
    if (!entry) return;
    rmSync(join(this.dir, entry.file), { force: true });
    fsyncDirectory(this.dir);
    this.entries.splice(index, 1);
  }

  private takeSequence(): string {
    return String(this.nextSequence++).padStart(SEQUENCE_DIGITS, "0");
  }

  /** Writes `file` whole: a fsync'd `.tmp`, renamed over it, the directory fsync'd. */
  private write(file: string, report: Report) {
    const partial = join(this.dir, file + PARTIAL);
    const fd = openSync(partial, "w", 0o600);
    try {
      writeSync(fd, JSON.stringify(report));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, join(this.dir, file));
    fsyncDirectory(this.dir);
  }

  private load() {
    const names = new Set(readdirSync(this.dir));
    const files = [...names]
      .map((name) => (name.endsWith(PARTIAL) ? name.slice(0, -PARTIAL.length) : name))
      .filter((file, index, all) => file.endsWith(SUFFIX) && all.indexOf(file) === index)
      .sort();
    for (const file of files) {
      const path = join(this.dir, file);
      const partial = path + PARTIAL;
      let report: Report | undefined;
      // A complete `.tmp` is the newest content (a new report, or an open one with one more read).
      if (names.has(file + PARTIAL)) {
        report = readReport(partial);
        if (report) renameSync(partial, path);
        else this.moveAside(`${file}${PARTIAL}`);
      }
      if (!report && names.has(file)) {
        report = readReport(path);
        if (!report) this.moveAside(file);
      }
      const sequence = Number.parseInt(file, 10);
      if (!report || !Number.isSafeInteger(sequence)) {
        if (report && existsSync(path)) this.moveAside(file);
        continue;
      }
      this.entries.push({ file, report, open: file.endsWith(OPEN_SUFFIX) });
      this.nextSequence = Math.max(this.nextSequence, sequence + 1);
    }
  }

  private moveAside(name: string) {
    this.log(`spool: ${name} is not a report, moved aside as ${name}.bad`);
    const path = join(this.dir, name);
    renameSync(path, `${path}.bad`);
  }
}
