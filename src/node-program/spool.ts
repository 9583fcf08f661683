/**
 * Reports the panel has not acknowledged yet, one file each under `<data>/spool`, written and
 * fsync'd before the first send. Each has a stable id (sent as X-Request-Id, so a resend of a
 * report the panel did apply is a no-op there) and they are resent in the order they were made,
 * across outages and restarts. A file goes only after the panel answered 200 for it.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
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
const PARTIAL = ".tmp";
const SEQUENCE_DIGITS = 12;

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

export class Spool {
  private readonly entries: { file: string; report: Report }[] = [];
  private nextSequence = 1;

  constructor(
    readonly dir: string,
    private readonly log: (message: string) => void = () => {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.load();
  }

  /** Unacknowledged reports, oldest first. */
  get pending(): readonly Report[] {
    return this.entries.map((entry) => entry.report);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Makes a report durable (on disk and fsync'd) and queues it. */
  add(inbound: string, usage: Usage, now = Date.now()): Report {
    const report: Report = { id: randomUUID(), inbound, usage, createdAt: now };
    const file = `${String(this.nextSequence++).padStart(SEQUENCE_DIGITS, "0")}${SUFFIX}`;
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
    this.entries.push({ file, report });
    return report;
  }

  /** The panel answered 200 for this report: forget it. */
  acknowledge(id: string) {
    const index = this.entries.findIndex((entry) => entry.report.id === id);
    const entry = this.entries[index];
    if (!entry) return;
    rmSync(join(this.dir, entry.file), { force: true });
    fsyncDirectory(this.dir);
    this.entries.splice(index, 1);
  }

  private load() {
    const names = readdirSync(this.dir).sort();
    for (const name of names) {
      const path = join(this.dir, name);
      // A write that completed but was not renamed yet still holds a whole report.
      const file = name.endsWith(PARTIAL) ? name.slice(0, -PARTIAL.length) : name;
      if (!file.endsWith(SUFFIX)) continue;
      const sequence = Number.parseInt(file, 10);
      let report: unknown;
      try {
        report = JSON.parse(readFileSync(path, "utf8"));
      } catch {
        report = undefined;
      }
      if (!Number.isSafeInteger(sequence) || !isReport(report)) {
        this.log(`spool: ${name} is not a report, moved aside as ${name}.bad`);
        renameSync(path, `${path}.bad`);
        continue;
      }
      if (file !== name) renameSync(path, join(this.dir, file));
      this.entries.push({ file, report });
      this.nextSequence = Math.max(this.nextSequence, sequence + 1);
    }
    this.entries.sort((a, b) => a.file.localeCompare(b.file));
  }
}
