/** Running the operator CLI as a real process (`bun src/main.ts …`) in tests, and what every command owes. */
import { expect } from "bun:test";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../tests/harness.ts";
import { testDatabaseOf } from "../tests/pg.ts";

const ROOT = join(import.meta.dir, "..");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The test process's environment without the FERRY_* variables that steer a command, plus `env`. */
function commandEnv(env: Record<string, string>): Record<string, string | undefined> {
  const clean = { ...process.env };
  for (const name of [
    "FERRY_DATA",
    "FERRY_DATABASE_URL",
    "FERRY_HOST",
    "FERRY_PORT",
    "FERRY_TRUST_PROXY",
    "FERRY_SANDBOX_PAY",
  ])
    delete clean[name];
  return { ...clean, ...env };
}

/** `ferry <args>` with none of the FERRY_* variables of the test process, plus `env`; `input` is its stdin. */
export function ferry(args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> {
  // On the PostgreSQL run a test server's data directory stands for its database.
  const dataDir = args[args.indexOf("--data") + 1];
  const url = args.includes("--data") && dataDir ? testDatabaseOf(dataDir) : undefined;
  return runCommand(
    [process.execPath, "src/main.ts", ...args],
    url ? { FERRY_DATABASE_URL: url, ...env } : env,
    input,
  );
}

/** Runs `argv` from the repository's root to its end, with the environment and stdin `ferry` gives. */
export async function runCommand(
  argv: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<Run> {
  const proc = Bun.spawn(argv, {
    cwd: ROOT,
    env: commandEnv(env),
    stdin: input === undefined ? "ignore" : Buffer.from(input),
    stdout: "pipe",
    stderr: "pipe",
  });
  // A command that should have refused but keeps running (e.g. serve) is stopped, and the test fails.
  const guard = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(guard);
  return { code, stdout, stderr };
}

/** A command line as an operator would paste it (`sh -c`), with `input` on stdin and a clean environment. */
export function runInShell(command: string, input: string, cwd: string): Run {
  const run = Bun.spawnSync(["sh", "-c", command], {
    cwd,
    env: commandEnv({}),
    stdin: Buffer.from(input),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

export interface ServeProcess {
  /** The server process's pid. */
  pid: number;
  host: string | undefined;
  port: number | undefined;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Reads what it prints until `pattern` matches all of it so far; answers all of it. */
  readUntil(pattern: RegExp): Promise<string>;
  /** SIGTERM, then everything it printed and its exit code. */
  stop(): Promise<Run>;
}

/** Starts `ferry serve <args>` as a real process and waits for its "listening on" line. */
export async function startServe(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ServeProcess> {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve", ...args], {
    cwd: options.cwd ?? ROOT,
    env: commandEnv(options.env ?? {}),
    stdout: "pipe",
    stderr: "pipe",
  });
  const guard = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? 20_000);
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let stdout = "";
  /** Reads until `enough()` or the end of its output; answers all it printed so far. */
  async function readWhile(enough: () => boolean): Promise<string> {
    while (!enough()) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += decoder.decode(value, { stream: true });
    }
    return stdout;
  }
  const readUntil = (pattern: RegExp) => readWhile(() => pattern.test(stdout));
  const listening = /listening on (\S+):(\d+)/.exec(await readUntil(/\n/));
  return {
    pid: proc.pid,
    host: listening?.[1],
    port: listening ? Number(listening[2]) : undefined,
    url: listening ? `http://127.0.0.1:${listening[2]}` : "",
    readUntil,
    async stop() {
      proc.kill("SIGTERM");
      await readWhile(() => false);
      const code = await proc.exited;
      clearTimeout(guard);
      return { stdout, stderr: await new Response(proc.stderr).text(), code };
    },
  };
}

/** Non-zero exit and exactly one line on stderr, starting with "error:", no stack trace. */
export function expectOneLineError(run: Run, mentions?: string | RegExp) {
  expect(run.code).not.toBe(0);
  const lines = run.stderr.trim().split("\n");
  expect({ stderr: run.stderr, lines: lines.length }).toEqual({ stderr: run.stderr, lines: 1 });
  expect(lines[0]).toStartWith("error: ");
  expect(run.stderr).not.toMatch(/\n\s+at /);
  if (mentions) expect(lines[0]).toMatch(mentions);
}

/** Runs every command at once (`input` on its stdin); each must fail with a one-line error that mentions its pattern. */
export async function expectRefused(cases: [args: string[], mentions: RegExp, input?: string][]) {
  const runs = await Promise.all(cases.map(([args, , input]) => ferry(args, {}, input)));
  cases.forEach(([args, mentions], i) => {
    const run = runs[i] as Run;
    expect({ args, failed: run.code !== 0 }).toEqual({ args, failed: true });
    expectOneLineError(run, mentions);
  });
}

/** `<command> --help` exits 0 with the usage line and names each of the words (subcommands, options). */
export async function expectHelp(commands: [path: string[], words: string[]][]) {
  const runs = await Promise.all(commands.map(([path]) => ferry([...path, "--help"])));
  commands.forEach(([path, words], i) => {
    const run = runs[i] as Run;
    expect({ path, code: run.code }).toEqual({ path, code: 0 });
    expect(run.stdout).toContain(`Usage: ferry${path.length ? ` ${path.join(" ")}` : ""}`);
    for (const word of words) expect(run.stdout).toContain(word);
  });
}

/** `ferry` bound to one data directory, with the success checks every CLI test makes. */
export function ferryIn(dataDir: string) {
  const withData = (args: string[]) => [...args, "--data", dataDir];
  /** Runs a command that must succeed (exit 0, nothing on stderr) and answers its stdout. */
  async function ok(args: string[]): Promise<string> {
    const run = await ferry(withData(args));
    expect({ args, stderr: run.stderr, code: run.code }).toEqual({ args, stderr: "", code: 0 });
    return run.stdout;
  }
  return {
    withData,
    ok,
    json: async <T>(args: string[]): Promise<T> => JSON.parse(await ok([...args, "--json"])) as T,
  };
}

/** `ferry` bound to one data directory (what `ferryIn` answers). */
export type FerryIn = ReturnType<typeof ferryIn>;

/**
 * A test server (`start`, startTestServer unless given) with `ferry` bound to its data directory,
 * for a test file's set-up: `beforeAll(async () => ({ server, cli } = await startWithCli()))`.
 */
export async function startWithCli(
  start: () => Promise<TestServer> = startTestServer,
): Promise<{ server: TestServer; cli: FerryIn }> {
  const server = await start();
  return { server, cli: ferryIn(server.dataDir) };
}
