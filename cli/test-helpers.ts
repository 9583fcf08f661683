/** Running the operator CLI as a real process (`bun src/main.ts …`) in tests, and what every command owes. */
import { expect } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `ferry <args>` with none of the FERRY_* variables of the test process, plus `env`. */
export async function ferry(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const cleanEnv = { ...process.env };
  delete cleanEnv.FERRY_DATA;
  delete cleanEnv.FERRY_HOST;
  delete cleanEnv.FERRY_PORT;
  const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    cwd: ROOT,
    env: { ...cleanEnv, ...env },
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

/** Non-zero exit and exactly one line on stderr, starting with "error:", no stack trace. */
export function expectOneLineError(run: Run, mentions?: string | RegExp) {
  expect(run.code).not.toBe(0);
  const lines = run.stderr.trim().split("\n");
  expect({ stderr: run.stderr, lines: lines.length }).toEqual({ stderr: run.stderr, lines: 1 });
  expect(lines[0]).toStartWith("error: ");
  expect(run.stderr).not.toMatch(/\n\s+at /);
  if (mentions) expect(lines[0]).toMatch(mentions);
}

/** Runs every command at once; each must fail with a one-line error that mentions its pattern. */
export async function expectRefused(cases: [args: string[], mentions: RegExp][]) {
  const runs = await Promise.all(cases.map(([args]) => ferry(args)));
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
