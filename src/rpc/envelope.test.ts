/**
 * The envelope over real HTTP: malformed bodies of every kind, size limits, unknown paths and the
 * role guard on /api/admin/* and /api/yunying/*.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ApiClient,
  decodeAnswer,
  loggedInClient,
  startTestServer,
  type TestServer,
} from "../../tests/harness.ts";
import { transformPassword } from "../modules/user/password.ts";
import type { Role } from "../modules/user/schema.ts";
import { defineCall } from "./call.ts";
import { type Answer, fromBase64Json, toBase64Json } from "./envelope.ts";

let server: TestServer;
const clients = {} as Record<Role, ApiClient>;

beforeAll(async () => {
  server = await startTestServer();
  for (const role of ["normal", "channel", "yunying", "admin"] as const) {
    clients[role] = (await loggedInClient(server, { role })).client;
  }
});
afterAll(async () => {
  await server?.close();
});

const b64 = (bytes: string | Uint8Array) => Buffer.from(bytes).toString("base64");
const envelope = (payload: unknown) => JSON.stringify({ data: toBase64Json(payload) });

/** Posts a raw body and decodes the envelope answer (HTTP 200 required). */
async function post(path: string, body: string | undefined, client = new ApiClient(server.url)) {
  return decodeAnswer(await client.raw(path, body));
}

describe("answers", () => {
  test("are HTTP 200 JSON holding only base64 data that decodes to {code, data, msg}", async () => {
    const response = await new ApiClient(server.url).raw("/api/host/get", envelope({}));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["data"]);
    expect(typeof body.data).toBe("string");
    const decoded = fromBase64Json(body.data as string);
    expect(decoded.ok).toBe(true);
    const answer = (decoded as { value: Answer }).value;
    expect(Object.keys(answer).sort()).toEqual(["code", "data", "msg"]);
    expect(answer.code).toBe(0);
  });

  test("non-ASCII travels intact both ways (a Chinese e-mail signs up and logs in)", async () => {
    const email = `用户${Date.now()}@例子.中国`;
    const client = new ApiClient(server.url);
    const signup = await client.call<{ email: string }>("/api/user/signup", {
      email,
      password: transformPassword("密码-correct-horse"),
    });
    expect(signup.code).toBe(0);
    expect(signup.data.email).toBe(email);
    const login = await new ApiClient(server.url).login(email, "密码-correct-horse");
    expect(login.code).toBe(0);
  });
});

describe("malformed requests are code 1000 with a clear message", () => {
  const loginPayload = { email: "someone@example.com", password: "a".repeat(64) };

  const cases: [string, string][] = [
    ["data is not base64", JSON.stringify({ data: "!!!not base64!!!" })],
    ["base64 with a bad length", JSON.stringify({ data: "abc" })],
    ["padding in the middle", JSON.stringify({ data: "YW==YWJj" })],
    ["url-safe alphabet", JSON.stringify({ data: "-_-_" })],
    ["base64 of plain text", JSON.stringify({ data: b64("hello, world") })],
    ["base64 of truncated JSON", JSON.stringify({ data: b64('{"email":') })],
    ["base64 of non-UTF-8 bytes", JSON.stringify({ data: b64(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])) })],
    ["body is not JSON", "data=eyJ9"],
    ["body is broken JSON", '{"data": '],
    ["body is a JSON array", JSON.stringify([toBase64Json(loginPayload)])],
    ["body is a JSON string", JSON.stringify(toBase64Json(loginPayload))],
    ["body is null", "null"],
    ["body is a number", "42"],
    ["data is a number", JSON.stringify({ data: 12345 })],
    ["data is the raw payload object", JSON.stringify({ data: loginPayload })],
    ["data is an array", JSON.stringify({ data: [toBase64Json(loginPayload)] })],
    ["data is null", JSON.stringify({ data: null })],
    ["payload is an array", envelope([loginPayload])],
    ["payload is null", envelope(null)],
    ["payload is a string", envelope("someone@example.com")],
    ["e-mail is a number", envelope({ ...loginPayload, email: 12345 })],
    ["password is an array", envelope({ ...loginPayload, password: ["a".repeat(64)] })],
    ["password is a number", envelope({ ...loginPayload, password: 1234567890 })],
    ["e-mail is missing", envelope({ password: loginPayload.password })],
    ["password is missing", envelope({ email: loginPayload.email })],
    ["empty payload", envelope({})],
    ["empty body", ""],
    [
      "deeply nested e-mail",
      envelope({ ...loginPayload, email: JSON.parse(`${"[".repeat(5000)}${"]".repeat(5000)}`) }),
    ],
  ];

  for (const [name, body] of cases) {
    test(`${name} (login)`, async () => {
      const answer = await post("/api/user/login", body);
      expect(answer.code).toBe(1000);
      expect(answer.data).toBeNull();
      expect(answer.msg.length).toBeGreaterThan(0);
      expect(answer.msg).not.toMatch(/\n\s+at /);
    });
  }

  test("the message names what is wrong", async () => {
    expect((await post("/api/user/login", JSON.stringify({ data: "@@@@" }))).msg).toContain("base64");
    expect((await post("/api/user/login", JSON.stringify({ data: b64("nope") }))).msg).toContain("JSON");
    expect(
      (await post("/api/user/login", JSON.stringify({ data: b64(new Uint8Array([0xc3, 0x28])) }))).msg,
    ).toContain("UTF-8");
    expect((await post("/api/user/login", envelope({ email: "a@b.cd" }))).msg).toContain("password");
    expect((await post("/api/user/login", envelope({ email: 5, password: "a".repeat(64) }))).msg).toContain(
      "email",
    );
  });

  test("a deeply nested body is refused, not a crash", async () => {
    const deep = `{"data":${"[".repeat(50_000)}${"]".repeat(50_000)}}`;
    expect((await post("/api/user/login", deep)).code).toBe(1000);
  });
});

describe("calls without a payload", () => {
  const bodies: [string, string | undefined][] = [
    ["no body", undefined],
    ["empty body", ""],
    ["empty object", "{}"],
    ['data ""', JSON.stringify({ data: "" })],
    ["base64 of {}", envelope({})],
    ["base64 of spaces", JSON.stringify({ data: b64("   ") })],
  ];
  for (const [name, body] of bodies) {
    test(`accept ${name}`, async () => {
      expect((await post("/api/host/get", body)).code).toBe(0);
      expect((await post("/api/user/userinfo", body, clients.normal)).code).toBe(0);
    });
  }
});

describe("size limits", () => {
  test("a body over the envelope limit is refused with 1000, never 500", async () => {
    const big = JSON.stringify({ data: toBase64Json({ email: "a@b.cd", password: "x".repeat(300_000) }) });
    const response = await new ApiClient(server.url).raw("/api/user/login", big);
    expect(response.status).toBe(200);
    const answer = await decodeAnswer(response);
    expect(answer.code).toBe(1000);
    expect(answer.msg).toContain("过大");
  });

  test("a chunked body without Content-Length over the limit is refused too", async () => {
    const chunk = new TextEncoder().encode("A".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"data":"'));
        if (sent < 6) {
          controller.enqueue(chunk);
          sent += 1;
        } else {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
        }
      },
    });
    const response = await fetch(`${server.url}/api/user/login`, {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(200);
    expect((await decodeAnswer(response)).code).toBe(1000);
  });

  test("a huge body gets HTTP 413 or code 1000, never 500", async () => {
    const huge = JSON.stringify({ data: "A".repeat(9 * 1024 * 1024) });
    let status: number;
    let code: number | null = null;
    try {
      const response = await fetch(`${server.url}/api/user/login`, {
        method: "POST",
        body: huge,
        headers: { "content-type": "application/json" },
      });
      status = response.status;
      if (status === 200) code = (await decodeAnswer(response)).code;
    } catch {
      // The server may close the connection after answering 413 mid-upload.
      status = 413;
    }
    expect(status === 413 || (status === 200 && code === 1000)).toBe(true);
    // The server is fine afterwards.
    expect((await post("/api/host/get", "")).code).toBe(0);
  });
});

describe("unknown paths", () => {
  test("an /api path nobody declared is 1004 for visitors and users alike", async () => {
    for (const path of ["/api/nope", "/api/user/nope", "/api/shop/list_everything", "/api/"]) {
      expect((await post(path, envelope({}))).code).toBe(1004);
      expect((await post(path, envelope({}), clients.normal)).code).toBe(1004);
    }
  });

  test("GET on a call path is not a server error", async () => {
    const response = await fetch(`${server.url}/api/user/userinfo`);
    expect(response.status).toBeLessThan(500);
  });
});

describe("role guard", () => {
  const existing = [
    "/api/admin/config/get",
    "/api/admin/config/set_config",
    "/api/admin/errors/list",
    "/api/admin/errors/clear",
  ];
  const missing = ["/api/admin/nope", "/api/admin/user/list", "/api/admin/"];

  test("normal, channel and yunying users get 1003 on every /api/admin/* path, even with a garbage body", async () => {
    for (const role of ["normal", "channel", "yunying"] as const) {
      for (const path of [...existing, ...missing]) {
        for (const body of [envelope({}), "garbage", JSON.stringify({ data: "!!" })]) {
          const answer = await post(path, body, clients[role]);
          expect({ role, path, code: answer.code }).toEqual({ role, path, code: 1003 });
          expect(answer.data).toBeNull();
        }
      }
    }
  });

  test("visitors get 1002 on every /api/admin/* path", async () => {
    for (const path of [...existing, ...missing]) {
      expect({ path, code: (await post(path, "garbage")).code }).toEqual({ path, code: 1002 });
    }
  });

  test("a forged or unknown session cookie counts as a visitor", async () => {
    for (const token of ["abc", "0".repeat(64), "g".repeat(64), "x".repeat(5000)]) {
      const client = new ApiClient(server.url);
      client.cookies.set("token", token);
      expect((await post("/api/admin/config/get", envelope({}), client)).code).toBe(1002);
      expect((await post("/api/user/userinfo", envelope({}), client)).code).toBe(1002);
    }
  });

  test("admins pass the guard: existing paths work, missing ones are 1004", async () => {
    expect((await post("/api/admin/config/get", envelope({}), clients.admin)).code).toBe(0);
    expect((await post("/api/admin/errors/list", envelope({}), clients.admin)).code).toBe(0);
    for (const path of missing) expect((await post(path, envelope({}), clients.admin)).code).toBe(1004);
  });

  test("/api/yunying/* lets yunying and admin through, refuses normal and channel, asks visitors to log in", async () => {
    const expected: Record<Role | "visitor", number> = {
      visitor: 1002,
      normal: 1003,
      channel: 1003,
      yunying: 1004,
      admin: 1004,
    };
    for (const [who, code] of Object.entries(expected)) {
      const client = who === "visitor" ? new ApiClient(server.url) : clients[who as Role];
      const answer = await post("/api/yunying/statistics", envelope({}), client);
      expect({ who, code: answer.code }).toEqual({ who, code });
    }
  });

  test("path variations do not slip past the guard", async () => {
    for (const path of [
      "/api/admin/config/get/",
      "/api//admin/config/get",
      "/api/ADMIN/config/get",
      "/api/Admin/config/get",
      "/api/admin/./config/get",
      "/api/%61dmin/config/get",
      "/api/admin/config/get?x=1",
    ]) {
      const response = await fetch(`${server.url}${path}`, {
        method: "POST",
        body: envelope({}),
        headers: { cookie: clients.normal.cookieHeader(), "content-type": "application/json" },
      });
      if (response.status !== 200) continue;
      const answer = await decodeAnswer(response);
      expect({ path, ok: answer.code === 0 }).toEqual({ path, ok: false });
    }
  });

  test("a back-office call declared with a weaker role is refused at start-up", () => {
    const input = { safeParse: () => ({ success: true }) } as never;
    expect(() => defineCall({ path: "/api/admin/x", access: "user", input, handle: () => null })).toThrow();
    expect(() =>
      defineCall({ path: "/api/admin/x", access: "yunying", input, handle: () => null }),
    ).toThrow();
    expect(() =>
      defineCall({ path: "/api/yunying/x", access: "public", input, handle: () => null }),
    ).toThrow();
    expect(() =>
      defineCall({ path: "/api/user/x", access: "user", input, handle: () => null }),
    ).not.toThrow();
  });
});

test("none of the malformed requests above was logged as an unexpected error", async () => {
  const rows = await server.context.db.all<{ name: string; msg: string }>("SELECT name, msg FROM error_logs");
  expect(rows).toEqual([]);
});
