/**
 * The spool survives the agent: what was added is there, in order and with the same ids, for the
 * next process; only an acknowledged report goes; a write that did not finish renaming is kept.
 * Reads merged into an open report (issue 32) keep one file per inbound until sealed, and a crash
 * in the middle of a merge loses that read only.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Spool } from "./spool.ts";

let dir = "";

beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), "ferry-spool-")), "spool");
});
afterEach(() => rmSync(join(dir, ".."), { recursive: true, force: true }));

const summary = (spool: Spool) => spool.pending.map((report) => [report.inbound, report.usage]);

describe("spool", () => {
  test("reports come back in a new process in the order they were made, with their ids", () => {
    const first = new Spool(dir);
    const a = first.add("vmesh_tcp", { "1": [10, 20] }, 1000);
    const b = first.add("vmesh_ws", { "2": [0, 5] }, 2000);
    const c = first.add("vmesh_tcp", { "1": [1, 1], "3": [7, 0] }, 3000);
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);

    const again = new Spool(dir);
    expect(again.pending).toEqual([a, b, c]);
    expect(summary(again)).toEqual([
      ["vmesh_tcp", { "1": [10, 20] }],
      ["vmesh_ws", { "2": [0, 5] }],
      ["vmesh_tcp", { "1": [1, 1], "3": [7, 0] }],
    ]);
  });

  test("only an acknowledged report leaves, and later reports still sort after the survivors", () => {
    const first = new Spool(dir);
    const a = first.add("vmesh_tcp", { "1": [1, 0] });
    const b = first.add("vmesh_tcp", { "1": [2, 0] });
    first.acknowledge(a.id);
    first.acknowledge("no-such-report");
    expect(first.pending.map((report) => report.id)).toEqual([b.id]);

    const again = new Spool(dir);
    expect(again.pending.map((report) => report.id)).toEqual([b.id]);
    const c = again.add("vmesh_tcp", { "1": [3, 0] });
    again.acknowledge(b.id);
    expect(new Spool(dir).pending.map((report) => report.id)).toEqual([c.id]);
    expect(readdirSync(dir)).toHaveLength(1);
  });

  test("a report written but not yet renamed is kept; a damaged file is moved aside", () => {
    const first = new Spool(dir);
    const a = first.add("ss", { "4": [100, 200] });
    const [file] = readdirSync(dir);
    renameSync(join(dir, file as string), join(dir, `${file}.tmp`));
    writeFileSync(join(dir, "000000000009.json"), '{"id":"half');

    const logged: string[] = [];
    const again = new Spool(dir, (message) => logged.push(message));
    expect(again.pending).toEqual([a]);
    expect(existsSync(join(dir, file as string))).toBe(true);
    expect(existsSync(join(dir, "000000000009.json.bad"))).toBe(true);
    expect(logged).toHaveLength(1);
    const b = again.add("ss", { "4": [1, 1] });
    expect(new Spool(dir).pending).toEqual([a, b]);
  });

  test("reads merge into one open report per inbound, which is not sent until sealed and never changes after", () => {
    const spool = new Spool(dir);
    const tcp = spool.merge("vmesh_tcp", { "1": [10, 100] }, 1000);
    spool.merge("vmesh_ws", { "2": [1, 2] }, 1500);
    for (let read = 0; read < 50; read += 1) spool.merge("vmesh_tcp", { "1": [1, 10], "3": [0, 5] }, 2000);
    expect(readdirSync(dir).sort()).toEqual(["000000000001.open.json", "000000000002.open.json"]);
    expect(spool.pending).toEqual([]);
    expect(spool.size).toBe(2);
    expect(new Spool(dir).open).toEqual([
      { ...tcp, usage: { "1": [60, 600], "3": [0, 250] } },
      { id: expect.any(String), inbound: "vmesh_ws", usage: { "2": [1, 2] }, createdAt: 1500 },
    ]);

    spool.seal();
    const sealed = spool.pending;
    expect(sealed.map((report) => [report.id, report.usage])).toEqual([
      [tcp.id, { "1": [60, 600], "3": [0, 250] }],
      [expect.any(String), { "2": [1, 2] }],
    ]);
    // The next read opens a new report: the sealed one keeps its bytes under its id.
    const next = spool.merge("vmesh_tcp", { "1": [5, 5] });
    expect(next.id).not.toBe(tcp.id);
    const again = new Spool(dir);
    expect(again.pending).toEqual(sealed);
    expect(again.open.map((report) => [report.id, report.usage])).toEqual([[next.id, { "1": [5, 5] }]]);
    again.acknowledge(next.id); // open: not acknowledgeable
    expect(again.size).toBe(3);
  });

  test("a crash during a merge: a finished write counts, a torn one loses that read only", () => {
    const spool = new Spool(dir);
    const report = spool.merge("ss", { "4": [100, 200] });
    const file = join(dir, "000000000001.open.json");
    // Written whole, not yet renamed over the old content: the new content is kept.
    writeFileSync(`${file}.tmp`, JSON.stringify({ ...report, usage: { "4": [101, 201] } }));
    expect(new Spool(dir).open.map((open) => open.usage)).toEqual([{ "4": [101, 201] }]);
    expect(JSON.parse(readFileSync(file, "utf8")).usage).toEqual({ "4": [101, 201] });
    // Torn mid-write: the report as it was before that read.
    writeFileSync(`${file}.tmp`, JSON.stringify({ ...report, usage: { "4": [102, 202] } }).slice(0, 30));
    const logged: string[] = [];
    const after = new Spool(dir, (message) => logged.push(message));
    expect(after.open).toEqual([{ ...report, usage: { "4": [101, 201] } }]);
    expect(logged).toHaveLength(1);
    expect(existsSync(`${file}.tmp.bad`)).toBe(true);
  });
});
