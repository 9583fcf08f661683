import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildGraph, findCircles, importsOf } from "./check-circles.ts";

const script = resolve(import.meta.dir, "check-circles.ts");

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "ferry-circles-"));
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), body);
  }
  return dir;
}

function run(dir: string) {
  const result = Bun.spawnSync(["bun", script, dir], { stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, out: result.stdout.toString() + result.stderr.toString() };
}

describe("the import circle check", () => {
  test("passes on a tree whose files import downwards only", () => {
    const dir = tree({
      "context.ts": 'import type { Row } from "./row.ts";\nexport type Ctx = { row: Row };\n',
      "row.ts": "export interface Row { id: string }\n",
      "feature/service.ts": 'import type { Ctx } from "../context.ts";\nexport const f = (c: Ctx) => c;\n',
    });
    try {
      const { code, out } = run(dir);
      expect(out).toContain("import circles: none in 3 files");
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("fails on a circle made on purpose, type-only imports included, and names the loop", () => {
    const dir = tree({
      "context.ts":
        'import { AliveIps } from "./feature/service.ts";\nexport type Ctx = { ips: AliveIps };\n',
      "feature/service.ts": 'import type { Ctx } from "../context.ts";\nexport class AliveIps {}\n',
      "feature/alone.ts": "export const alone = 1;\n",
    });
    try {
      const { code, out } = run(dir);
      expect(code).toBe(1);
      expect(out).toContain("import circles: 1");
      expect(out).toMatch(/loop: \S*context\.ts → \S*feature\/service\.ts → \S*context\.ts/);
      expect(out).not.toContain("alone.ts");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("sees every form of import and nothing written in comments or strings", () => {
    const dir = tree({
      "a.ts": [
        "/**",
        ' * import { x } from "./b.ts";',
        " */",
        "const text = \"import { y } from './c.ts'\";",
        'import {\n  one,\n  type Two,\n} from "./d.ts";',
        'export type { E } from "./e.ts";',
        'import "./f.ts";',
        'const lazy = () => import("./g.ts");',
      ].join("\n"),
      ...Object.fromEntries(["b", "c", "d", "e", "f", "g"].map((name) => [`${name}.ts`, "export {};\n"])),
    });
    try {
      const found = importsOf(join(dir, "a.ts")).map((file) => file.slice(dir.length + 1));
      expect(found.sort()).toEqual(["d.ts", "e.ts", "f.ts", "g.ts"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a file importing itself is a circle; separate circles are reported apart", () => {
    const graph = new Map([
      ["self", ["self"]],
      ["a", ["b"]],
      ["b", ["a", "c"]],
      ["c", []],
      ["x", ["y"]],
      ["y", ["z"]],
      ["z", ["x"]],
    ]);
    expect(findCircles(graph)).toEqual([["a", "b"], ["self"], ["x", "y", "z"]]);
    expect(buildGraph([])).toEqual(new Map());
  });
});
