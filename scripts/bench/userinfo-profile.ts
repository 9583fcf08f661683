/**
 * `bun scripts/bench/userinfo-profile.ts`: where a logged-in `POST /api/user/userinfo` spends its
 * CPU. A real server (temp data dir, real SQLite) and a real session; then, in this process, the
 * same request through each layer in turn, timed per call, without sockets:
 *
 *   full      what Bun.serve's fetch does: request view, the hot route (server.ts), runCall, security headers
 *   runCall   the envelope call alone (cross-site check, session, body, zod, handler, envelope)
 *   userInfo  the handler's service function alone
 *   baseline  building the Request and a Response with the same body and headers (the floor)
 *
 * `--http <seconds>` instead drives the real server in this process over HTTP from the load
 * generator (load.ts, its own process, 64 keep-alive connections) and prints this process's CPU µs
 * per request; under the profiler that profile is the server's request path, sockets included:
 *
 *   bun --cpu-prof-md --cpu-prof-dir=/tmp/prof scripts/bench/userinfo-profile.ts --http 5
 *
 * Prints; asserts nothing about time.
 * Usage: bun scripts/bench/userinfo-profile.ts [--iterations 200000] [--http <seconds>]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppContext } from "../../src/context.ts";
import { transformPassword } from "../../src/modules/user/password.ts";
import { userCalls } from "../../src/modules/user/routes.ts";
import type { UserRow } from "../../src/modules/user/row.ts";
import { createUser, userInfo } from "../../src/modules/user/service.ts";
import { createSession } from "../../src/modules/user/session.ts";
import { runCall } from "../../src/rpc/call.ts";
import { toBase64Json } from "../../src/rpc/envelope.ts";
import { recordRequestView } from "../../src/rpc/forwarded.ts";
import { secureResponse } from "../../src/rpc/security-headers.ts";
import { buildHandler, type RunningServer, startServer } from "../../src/server.ts";
import { numberFlag } from "./common.ts";
import type { LoadResult, LoadSpec } from "./load.ts";

const argv = process.argv.slice(2);
const iterations = numberFlag(argv, "iterations", 200_000);
const httpSeconds = argv.includes("--http") ? numberFlag(argv, "http", 5) : 0;

const PATH = "/api/user/userinfo";
const BODY = JSON.stringify({ data: toBase64Json({}) });

async function overHttp(server: RunningServer, token: string) {
  const spec: LoadSpec = {
    host: "127.0.0.1",
    port: server.port,
    method: "POST",
    path: PATH,
    headers: { "content-type": "application/json", cookie: `token=${token}` },
    body: BODY,
    connections: 64,
    startAt: Date.now() + 300,
    warmupMs: 1000,
    durationMs: httpSeconds * 1000,
  };
  const load = Bun.spawn([process.execPath, join(import.meta.dir, "load.ts"), JSON.stringify(spec)], {
    stdout: "pipe",
    stderr: "inherit",
  });
  await Bun.sleep(spec.startAt + spec.warmupMs - Date.now());
  const cpuStart = process.cpuUsage();
  await Bun.sleep(spec.durationMs);
  const cpu = process.cpuUsage(cpuStart);
  const result = JSON.parse(await new Response(load.stdout).text()) as LoadResult;
  const us = (cpu.user + cpu.system) / result.requests;
  console.log(
    `userinfo over HTTP: ${Math.round(result.rps)} req/s, server CPU ${us.toFixed(1)} µs/request ` +
      `(statuses ${JSON.stringify(result.statuses)}, errors ${result.errors})`,
  );
}

async function inProcess(server: RunningServer, app: AppContext, user: UserRow, token: string) {
  const url = `${server.url}${PATH}`;
  const headers = { "content-type": "application/json", cookie: `token=${token}`, host: "127.0.0.1" };
  const newRequest = () => new Request(url, { method: "POST", headers, body: BODY });
  const handler = buildHandler(app);
  const def = userCalls.find((call) => call.path === PATH);
  if (!def) throw new Error("no userinfo call");
  const sample = await handler(newRequest());
  const answerBody = await sample.text();
  const answerHeaders = [...sample.headers];

  const layers: [string, () => unknown][] = [
    [
      "full (view + hot route + runCall + headers)",
      () => {
        const request = newRequest();
        const { https } = recordRequestView(request, "127.0.0.1", app.trustedProxies);
        return Promise.resolve(handler(request)).then((response) => secureResponse(response, https));
      },
    ],
    [
      "runCall",
      () => {
        const request = newRequest();
        recordRequestView(request, "127.0.0.1", app.trustedProxies);
        return runCall(app, def, request, "127.0.0.1");
      },
    ],
    ["userInfo", async () => await userInfo(app, user)],
    [
      "baseline (Request + same Response)",
      () => [newRequest(), new Response(answerBody, { headers: answerHeaders })],
    ],
  ];
  const lines: string[] = [];
  for (const [label, run] of layers) {
    for (let i = 0; i < iterations / 10; i++) await run(); // warm-up
    const started = performance.now();
    for (let i = 0; i < iterations; i++) {
      const result = run();
      if (result instanceof Promise) await result;
    }
    const us = ((performance.now() - started) * 1000) / iterations;
    lines.push(`${label.padEnd(44)} ${us.toFixed(2)} µs/call`);
  }
  console.log(`userinfo, in process, ${iterations} calls each\n${lines.join("\n")}`);
}

const dataDir = mkdtempSync(join(tmpdir(), "ferry-profile-"));
const server = await startServer({ dataDir, host: "127.0.0.1", port: 0 });
try {
  const app = server.context;
  const user = await createUser(app, {
    email: "profile@example.com",
    passwordDigest: transformPassword("profile-password-1"),
  });
  const token = await createSession(app, user.id);
  if (httpSeconds) await overHttp(server, token);
  else await inProcess(server, app, user, token);
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
