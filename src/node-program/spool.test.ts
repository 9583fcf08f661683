/**
 * The spool survives the agent: what was added is there, in order and with the same ids, for the
 * next process; only an acknowledged report goes; a write that did not finish renaming is kept.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
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
});
