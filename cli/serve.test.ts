/**
 * `ferry serve` as a real process: where it listens by default, the trust-proxy warning and list
 * (issue 11, finding 7).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectOneLineError, ferry } from "./test-helpers.ts";

const ROOT = join(import.meta.dir, "..");
const dataDir = mkdtempSync(join(tmpdir(), "ferry-serve-"));

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts `ferry serve <args>`, waits for its "listening on" line, stops it; what it printed. */
async function serveOnce(args: string[], env: Record<string, string> = {}) {
  const cleanEnv = { ...process.env };
  delete cleanEnv.FERRY_HOST;
  delete cleanEnv.FERRY_TRUST_PROXY;
  const proc = Bun.spawn(
    [process.execPath, "src/main.ts", "serve", "--port", "0", "--data", dataDir, ...args],
    {
      cwd: ROOT,
      env: { ...cleanEnv, ...env },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const guard = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  let stdout = "";
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) {
    stdout += decoder.decode(chunk);
    if (stdout.includes("\n")) break;
  }
  const listening = /listening on (\S+):(\d+)/.exec(stdout);
  const health = listening
    ? (await fetch(`http://127.0.0.1:${listening[2]}/healthz`).catch(() => null))?.status
    : undefined;
  proc.kill("SIGTERM");
  await proc.exited;
  clearTimeout(guard);
  const stderr = await new Response(proc.stderr).text();
  return { host: listening?.[1], health, stderr };
}

test("serve listens on 127.0.0.1 unless told otherwise, without a warning", async () => {
  const run = await serveOnce([]);
  expect(run).toEqual({ host: "127.0.0.1", health: 200, stderr: "" });
});

test("listening on all addresses with trust-proxy on prints a warning naming the trusted proxies", async () => {
  const flag = await serveOnce(["--host", "0.0.0.0", "--trust-proxy"]);
  expect(flag.host).toBe("0.0.0.0");
  expect(flag.stderr).toContain("warning: listening on all addresses with --trust-proxy 127.0.0.0/8,::1");
  const env = await serveOnce(["--host", "0.0.0.0"], { FERRY_TRUST_PROXY: "10.0.0.5" });
  expect(env.stderr).toContain("--trust-proxy 10.0.0.5");
  // All addresses without trust-proxy: nothing to warn about.
  expect((await serveOnce(["--host", "0.0.0.0"])).stderr).toBe("");
});

test("a trust-proxy entry that is no address or range is refused with one line", async () => {
  for (const list of ["10.0.0.0/33", "proxy.example", "10.0.0.1,,::1/129"]) {
    const run = await ferry(["serve", "--port", "0", "--data", dataDir, "--trust-proxy", list]);
    expectOneLineError(run, /--trust-proxy: not an IP address or CIDR range/);
  }
});
