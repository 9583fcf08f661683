/**
 * Unexpected failures provoked for real (tables dropped, a trigger refusing writes): the caller gets
 * 999 without internals, the error log gets a row, and admins read and clear it over the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  decodeAnswer,
  loggedInClient,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../../tests/harness.ts";
import { transformPassword } from "../user/password.ts";
import { createUser } from "../user/service.ts";
import type { ErrorRecord } from "./service.ts";

let server: TestServer;
let admin: ApiClient;
let user: ApiClient;

beforeAll(async () => {
  server = await startTestServer();
  admin = (await loggedInClient(server, { role: "admin" })).client;
  user = (await loggedInClient(server)).client;
});
afterAll(async () => {
  await server?.close();
});

function errorRows() {
  return server.context.db
    .query<{ create_time: number; name: string; msg: string; stack: string }, []>(
      "SELECT create_time, name, msg, stack FROM error_logs ORDER BY id",
    )
    .all();
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
    server.context.db.exec("DROP TABLE notice_clicks");
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

    const rows = errorRows();
    expect(rows.length).toBe(1);
    const row = rows[0];
    expect(row?.name).toContain("/api/user_notive/list");
    expect(row?.msg).toContain("no such table");
    expect(row?.stack).toContain("at ");
    expect(row?.create_time).toBeGreaterThanOrEqual(before);
    expect(row?.create_time).toBeLessThanOrEqual(Date.now());

    // Other calls keep working.
    expect((await user.call("/api/user/userinfo")).code).toBe(0);
  });

  test("a login whose session cannot be stored answers 999 and sets no cookie", async () => {
    const email = uniqueEmail("trigger");
    await createUser(server.context, { email, passwordDigest: transformPassword("correct-horse-1") });
    server.context.db.exec(
      "CREATE TRIGGER refuse_sessions BEFORE INSERT ON sessions BEGIN SELECT RAISE(ABORT, 'sessions are read-only'); END",
    );
    try {
      const client = new ApiClient(server.url);
      const answer = await client.login(email, "correct-horse-1");
      expect(answer.code).toBe(999);
      expect(answer.msg).not.toContain("read-only");
      expect(client.cookies.has("token")).toBe(false);
      expect(errorRows().at(-1)?.msg).toContain("sessions are read-only");
      expect(errorRows().at(-1)?.name).toContain("/api/user/login");
    } finally {
      server.context.db.exec("DROP TRIGGER refuse_sessions");
    }
  });

  test("a failing confirm link (not an envelope call) is HTTP 500 without internals, and logged", async () => {
    server.context.db.exec("DROP TABLE email_tokens");
    const response = await fetch(
      `${server.url}/api/account/signup_confirm?serial_id=${"a".repeat(24)}&key=${"b".repeat(64)}`,
    );
    expect(response.status).toBe(500);
    expectNoInternals(await response.text());
    const row = errorRows().at(-1);
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
    expect(errorRows().length).toBe(3);
  });

  test("list shows createTime, name, msg and stack, newest first, within the asked number of days", async () => {
    server.context.db
      .query("INSERT INTO error_logs (create_time, name, msg, stack) VALUES (?, ?, ?, ?)")
      .run(Date.now() - 10 * 86_400_000, "old", "ten days ago", "");
    const answer = await admin.call<ErrorRecord[]>("/api/admin/errors/list");
    expect(answer.code).toBe(0);
    expect(answer.data.length).toBe(3);
    for (const record of answer.data) {
      expect(Object.keys(record).sort()).toEqual(["_id", "createTime", "msg", "name", "stack"]);
      expect(typeof record.createTime).toBe("number");
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
    expect(errorRows()).toEqual([]);
    expect((await admin.call<ErrorRecord[]>("/api/admin/errors/list", { num: 3650 })).data).toEqual([]);
  });
});

test("when even the error log is broken, the caller still gets 999 and the server keeps serving", async () => {
  server.context.db.exec("DROP TABLE error_logs");
  const answer = await user.call("/api/user_notive/list");
  expect(answer.code).toBe(999);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  const host = await decodeAnswer(await new ApiClient(server.url).raw("/api/host/get", ""));
  expect(host.code).toBe(0);
});
