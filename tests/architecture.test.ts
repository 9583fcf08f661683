/**
 * docs/architecture.md stays true: every path it names exists, and every folder of src/ and of
 * src/modules/ is on it, so a folder renamed, removed or added without the map fails here.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const MAP = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");

/** Paths in the repository the map names: `src/…`, `web/…`, `cli/…` and the other top folders. */
function namedPaths(text: string): string[] {
  const found = text.match(/\b(?:src|web|cli|scripts|tests|migrations|docs)\/[A-Za-z0-9_.\-/]*/g) ?? [];
  return [...new Set(found.map((path) => path.replace(/[.]+$/, "")))].sort();
}

function folders(path: string): string[] {
  return readdirSync(join(ROOT, path), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${path}/${entry.name}/`);
}

describe("docs/architecture.md", () => {
  test("names only paths that exist", () => {
    const paths = namedPaths(MAP);
    expect(paths.length).toBeGreaterThan(50);
    const missing = paths.filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });

  test("names every folder of src/ and every feature folder", () => {
    const named = new Set(namedPaths(MAP).map((path) => (path.endsWith("/") ? path : `${path}/`)));
    const unnamed = [...folders("src"), ...folders("src/modules")].filter(
      (folder) => !named.has(folder) && folder !== "src/generated/",
    );
    expect(unnamed).toEqual([]);
    expect(MAP).toContain("`src/generated/`");
  });

  test("the path reader sees paths in tables, prose and the diagram, and not look-alikes", () => {
    expect(
      namedPaths(
        "| `src/modules/user/` | x |\n│ src/node-program/: pull │\nsee `docs/decisions.md`. and ../shared/seeds/",
      ),
    ).toEqual(["docs/decisions.md", "src/modules/user/", "src/node-program/"]);
  });
});
