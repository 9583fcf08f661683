/**
 * The control port over real HTTP: the bearer token is required, /status and /sync answer what the
 * agent says, and /upgrade swaps the executable only when the download's SHA-256 matches.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentStatus, type ControlServer, startControlServer } from "./control.ts";

const TOKEN = "t0ken-of-the-node";
const OLD_EXE = "#!/bin/sh\necho old\n";
const NEW_EXE = "#!/bin/sh\necho new\n";
const NEW_SHA = new Bun.CryptoHasher("sha256").update(NEW_EXE).digest("hex");

let dir = "";
let exe = "";
let control: ControlServer;
let files: ReturnType<typeof Bun.serve>;
let base = "";
const upgradedTo: string[] = [];
let syncs = 0;
let syncFails = false;

const STATUS: AgentStatus = {
  version: "9.9.9",
  users: 3,
  core: "running",
  pendingReports: 2,
  lastPushTime: 1_700_000_000_000,
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ferry-control-"));
  exe = join(dir, "ferry");
  writeFileSync(exe, OLD_EXE, { mode: 0o700 });
  files = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) =>
      new URL(request.url).pathname === "/node/ferry"
        ? new Response(NEW_EXE)
        : new Response("no", { status: 404 }),
  });
  control = startControlServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    panelUrl: `http://127.0.0.1:${files.port}`,
    exe,
    agent: {
      async sync() {
        syncs += 1;
        if (syncFails) throw new Error("panel unreachable");
        return { users: 7 };
      },
      status: () => STATUS,
      upgraded: (version) => upgradedTo.push(version),
    },
  });
  base = `http://127.0.0.1:${control.port}`;
});

afterAll(async () => {
  await control?.stop();
  files?.stop(true);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown, token: string | null = TOKEN) =>
  fetch(base + path, {
    method,
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("control port", () => {
  test("without the node's token every path is 401", async () => {
    for (const [method, path] of [
      ["GET", "/status"],
      ["POST", "/sync"],
      ["POST", "/upgrade"],
    ] as const) {
      expect((await call(method, path, undefined, null)).status).toBe(401);
      expect((await call(method, path, undefined, `${TOKEN}x`)).status).toBe(401);
    }
    expect(syncs).toBe(0);
  });

  test("/status is the agent's status; /sync answers the user count or the failure", async () => {
    const status = await call("GET", "/status");
    expect(status.status).toBe(200);
    expect(await status.json()).toEqual(STATUS);

    const synced = await call("POST", "/sync");
    expect([synced.status, await synced.json()]).toEqual([200, { ok: true, users: 7 }]);
    syncFails = true;
    const failed = await call("POST", "/sync");
    expect([failed.status, await failed.json()]).toEqual([502, { ok: false, error: "panel unreachable" }]);
    syncFails = false;
    expect((await call("GET", "/nothing")).status).toBe(404);
  });

  test("a wrong SHA-256 replaces nothing; bad bodies are refused", async () => {
    const wrong = await call("POST", "/upgrade", {
      url: "/node/ferry",
      sha256: "0".repeat(64),
      version: "1.0.0",
    });
    expect([wrong.status, await wrong.json()]).toEqual([400, { ok: false, error: "sha256 mismatch" }]);
    const missing = await call("POST", "/upgrade", { url: "/node/gone", sha256: NEW_SHA, version: "1.0.0" });
    expect(missing.status).toBe(502);
    expect((await call("POST", "/upgrade", { sha256: NEW_SHA })).status).toBe(400);
    expect((await call("POST", "/upgrade", { url: "/node/ferry", sha256: "abc" })).status).toBe(400);
    expect(readFileSync(exe, "utf8")).toBe(OLD_EXE);
    expect(upgradedTo).toEqual([]);
  });

  test("a matching SHA-256 swaps the executable (mode 755) and then tells the agent to exit", async () => {
    const answer = await call("POST", "/upgrade", {
      url: `http://127.0.0.1:${files.port}/node/ferry`,
      sha256: NEW_SHA.toUpperCase(),
      version: "1.2.3",
    });
    expect([answer.status, await answer.json()]).toEqual([200, { ok: true }]);
    expect(readFileSync(exe, "utf8")).toBe(NEW_EXE);
    expect(statSync(exe).mode & 0o777).toBe(0o755);
    const deadline = Date.now() + 5_000;
    while (upgradedTo.length === 0 && Date.now() < deadline) await Bun.sleep(10);
    expect(upgradedTo).toEqual(["1.2.3"]);
  });
});
