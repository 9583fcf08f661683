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
 *   an e2e test) does not make the build fail with ETXTBSY;
 * - compiled twice (issue 18, idle memory): the first executable is started once as a server (up,
 *   /healthz, the SPA, one envelope call, SIGTERM) and records which functions it ran
 *   (BUN_BYTECODE_ORDER_OUT); the second build lays that bytecode out first (--bytecode-order), so
 *   the server reads and decodes less of itself. Only the layout changes, never what runs;
 * - start-up runs under a lazier JIT (--compile-jit-policy): code that runs once is not compiled,
 *   and startServer puts the normal policy back once it answers.
 *
 * Usage: bun scripts/build.ts [--skip-web] [--outfile <path>]
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
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
const compile = (extra: string[]) => [
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
  // Start-up code stays in the interpreter (≈ 4 MB less resident); startServer restores policy 1.
  "--compile-jit-policy=16",
  ...extra,
  "src/main.ts",
  "--outfile",
  temporary,
];

/** Runs the executable as a server once, as an operator starts it, and returns the bytecode order it wrote. */
async function recordBytecodeOrder(executable: string): Promise<string> {
  const order = join(staging, "ferry.order");
  const dataDir = join(staging, "data");
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = String(probe.port);
  probe.stop(true);
  const server = Bun.spawn([executable, "serve", "--data", dataDir, "--port", port], {
    env: { PATH: process.env.PATH ?? "", BUN_BYTECODE_ORDER_OUT: order },
    stdout: "ignore",
    stderr: "inherit",
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let tries = 0; tries < 300; tries++) {
      if (server.exitCode !== null) break;
      const up = await fetch(`${base}/healthz`).catch(() => null);
      if (up?.status === 200) break;
      await Bun.sleep(20);
    }
    await fetch(`${base}/`).catch(() => null);
    await fetch(`${base}/api/user/userinfo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    }).catch(() => null);
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
  if (!existsSync(order)) throw new Error("the recording run wrote no bytecode order");
  return order;
}

try {
  run("compile", compile([]));
  const order = await recordBytecodeOrder(temporary);
  run("compile with the recorded bytecode order", compile([`--bytecode-order=${order}`]));
  renameSync(temporary, outfile);
} finally {
  rmSync(staging, { recursive: true, force: true });
}
const megabytes = (statSync(outfile).size / 1024 / 1024).toFixed(1);
console.log(`build: ${outfile} (${megabytes} MB)`);
