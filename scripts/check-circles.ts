/**
 * Fails when the TypeScript files under the given folders import each other in a circle.
 *   bun scripts/check-circles.ts [folder ...]      (default: src web cli tests scripts; part of `bun run check`)
 * Every relative import counts, `import type` too: a type cycle still ties the files together and
 * is how runtime cycles start. Circles are found as strongly connected components (Tarjan), and
 * each is printed with one shortest loop through it, so the edge to cut is in plain sight.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");

export type ImportGraph = Map<string, string[]>;

// `import … from "x"`, `export … from "x"` (type-only too), `import "x"` and `import("x")`. The
// statement forms must start a line, so an import written in a comment or a string is not one.
const IMPORT_PATTERNS = [
  /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm,
  /^\s*import\s*["']([^"']+)["']/gm,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
];

/** Relative imports (static, dynamic, type-only, re-exports) of one file, resolved to files. */
export function importsOf(file: string, source = readFileSync(file, "utf8")): string[] {
  const found = new Set<string>();
  for (const pattern of IMPORT_PATTERNS) {
    for (const [, specifier] of source.matchAll(pattern)) {
      if (!specifier?.startsWith(".")) continue;
      const target = resolveFile(resolve(dirname(file), specifier));
      if (target) found.add(target);
    }
  }
  return [...found];
}

function resolveFile(path: string): string | undefined {
  const candidates = [path, `${path}.ts`, `${path}.tsx`, `${path}/index.ts`, `${path}/index.tsx`];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

export function buildGraph(files: string[]): ImportGraph {
  const inScope = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files)
    graph.set(
      file,
      importsOf(file).filter((target) => inScope.has(target)),
    );
  return graph;
}

/** Components of more than one file, or a file importing itself (Tarjan's algorithm). */
export function findCircles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) circles.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return circles;
}

/** One shortest loop from the component's first file back to itself (breadth-first). */
export function shortestLoop(graph: ImportGraph, component: string[]): string[] {
  const members = new Set(component);
  const start = component[0] as string;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const loop = [start];
        for (let at = node; at !== start; at = previous.get(at) as string) loop.splice(1, 0, at);
        return [...loop, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

function sourceFiles(folder: string): string[] {
  const glob = new Bun.Glob("**/*.{ts,tsx}");
  return [...glob.scanSync({ cwd: folder, absolute: true })].filter(
    (file) => !file.includes("/node_modules/") && !file.includes("/generated/"),
  );
}

if (import.meta.main) {
  const folders = process.argv.slice(2);
  const scope = (folders.length > 0 ? folders : ["src", "web", "cli", "tests", "scripts"]).map((folder) =>
    resolve(root, folder),
  );
  const graph = buildGraph(scope.flatMap(sourceFiles));
  const circles = findCircles(graph);
  const name = (file: string) => relative(root, file);
  if (circles.length === 0) {
    console.log(`import circles: none in ${graph.size} files`);
    process.exit(0);
  }
  console.error(
    `import circles: ${circles.length} (files that import each other, directly or through others)`,
  );
  for (const component of circles) {
    console.error(`\n${component.length} files: ${component.map(name).join(", ")}`);
    console.error(`  loop: ${shortestLoop(graph, component).map(name).join(" → ")}`);
  }
  process.exit(1);
}
