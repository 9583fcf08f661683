/**
 * `ferry serve` as a real process: where it listens by default, the trust-proxy warning and list
 * (issue 11, finding 7); refusing a taken port and what it prints on start (issue 12).
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { createContext } from "../src/context.ts";
import { openSqlite } from "../src/db/db.ts";
import { ApiClient } from "../tests/harness.ts";
import { expectOneLineError, ferry, runInShell, startServe } from "./test-helpers.ts";

const root = mkdtempSync(join(tmpdir(), "ferry-serve-"));
const dataDir = join(root, "shared");
let dirs = 0;

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A new data directory under the test's temp root (absolute). */
function freshDir(): string {
  dirs += 1;
  return join(root, `d${dirs}`);
}

/** Starts `ferry serve <args>` on a free port, checks /healthz, stops it; what it printed. */
async function serveOnce(args: string[], env: Record<string, string> = {}) {
  const server = await startServe(["--port", "0", "--data", dataDir, ...args], { env });
  const health = server.port ? (await fetch(`${server.url}/healthz`).catch(() => null))?.status : undefined;
  const { stderr } = await server.stop();
  return { host: server.host, health, stderr };
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

test("a second serve on a taken port exits non-zero with one line; the first keeps serving its own database", async () => {
  const firstDir = freshDir();
  const secondDir = freshDir();
  const created = await ferry(
    ["user", "create", "--email", "first@example.com", "--data", firstDir],
    {},
    "long-password-1\n",
  );
  expect(created.code).toBe(0);
  const first = await startServe(["--port", "0", "--data", firstDir]);
  try {
    for (const host of ["127.0.0.1", "0.0.0.0"]) {
      const second = await ferry([
        "serve",
        "--host",
        host,
        "--port",
        String(first.port),
        "--data",
        secondDir,
      ]);
      expectOneLineError(
        second,
        `error: port ${first.port} on ${host} is already in use (another ferry serve?); choose another with --port`,
      );
      // The port is taken before any database is opened: the refused process created none.
      expect(existsSync(join(secondDir, "ferry.db"))).toBe(false);
    }
    // Every request still reaches the first server's database, where the account exists.
    for (let i = 0; i < 4; i++) {
      const client = new ApiClient(first.url);
      expect((await client.login("first@example.com", "long-password-1")).code).toBe(0);
      const info = await client.call<{ email: string }>("/api/user/userinfo");
      expect(info.data.email).toBe("first@example.com");
    }
  } finally {
    expect((await first.stop()).code).toBe(0);
  }
});

test("start-up prints the address, the URL to open, the absolute data directory and how to create the first admin", async () => {
  const dir = freshDir();
  // A relative --data is printed as the absolute directory it means.
  const fresh = await startServe(["--port", "0", "--data", basename(dir)], { cwd: root });
  const out = await fresh.stop();
  expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
  const lines = out.stdout.trimEnd().split("\n");
  expect(lines[0]).toBe(`ferry ${pkg.version} listening on 127.0.0.1:${fresh.port}, data in ${dir}`);
  expect(lines).toContain(`open http://127.0.0.1:${fresh.port}/`);
  const hint = lines.findIndex((line) => line.startsWith("no admin account yet"));
  expect(hint).toBeGreaterThan(0);
  const command = lines[hint + 1]?.trim() ?? "";
  expect(command).toEndWith(` user create --email admin@example.com --role admin --data ${dir}`);
  expect(command).not.toContain("--password");

  // The printed command works as printed, from anywhere, with the password on stdin.
  const run = runInShell(command, "admin-password-1\n", tmpdir());
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });

  const again = await startServe(["--port", "0", "--data", dir]);
  try {
    const admin = new ApiClient(again.url);
    expect((await admin.login("admin@example.com", "admin-password-1")).code).toBe(0);
    expect((await admin.call("/api/admin/config/get")).code).toBe(0);
  } finally {
    const next = await again.stop();
    expect(next.stdout).toContain(`open http://127.0.0.1:${again.port}/`);
    expect(next.stdout).not.toContain("no admin account yet");
    expect(next.stdout).not.toContain("user create");
  }
});

test("start-up: all addresses said in a line, the site address as the URL, an admin_id account counts as admin", async () => {
  const dir = freshDir();
  const everywhere = await startServe(["--host", "0.0.0.0", "--port", "0", "--data", dir]);
  const out = await everywhere.stop();
  expect(out.stderr).toBe("");
  expect(out.stdout).toContain(`listening on 0.0.0.0:${everywhere.port}`);
  expect(out.stdout).toMatch(/^listening on all addresses/m);
  expect(out.stdout).toContain(`open http://127.0.0.1:${everywhere.port}/`);
  expect(out.stdout).toContain("no admin account yet");

  const created = await ferry(
    ["user", "create", "--email", "boss@example.com"],
    { FERRY_DATA: dir },
    "long-password-1\n",
  );
  expect(created.code).toBe(0);
  const ctx = createContext(openSqlite(join(dir, "ferry.db")));
  await ctx.settings.update({ site_url: "https://panel.example.com", admin_id: ["boss@example.com"] });
  await ctx.db.close();

  const configured = await startServe(["--port", "0", "--data", dir]);
  const after = await configured.stop();
  expect(after.stdout).toContain("open https://panel.example.com/");
  expect(after.stdout).not.toContain("no admin account yet");
  expect(after.stdout).not.toMatch(/all addresses/);
});

test("start-up says when the server may call private addresses (--allow-private-urls or FERRY_ALLOW_PRIVATE_URLS=1)", async () => {
  const line =
    "--allow-private-urls: the server may call loopback, private and link-local addresses " +
    "(EPay, TronGrid, Telegram Bot API, SMTP)";
  const printed = async (args: string[], env: Record<string, string> = {}) => {
    const server = await startServe(["--port", "0", "--data", dataDir, ...args], { env });
    const out = await server.stop();
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
    return out.stdout.split("\n");
  };
  expect(await printed(["--allow-private-urls"])).toContain(line);
  expect(await printed([], { FERRY_ALLOW_PRIVATE_URLS: "1" })).toContain(line);
  expect((await printed([])).filter((printedLine) => printedLine.includes("allow-private-urls"))).toEqual([]);
});

test("start-up says when payments go to the sandbox (nothing is really charged), by the variable or the setting", async () => {
  const dir = freshDir();
  const SANDBOX_LINE = "FERRY_SANDBOX_PAY=1: 沙箱支付收款，不会真实扣款";
  const byVariable = await startServe(["--port", "0", "--data", dir], { env: { FERRY_SANDBOX_PAY: "1" } });
  const variableRun = await byVariable.stop();
  expect({ code: variableRun.code, stderr: variableRun.stderr }).toEqual({ code: 0, stderr: "" });
  expect(variableRun.stdout.split("\n")).toContain(SANDBOX_LINE);

  const off = await startServe(["--port", "0", "--data", dir]);
  expect((await off.stop()).stdout).not.toContain("沙箱");

  const ctx = createContext(openSqlite(join(dir, "ferry.db")));
  await ctx.settings.update({ sandbox_pay: true, alipay: "sandbox" });
  await ctx.db.close();
  const bySetting = await startServe(["--port", "0", "--data", dir]);
  expect((await bySetting.stop()).stdout.split("\n")).toContain(
    "setting sandbox_pay (配置管理): 沙箱支付收款，不会真实扣款",
  );
});
