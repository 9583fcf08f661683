/**
 * The single executable (DESIGN §4): dist/ferry is built from the current source, copied ALONE
 * into an empty temp dir and run there with a minimal environment (no bun on PATH, no
 * node_modules, no repository nearby). It must start, create its database, serve the SPA and the
 * API, and run the operator CLI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { ApiClient } from "../harness.ts";

const root = join(import.meta.dir, "../..");
const dist = join(root, "dist/ferry");

let dir = "";
let env: Record<string, string> = {};
let server: ReturnType<typeof Bun.spawn> | null = null;
let baseUrl = "";
let serverOutput = "";

/** A free loopback port: bind port 0, read the port, release it. */
function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

/** Runs `./ferry …` in the temp dir and returns its exit code and output. */
function ferry(...args: string[]) {
  return ferryWithInput("", ...args);
}

/** `ferry <args>` with `input` on its stdin (user create reads the password there). */
function ferryWithInput(input: string, ...args: string[]) {
  const result = Bun.spawnSync(["./ferry", ...args], {
    cwd: dir,
    env,
    stdin: Buffer.from(input),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

async function waitForHealth(url: string, child: ReturnType<typeof Bun.spawn>, limitMs = 20_000) {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`ferry exited with ${child.exitCode}:\n${serverOutput}`);
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`ferry did not answer /healthz within ${limitMs} ms:\n${serverOutput}`);
}

async function collect(stream: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoder();
  for await (const chunk of stream) serverOutput += decoder.decode(chunk, { stream: true });
}

beforeAll(async () => {
  // Always rebuild, so the test never checks a stale executable. `bun run test` has just built
  // the SPA (check → build-web), so only the compile step runs here unless the embed is missing.
  const skipWeb = existsSync(join(root, "src/generated/embed.ts")) ? ["--skip-web"] : [];
  const build = Bun.spawnSync([process.execPath, "scripts/build.ts", ...skipWeb], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (build.exitCode !== 0) {
    throw new Error(`bun run build failed:\n${build.stdout.toString()}\n${build.stderr.toString()}`);
  }

  dir = mkdtempSync(join(tmpdir(), "ferry-dist-"));
  copyFileSync(dist, join(dir, "ferry"));
  // PATH points at an empty directory: no bun, no node, nothing the executable could lean on.
  mkdirSync(join(dir, "empty-bin"));
  env = { PATH: join(dir, "empty-bin"), HOME: dir, LANG: "C.UTF-8" };

  const port = freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = Bun.spawn(["./ferry", "serve", "--data", "./d", "--port", String(port), "--host", "127.0.0.1"], {
    cwd: dir,
    env,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  void collect(server.stdout as ReadableStream<Uint8Array>);
  void collect(server.stderr as ReadableStream<Uint8Array>);
  await waitForHealth(baseUrl, server);
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    const stopped = await Promise.race([server.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
    if (!stopped) server.kill("SIGKILL");
    await server.exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("dist/ferry on its own", () => {
  test("the temp dir holds nothing but the executable and its data", () => {
    expect(existsSync(join(dir, "node_modules"))).toBe(false);
    expect(existsSync(join(dir, "package.json"))).toBe(false);
    expect(existsSync(join(dir, "d/ferry.db"))).toBe(true);
  });

  test("answers /healthz", async () => {
    const response = await fetch(`${baseUrl}/healthz`);
    expect(response.status).toBe(200);
  });

  test("serves the SPA entry and its script", async () => {
    const page = await fetch(`${baseUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html.toLowerCase()).toStartWith("<!doctype html");
    expect(html).toContain("app.js");

    const script = await fetch(`${baseUrl}/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await script.text()).length).toBeGreaterThan(1000);
  });

  test("prints its version", () => {
    const result = ferry("--version");
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(pkg.version);
  });

  test("reports the embedded migrations as applied", () => {
    const result = ferry("migrate", "status", "--data", "./d", "--json");
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { version: number; appliedTime: number | null }[];
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.appliedTime).toBeNumber();
  });

  test("creates an account on the CLI that can log in through the API", async () => {
    const email = "dist-admin@example.com";
    const password = "a-long-password-1";
    // Without --data the CLI uses ./data, like `ferry serve`.
    const created = ferryWithInput(`${password}\n`, "user", "create", "--email", email, "--role", "admin");
    expect(created.code).toBe(0);
    expect(existsSync(join(dir, "data/ferry.db"))).toBe(true);
    // The same account in the running server's directory, while it runs (WAL).
    const onServer = ferryWithInput(
      `${password}\n`,
      "user",
      "create",
      "--email",
      email,
      "--role",
      "admin",
      "--data",
      "./d",
      "--json",
    );
    expect(onServer.code).toBe(0);
    expect(JSON.parse(onServer.stdout)).toMatchObject({ email, type: "admin" });

    const duplicate = ferryWithInput(`${password}\n`, "user", "create", "--email", email, "--data", "./d");
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr.trim().split("\n")).toHaveLength(1);

    const client = new ApiClient(baseUrl);
    const login = await client.login(email, password);
    expect(login.code).toBe(0);
    const info = await client.call<{ email: string }>("/api/user/userinfo");
    expect(info.code).toBe(0);
    expect(info.data.email).toBe(email);
  });

  test("rejects bad input with a one-line error", () => {
    const result = ferryWithInput("a-long-password-1\n", "user", "create", "--email", "not-an-email");
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("hands itself out to nodes: the install command installs this very executable", async () => {
    const added = ferry(
      "node",
      "add",
      "--name",
      "dist",
      "--type",
      "v2ray",
      "--ip",
      "127.0.0.1",
      "--data",
      "./d",
      "--json",
    );
    expect(added.code).toBe(0);
    const node = JSON.parse(
      ferry("node", "show", JSON.parse(added.stdout)._id, "--data", "./d", "--json").stdout,
    );
    const own = new Bun.CryptoHasher("sha256")
      .update(await Bun.file(join(dir, "ferry")).bytes())
      .digest("hex");
    const download = await fetch(`${baseUrl}/node/ferry?node_id=${node.nodeNo}&token=${node.api_token}`);
    expect(download.headers.get("x-sha256")).toBe(own);
    expect(new Bun.CryptoHasher("sha256").update(await download.bytes()).digest("hex")).toBe(own);

    const command = ferry("node", "install-cmd", node._id, "--panel", baseUrl, "--data", "./d");
    expect(command.code).toBe(0);
    const root = join(dir, "node-root");
    mkdirSync(root);
    // The script runs the downloaded agent's --version before installing it.
    const install = Bun.spawnSync(["sh", "-c", `${command.stdout.trim()} --dry-run`], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", FERRY_INSTALL_ROOT: root },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect({ code: install.exitCode, stderr: install.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    const installed = await Bun.file(join(root, "usr/local/bin/ferry")).bytes();
    expect(new Bun.CryptoHasher("sha256").update(installed).digest("hex")).toBe(own);
  });

  test("stops cleanly on SIGTERM", async () => {
    const child = server as ReturnType<typeof Bun.spawn>;
    child.kill("SIGTERM");
    const code = await Promise.race([child.exited, Bun.sleep(15_000).then(() => "still running")]);
    expect(code).toBe(0);
  });
});
