/**
 * Unexpected failures provoked for real (tables dropped, a trigger refusing writes): the caller gets
 * 999 without internals, the error log gets a row, and admins read and clear it over the API.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { connect } from "node:net";
import {
  ApiClient,
  decodeAnswer,
  loggedInClient,
  startWithAdmin,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { refuseWrites } from "../../../tests/refuse-writes.ts";
import { LOG_WINDOW_MS } from "../../db/counted-log.ts";
import { transformPassword } from "../user/password.ts";
import { createUser } from "../user/service.ts";
import { type ErrorRecord, PER_SOURCE_PER_WINDOW, recordError, TOTAL_PER_WINDOW } from "./service.ts";

let server: TestServer;
let admin: ApiClient;
let user: ApiClient;

beforeAll(async () => {
  ({ server, admin } = await startWithAdmin());
  user = (await loggedInClient(server)).client;
});
afterAll(async () => {
  await server?.close();
});

/** The engine's own words for a table that is not there. */
function noSuchTable(table: string): string {
  return server.context.db.engine === "postgres"
    ? `relation "${table}" does not exist`
    : `no such table: ${table}`;
}

async function errorRows() {
  return await server.context.db.all<{ create_time: number; name: string; msg: string; stack: string }>(
    "SELECT create_time, name, msg, stack FROM error_logs ORDER BY id",
  );
}

/** Decoded answer text, to look for internals. */
async function answerText(response: Response): Promise<string> {
  const body = (await response.json()) as { data: string };
  return Buffer.from(body.data, "base64").toString("utf8");
}

function expectNoInternals(text: string) {
  expect(text).not.toMatch(/\bat .+\(.*\)/);
  expect(text).not.toMatch(/\n\s+at /);
  expect(text).not.toContain(".ts:");
  expect(text).not.toContain("/work/");
  expect(text).not.toContain("node_modules");
}

describe("unexpected errors", () => {
  test("a call whose table is gone answers 999 with a message and no stack, and is logged", async () => {
    const before = Date.now();
    await server.context.db.exec("DROP TABLE notice_clicks");
    const response = await user.raw(
      "/api/user_notive/list",
      JSON.stringify({ data: Buffer.from("{}").toString("base64") }),
    );
    expect(response.status).toBe(200);
    const text = await answerText(response);
    const answer = JSON.parse(text) as { code: number; data: unknown; msg: string };
    expect(answer.code).toBe(999);
    expect(answer.data).toBeNull();
    expect(answer.msg.length).toBeGreaterThan(0);
    expectNoInternals(text);

    const rows = await errorRows();
    expect(rows.length).toBe(1);
    const row = rows[0];
    expect(row?.name).toContain("/api/user_notive/list");
    expect(row?.msg).toContain(noSuchTable("notice_clicks"));
    expect(row?.stack).toContain("at ");
    expect(row?.create_time).toBeGreaterThanOrEqual(before);
    expect(row?.create_time).toBeLessThanOrEqual(Date.now());

    // Other calls keep working.
    expect((await user.call("/api/user/userinfo")).code).toBe(0);
  });

  test("a login whose session cannot be stored answers 999 and sets no cookie", async () => {
    const email = uniqueEmail("trigger");
    await createUser(server.context, { email, passwordDigest: transformPassword("correct-horse-1") });
    const dropTrigger = await refuseWrites(server.context.db, {
      name: "refuse_sessions",
      table: "sessions",
      event: "INSERT",
      message: "sessions are read-only",
    });
    try {
      const client = new ApiClient(server.url);
      const answer = await client.login(email, "correct-horse-1");
      expect(answer.code).toBe(999);
      expect(answer.msg).not.toContain("read-only");
      expect(client.cookies.has("token")).toBe(false);
      expect((await errorRows()).at(-1)?.msg).toContain("sessions are read-only");
      expect((await errorRows()).at(-1)?.name).toContain("/api/user/login");
    } finally {
      await dropTrigger();
    }
  });

  test("a failing confirm link (not an envelope call) is HTTP 500 without internals, and logged", async () => {
    await server.context.db.exec("DROP TABLE email_tokens");
    const response = await fetch(
      `${server.url}/api/account/signup_confirm?serial_id=${"a".repeat(24)}&key=${"b".repeat(64)}`,
    );
    expect(response.status).toBe(500);
    expectNoInternals(await response.text());
    const row = (await errorRows()).at(-1);
    expect(row?.name).toBe("GET /api/account/signup_confirm");
    expect(row?.msg).toContain("email_tokens");
  });
});

describe("/api/admin/errors/list and clear", () => {
  test("only admins: others 1003, visitors 1002", async () => {
    const visitor = new ApiClient(server.url);
    for (const path of ["/api/admin/errors/list", "/api/admin/errors/clear"]) {
      expect((await visitor.call(path)).code).toBe(1002);
      expect((await user.call(path)).code).toBe(1003);
      for (const role of ["channel", "yunying"] as const) {
        const { client } = await loggedInClient(server, { role });
        expect((await client.call(path)).code).toBe(1003);
      }
    }
    expect((await errorRows()).length).toBe(3);
  });

  test("list shows createTime, name, msg and stack, newest first, within the asked number of days", async () => {
    const tenDaysAgo = Date.now() - 10 * 86_400_000;
    await server.context.db.run(
      "INSERT INTO error_logs (create_time, last_time, name, msg, stack) VALUES (?, ?, ?, ?, ?)",
      tenDaysAgo,
      tenDaysAgo,
      "old",
      "ten days ago",
      "",
    );
    const answer = await admin.call<ErrorRecord[]>("/api/admin/errors/list");
    expect(answer.code).toBe(0);
    expect(answer.data.length).toBe(3);
    for (const record of answer.data) {
      expect(Object.keys(record).sort()).toEqual([
        "_id",
        "count",
        "createTime",
        "lastTime",
        "msg",
        "name",
        "stack",
      ]);
      expect(typeof record.createTime).toBe("number");
      expect(record.count).toBe(1);
      expect(record.lastTime).toBe(record.createTime);
    }
    expect(answer.data.at(-1)?.name).toContain("/api/user_notive/list");
    expect(answer.data[0]?.name).toBe("GET /api/account/signup_confirm");
    expect(answer.data.map((r) => r.msg)).not.toContain("ten days ago");

    const month = await admin.call<ErrorRecord[]>("/api/admin/errors/list", { num: 30 });
    expect(month.data.map((r) => r.msg)).toContain("ten days ago");

    for (const num of [0, -1, "7", 1.5, 100_000]) {
      expect((await admin.call("/api/admin/errors/list", { num })).code).toBe(1000);
    }
  });

  test("clear empties the log and says how many went", async () => {
    const answer = await admin.call<{ deletedCount: number }>("/api/admin/errors/clear");
    expect(answer.code).toBe(0);
    expect(answer.data.deletedCount).toBe(4);
    expect(await errorRows()).toEqual([]);
    expect((await admin.call<ErrorRecord[]>("/api/admin/errors/list", { num: 3650 })).data).toEqual([]);
  });
});

/** Opens a connection, sends headers and part of a body, then goes away (a closed tab, an aborted upload). */
function abortMidBody(port: number, head: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(head);
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 100);
    });
    socket.on("error", reject);
  });
}

describe("a log strangers cannot fill (issue 11, finding 13)", () => {
  test("clients that go away mid-body add no error row", async () => {
    const before = (await errorRows()).length;
    const cookie = `Cookie: ${user.cookieHeader()}\r\n`;
    await Promise.all([
      abortMidBody(
        server.port,
        `POST /api/user/userinfo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${cookie}Content-Length: 100000\r\n\r\n{"data":"`,
      ),
      abortMidBody(
        server.port,
        'POST /api/user/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"dat\r\n',
      ),
      abortMidBody(
        server.port,
        "POST /api/pay/notify/epay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\npid=1",
      ),
    ]);
    // Give the server the time to see the connections close (it logged them within this before).
    await Bun.sleep(500);
    expect((await errorRows()).length).toBe(before);
    expect((await user.call("/api/user/userinfo")).code).toBe(0);
  });

  test("10 000 identical errors are one row that counts them", async () => {
    const db = server.context.db;
    const start = Date.now();
    for (let i = 0; i < 10_000; i += 1)
      await recordError(db, "node push", new Error("SQLITE_BUSY: database is locked"));
    const rows = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM error_logs WHERE name = 'node push'");
    expect(rows?.n).toBe(1);
    const listed = (await admin.call<ErrorRecord[]>("/api/admin/errors/list")).data.find(
      (record) => record.name === "node push",
    );
    expect(listed?.count).toBe(10_000);
    expect(listed?.msg).toBe("SQLITE_BUSY: database is locked");
    expect(listed?.createTime).toBeGreaterThanOrEqual(start);
    expect(listed?.lastTime).toBeGreaterThanOrEqual(listed?.createTime ?? Infinity);
  });

  test("ever-new messages from one source, or from ever-new sources, add a bounded number of rows an hour", async () => {
    const db = server.context.db;
    // A window of its own (times given explicitly), so earlier rows do not count towards its caps.
    const window = (Math.floor(Date.now() / LOG_WINDOW_MS) + 2) * LOG_WINDOW_MS;
    for (let i = 0; i < 1000; i += 1)
      await recordError(db, "usdt watcher", new Error(`HTTP 500 #${i}`), window + i);
    const rowsSince = async (name: string | null) =>
      await db.get<{ n: number; counted: number }>(
        "SELECT COUNT(*) AS n, SUM(repeat_count) AS counted FROM error_logs WHERE create_time >= ?1 AND (CAST(?2 AS TEXT) IS NULL OR name = ?2)",
        window,
        name,
      );
    expect(await rowsSince("usdt watcher")).toEqual({ n: PER_SOURCE_PER_WINDOW + 1, counted: 1000 });
    for (let i = 0; i < 5000; i += 1)
      await recordError(db, `GET /made-up/${i}`, new Error("boom"), window + 2000 + i);
    const all = await rowsSince(null);
    expect(all?.n).toBeLessThanOrEqual(TOTAL_PER_WINDOW + 1);
    expect(all?.counted).toBe(6000);
    const overflow = await db.get<{ msg: string; repeat_count: number }>(
      "SELECT msg, repeat_count FROM error_logs WHERE name = 'error_logs'",
    );
    expect(overflow?.msg).toContain("本小时错误过多");
    await db.run("DELETE FROM error_logs WHERE create_time >= ?", window);
  });

  test("rows not seen for 30 days expire", async () => {
    const db = server.context.db;
    const now = Date.now() + 10 * LOG_WINDOW_MS;
    const insert =
      "INSERT INTO error_logs (create_time, last_time, name, msg, stack) VALUES (?, ?, 'expiry test', ?, '')";
    await db.run(insert, now - 40 * 86_400_000, now - 31 * 86_400_000, "seen 31 days ago");
    await db.run(insert, now - 40 * 86_400_000, now - 29 * 86_400_000, "seen 29 days ago");
    await recordError(db, "expiry trigger", new Error("x"), now);
    const left = (await db.all<{ msg: string }>("SELECT msg FROM error_logs WHERE name = 'expiry test'")).map(
      (r) => r.msg,
    );
    expect(left).toEqual(["seen 29 days ago"]);
    await db.exec("DELETE FROM error_logs WHERE name IN ('expiry test', 'expiry trigger', 'node push')");
  });
});

test("when even the error log is broken, the caller still gets 999, the operator sees both errors on stderr and the server keeps serving", async () => {
  await server.context.db.exec("DROP TABLE error_logs");
  // Captured, not printed: the stderr lines are what this test expects.
  const printed: unknown[][] = [];
  const stderr = spyOn(console, "error").mockImplementation((...line) => printed.push(line));
  const answer = await user.call("/api/user_notive/list").finally(() => stderr.mockRestore());
  expect(printed).toEqual([
    [
      "error log write failed",
      expect.objectContaining({ message: noSuchTable("error_logs") }),
      "while recording",
      expect.objectContaining({ message: noSuchTable("notice_clicks") }),
    ],
  ]);
  expect(answer.code).toBe(999);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  const host = await decodeAnswer(await new ApiClient(server.url).raw("/api/host/get", ""));
  expect(host.code).toBe(0);
});
