/**
 * Issue 26, C7: a percent-escape that does not decode, anywhere in the path of any route the server
 * registers, answers 404 and leaves no error-log row; and the error log's budget is kept per source
 * (the route as registered, the call, the job), so one noisy route cannot hide another's errors.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { LOG_WINDOW_MS } from "../src/db/counted-log.ts";
import { PER_SOURCE_PER_WINDOW, recordError } from "../src/modules/errors/service.ts";
import { buildApp } from "../src/server.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "./harness.ts";

let server: TestServer;
let admin: ApiClient;
let subscriber: { id: string; userkey: string };

beforeAll(async () => {
  server = await startTestServer();
  const logged = await loggedInClient(server, { role: "admin" });
  admin = logged.client;
  subscriber = { id: logged.user.id, userkey: logged.user.userkey };
});
afterAll(async () => {
  await server?.close();
});

async function errorRows() {
  return await server.context.db.all<{ name: string; msg: string; repeat_count: number }>(
    "SELECT name, msg, repeat_count FROM error_logs ORDER BY id",
  );
}

/** Escapes no UTF-8 decoder accepts: invalid bytes, cut and non-hex escapes, overlong forms, a surrogate. */
const UNDECODABLE = [
  "%ff",
  "%",
  "%zz",
  "%c0%af",
  "%e0%80%af",
  "%f0%80%80%af",
  "%ed%a0%80",
  "%f8%88%80%80%80",
];
/** Decodes, to a NUL: must reach the route and be refused there like any unknown value. */
const NUL = "%00";

/** Values that take a request as far into its route as a real one goes; any other parameter gets "x". */
function wellFormed(param: string): string {
  const values: Record<string, string> = {
    client: "clash",
    userId: subscriber.id,
    userkey: subscriber.userkey,
    provider: "epay",
  };
  return values[param] ?? "x";
}

interface Probe {
  method: "GET" | "POST";
  path: string;
  undecodable: boolean;
}

/** A segment of a registered route with a well-formed value in place of its parameter or wildcard. */
function filled(segment: string): string {
  if (segment.startsWith(":")) return wellFormed(segment.slice(1));
  return segment === "*" ? "x" : segment;
}

/**
 * For one registered route: each escape as each parameter (and the wildcard), appended to each
 * fixed segment, and in the query, sent as GET and as POST.
 */
function probesFor(route: string): Probe[] {
  const segments = route.split("/");
  const paths: { path: string; undecodable: boolean }[] = [];
  for (const bad of [...UNDECODABLE, NUL]) {
    const undecodable = bad !== NUL;
    for (let at = 1; at < segments.length; at += 1) {
      const segment = segments[at] ?? "";
      const variable = segment.startsWith(":") || segment === "*";
      const path = segments.map((other, i) =>
        i !== at ? filled(other) : variable ? bad : `${segment}${bad}`,
      );
      paths.push({ path: path.join("/"), undecodable });
    }
    const query = `flag=${bad}&type=${bad}&token=${bad}&${bad}=${bad}`;
    // Query strings are read leniently (URLSearchParams); only no 500 is asked of them.
    paths.push({ path: `${segments.map(filled).join("/")}?${query}`, undecodable: false });
  }
  return paths.flatMap((probe) => (["GET", "POST"] as const).map((method) => ({ method, ...probe })));
}

/** Runs `work` over `items`, a few at a time. */
async function inBatches<T>(items: T[], width: number, work: (item: T) => Promise<void>) {
  for (let at = 0; at < items.length; at += width) await Promise.all(items.slice(at, at + width).map(work));
}

describe("a path that does not decode (C7)", () => {
  test("the three paths of the report answer 404, and the error log stays empty", async () => {
    for (const [method, path] of [
      ["GET", `/api/subscript/clash/${subscriber.id}/%ff`],
      ["GET", "/api/subscript/clash/%ff/x"],
      ["GET", "/api/pay/notify/%ff"],
      ["POST", "/api/pay/notify/%ff"],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        body: method === "POST" ? "a=1" : undefined,
      });
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
    }
    expect(await errorRows()).toEqual([]);
  });

  test("every route the server registers, each escape in each position, GET and POST: no 500, no error row", async () => {
    const routes = [...new Set(buildApp(server.context).routes.map((route) => route.path))];
    // The table, not a hand list: the parameter routes and the catch-alls are in it.
    expect(routes).toContain("/api/subscript/:client/:userId/:userkey");
    expect(routes).toContain("/api/pay/notify/:provider");
    expect(routes).toContain("/api/*");
    expect(routes.length).toBeGreaterThan(100);
    const probes = routes.flatMap(probesFor);
    const printed: unknown[][] = [];
    const stderr = spyOn(console, "error").mockImplementation((...line) => printed.push(line));
    const wrong: string[] = [];
    try {
      await inBatches(probes, 16, async ({ method, path, undecodable }) => {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers: { "content-type": "application/json" },
          body: method === "POST" ? JSON.stringify({ data: "e30=" }) : undefined,
          redirect: "manual",
        });
        await response.arrayBuffer();
        if (response.status >= 500 || (undecodable && response.status !== 404)) {
          wrong.push(`${method} ${path} → ${response.status}`);
        }
      });
    } finally {
      stderr.mockRestore();
    }
    expect(wrong).toEqual([]);
    expect(await errorRows()).toEqual([]);
    expect(printed).toEqual([]);
  }, 120_000);
});

describe("the error-log budget is kept per source (C7)", () => {
  test("a route failing on 400 made-up paths is one source: another route's error is still logged", async () => {
    const db = server.context.db;
    await db.exec("ALTER TABLE payments RENAME TO payments_away");
    try {
      await inBatches(
        Array.from({ length: 400 }, (_, i) => i),
        16,
        async (i) => {
          const response = await fetch(`${server.url}/pay/sandbox/made-up-${i}`);
          await response.arrayBuffer();
          expect(response.status).toBe(500);
        },
      );
    } finally {
      await db.exec("ALTER TABLE payments_away RENAME TO payments");
    }
    await db.exec("ALTER TABLE notice_clicks RENAME TO notice_clicks_away");
    try {
      expect((await admin.call("/api/user_notive/list")).code).toBe(999);
    } finally {
      await db.exec("ALTER TABLE notice_clicks_away RENAME TO notice_clicks");
    }
    expect((await errorRows()).at(-1)).toEqual({
      name: "/api/user_notive/list",
      msg: expect.stringContaining("notice_clicks"),
      repeat_count: 1,
    });
    // The 400 failures are one row that counts them, under the route's name.
    const sandbox = (await errorRows()).filter((row) => row.name.includes("/pay/sandbox/"));
    expect(sandbox).toEqual([
      { name: "GET /pay/sandbox/:tradeNo", msg: expect.stringContaining("payments"), repeat_count: 400 },
    ]);
    await db.exec("DELETE FROM error_logs");
  });

  test("a source that used up its budget with ever-new messages leaves another source's errors logged", async () => {
    const db = server.context.db;
    // A window of its own (times given explicitly), so no other row counts towards its caps.
    const window = (Math.floor(Date.now() / LOG_WINDOW_MS) + 3) * LOG_WINDOW_MS;
    for (let i = 0; i < 1000; i += 1)
      await recordError(db, "usdt watcher", new Error(`HTTP 502 #${i}`), window + i);
    const noisy = (await errorRows()).filter((row) => row.name === "usdt watcher");
    expect(noisy.length).toBe(PER_SOURCE_PER_WINDOW + 1);
    expect(noisy.at(-1)?.msg).toContain("本小时错误过多");

    await recordError(db, "telegram sender", new Error("bot token refused"), window + 2000);
    expect((await errorRows()).at(-1)).toEqual({
      name: "telegram sender",
      msg: "bot token refused",
      repeat_count: 1,
    });
    await db.exec("DELETE FROM error_logs");
  });
});
