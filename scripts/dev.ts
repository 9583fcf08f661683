/**
 * `bun run dev`: the SPA watcher (scripts/build-web.ts --watch) and the server from source under
 * `bun --watch` (data ./data, port 3000), together. The SPA is rebuilt when web/ (or a schema it
 * imports, a migration, index.html, web/public) changes; that rewrites src/generated/embed.ts and
 * `bun --watch` restarts the server, as it does for any change under src/ or cli/.
 *
 * The server starts after the first SPA build, so a fresh clone (no src/generated yet) works.
 * Extra arguments go to `ferry serve`: `bun run dev -- --host 0.0.0.0 --port 3100`.
 * Ctrl-C (or SIGTERM) stops both; if either one dies, the other is stopped too.
 */
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const bun = process.execPath;
const serveArgs = ["--data", "./data", "--port", "3000", "--host", "127.0.0.1", ...process.argv.slice(2)];

type Child = ReturnType<typeof Bun.spawn>;
const children: Child[] = [];
let stopping = false;

function stopAll(code: number): void {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  // Give them a moment to close the database cleanly, then make sure they are gone.
  const deadline = setTimeout(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    process.exit(code);
  }, 3000);
  void Promise.all(children.map((child) => child.exited)).then(() => {
    clearTimeout(deadline);
    process.exit(code);
  });
}

process.on("SIGINT", () => stopAll(0));
process.on("SIGTERM", () => stopAll(0));

const web = Bun.spawn([bun, "scripts/build-web.ts", "--watch"], {
  cwd: root,
  stdout: "pipe",
  stderr: "inherit",
  stdin: "ignore",
});
children.push(web);
void web.exited.then((code) => {
  if (stopping) return;
  console.error(`[dev] the SPA watcher exited (${code}); stopping`);
  stopAll(code || 1);
});

let serverStarted = false;
function startServer() {
  if (serverStarted || stopping) return;
  serverStarted = true;
  const server = Bun.spawn([bun, "--watch", "src/main.ts", "serve", ...serveArgs], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
    stdin: "ignore",
  });
  children.push(server);
  void server.exited.then((code) => {
    if (stopping) return;
    console.error(`[dev] the server watcher exited (${code}); stopping`);
    stopAll(code || 1);
  });
}

console.log("[dev] building the SPA; the server starts after the first build");
// Forward the watcher's output and start the server on its first "[web] rebuilt" line.
const decoder = new TextDecoder();
let seen = "";
for await (const chunk of web.stdout) {
  process.stdout.write(chunk);
  if (!serverStarted) {
    seen = (seen + decoder.decode(chunk, { stream: true })).slice(-200);
    if (seen.includes("[web] rebuilt")) startServer();
  }
}
