/**
 * `bun run build`: bundles the SPA (scripts/build-web.ts → web/dist + src/generated/embed.ts), then
 * compiles src/main.ts into ONE self-contained executable, dist/ferry (DESIGN §4).
 *
 * - minified, with a bytecode cache (ESM, since main.ts uses top-level await): start-up is about
 *   half of what it is without, for ~5 MB more file;
 * - with an embedded source map, so errors recorded by the server point at source lines;
 * - no .env / bunfig.toml autoloading in the executable: what it does depends on its flags and
 *   environment only, not on whatever files happen to sit in the working directory;
 * - compiled in a staging directory and renamed over dist/ferry, so a running dist/ferry (a benchmark,
 *   an e2e test) does not make the build fail with ETXTBSY.
 *
 * Usage: bun scripts/build.ts [--skip-web] [--outfile <path>]
 */
import { mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

const root = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const outIndex = args.indexOf("--outfile");
const outfile = resolve(root, (outIndex >= 0 ? args[outIndex + 1] : undefined) ?? "dist/ferry");

function run(label: string, cmd: string[]) {
  const started = performance.now();
  const result = Bun.spawnSync(cmd, { cwd: root, stdout: "inherit", stderr: "inherit", env: process.env });
  if (result.exitCode !== 0) {
    console.error(`build: ${label} failed (exit ${result.exitCode ?? result.signalCode})`);
    process.exit(1);
  }
  console.log(`build: ${label} done in ${Math.round(performance.now() - started)} ms`);
}

const bun = process.execPath;

if (!args.includes("--skip-web")) run("web", [bun, "scripts/build-web.ts"]);

// Compiled in a private directory under the final file name (the name shows in stack traces as
// /$bunfs/root/ferry), then renamed into place.
const staging = join(dirname(outfile), `.build-${process.pid}`);
const temporary = join(staging, basename(outfile));
mkdirSync(staging, { recursive: true });
try {
  run("compile", [
    bun,
    "build",
    "--compile",
    "--minify",
    "--bytecode",
    "--format=esm",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    // Embedded (+1.3 MB, no start-up cost): stack traces in the error log name src/…:line.
    "--sourcemap",
    "src/main.ts",
    "--outfile",
    temporary,
  ]);
  renameSync(temporary, outfile);
} finally {
  rmSync(staging, { recursive: true, force: true });
}
const megabytes = (statSync(outfile).size / 1024 / 1024).toFixed(1);
console.log(`build: ${outfile} (${megabytes} MB)`);
