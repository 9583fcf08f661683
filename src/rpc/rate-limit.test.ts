/**
 * Rate limits at their real size (rateLimitScale 1): per account and per client address. The
 * owner-friendly login rules (trusted browsers, many addresses) are in tests/security-auth.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ApiClient,
  decodeAnswer,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from "../../tests/harness.ts";
import { sinkSettings, startMailSink } from "../../tests/mail-sink.ts";
import { transformPassword } from "../modules/user/password.ts";
import type { UserRow } from "../modules/user/row.ts";
import { createUser } from "../modules/user/service.ts";
import { type RunningServer, startServer } from "../server.ts";
import { toBase64Json } from "./envelope.ts";
import { RateLimiter } from "./rate-limit.ts";

const PASSWORD = "correct-horse-1";
const open: { close(): Promise<void> }[] = [];

afterAll(async () => {
  for (const server of open) await server.close();
});

async function strictServer(): Promise<TestServer> {
  const server = await startTestServer({ rateLimitScale: 1 });
  open.push(server);
  return server;
}

async function proxiedServer(): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-proxied-"));
  // Its mail sink listens on 127.0.0.1, as the harness's fakes do.
  const server = await startServer({
    dataDir,
    port: 0,
    trustProxy: true,
    rateLimitScale: 1,
    allowPrivateUrls: true,
  });
  open.push({
    async close() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
  return server;
}

async function account(server: TestServer | RunningServer) {
  const email = uniqueEmail("limited");
  await createUser(server.context, { email, passwordDigest: transformPassword(PASSWORD) });
  return email;
}

/** A call sent with extra headers (e.g. X-Forwarded-For). */
async function callWith(
  server: { url: string },
  path: string,
  payload: unknown,
  headers: Record<string, string>,
) {
  const client = new ApiClient(server.url);
  const response = await client.raw(path, JSON.stringify({ data: toBase64Json(payload) }), headers);
  return { answer: await decodeAnswer(response), client };
}

describe("RateLimiter.reserve", () => {
  const rule = { name: "failures", max: 3, windowMs: 60_000 };
  const other = { name: "other", max: 10, windowMs: 60_000 };

  test("tries taken before their outcome is known never exceed the limit; given back, they count nothing", () => {
    const limiter = new RateLimiter();
    const taken = [1, 2, 3, 4, 5].map(() => limiter.reserve([{ rule, key: "a" }], 0));
    expect(taken.map((t) => t !== null)).toEqual([true, true, true, false, false]);
    taken[0]?.release();
    expect(limiter.reserve([{ rule, key: "a" }], 0)).not.toBeNull();
    expect(limiter.reserve([{ rule, key: "b" }], 0)).not.toBeNull();
  });

  test("all buckets or none: a full one takes nothing from the others", () => {
    const limiter = new RateLimiter();
    for (let i = 0; i < 3; i++) limiter.reserve([{ rule, key: "full" }], 0);
    for (let i = 0; i < 20; i++)
      expect(
        limiter.reserve(
          [
            { rule: other, key: "x" },
            { rule, key: "full" },
          ],
          0,
        ),
      ).toBeNull();
    for (let i = 0; i < 10; i++) expect(limiter.reserve([{ rule: other, key: "x" }], 0)).not.toBeNull();
  });

  test("a window that ended starts again from nothing, and a late release does not reach into it", () => {
    const limiter = new RateLimiter();
    const old = [1, 2, 3].map(() => limiter.reserve([{ rule, key: "a" }], 0));
    expect(limiter.reserve([{ rule, key: "a" }], 59_999)).toBeNull();
    const fresh = [1, 2, 3].map(() => limiter.reserve([{ rule, key: "a" }], 60_000));
    expect(fresh.every((t) => t !== null)).toBe(true);
    for (const t of old) t?.release();
    expect(limiter.reserve([{ rule, key: "a" }], 60_001)).toBeNull();
  });

  test("the scale multiplies every limit", () => {
    const limiter = new RateLimiter(2);
    const taken = Array.from({ length: 7 }, () => limiter.reserve([{ rule, key: "a" }], 0));
    expect(taken.filter((t) => t !== null)).toHaveLength(6);
  });
});

describe("login limits (one server; the second test continues the first's count for 127.0.0.1)", () => {
  let server: TestServer;
  let victim: string;

  beforeAll(async () => {
    server = await strictServer();
    victim = await account(server);
  });

  test("after 10 failures on one account a stranger's 11th try is 1005 even with the right password; another account still logs in", async () => {
    const bystander = await account(server);
    for (let i = 0; i < 10; i++) {
      // Letter case does not make a new bucket.
      const email = i % 2 ? victim.toUpperCase() : victim;
      const answer = await new ApiClient(server.url).login(email, `wrong-guess-${i}`);
      expect(answer.code).toBe(1000);
    }
    const locked = new ApiClient(server.url);
    const answer = await locked.login(victim, PASSWORD);
    expect(answer.code).toBe(1005);
    expect(answer.data).toBeNull();
    expect(answer.msg.length).toBeGreaterThan(0);
    expect(locked.cookies.has("token")).toBe(false);

    const other = new ApiClient(server.url);
    expect((await other.login(bystander, PASSWORD)).code).toBe(0);
    expect((await other.call("/api/user/userinfo")).code).toBe(0);
  });

  test("30 failures from one address refuse its 31st try on any account; X-Forwarded-For does not help", async () => {
    // 10 failures so far from 127.0.0.1 (the refused try and the right passwords counted nothing);
    // 20 more on addresses nobody registered, each claiming another client address, make 30.
    for (let i = 0; i < 20; i++) {
      const { answer } = await callWith(
        server,
        "/api/user/login",
        { email: uniqueEmail("nobody"), password: transformPassword(`guess-${i}`) },
        { "x-forwarded-for": `198.51.100.${i + 1}` },
      );
      expect(answer.code).toBe(1000);
    }
    const blocked = await callWith(
      server,
      "/api/user/login",
      { email: await account(server), password: transformPassword(PASSWORD) },
      { "x-forwarded-for": "198.51.100.201" },
    );
    expect(blocked.answer.code).toBe(1005);
    expect(blocked.client.cookies.has("token")).toBe(false);
  });
});

test("behind a trusted reverse proxy the limit is per forwarded client address", async () => {
  const server = await proxiedServer();
  const describUrl = "not a subscription link";
  for (let i = 0; i < 20; i++) {
    const { answer } = await callWith(
      server,
      "/api/user/get_email",
      { describUrl },
      { "x-forwarded-for": "203.0.113.1" },
    );
    expect(answer.msg).toBe("DESCRIBE_URL_ERROR");
  }
  const over = await callWith(
    server,
    "/api/user/get_email",
    { describUrl },
    { "x-forwarded-for": "203.0.113.1" },
  );
  expect(over.answer.code).toBe(1005);
  const neighbour = await callWith(
    server,
    "/api/user/get_email",
    { describUrl },
    { "x-forwarded-for": "203.0.113.2, 10.0.0.1" },
  );
  expect(neighbour.answer.msg).toBe("DESCRIBE_URL_ERROR");
});

test("reset mails are counted per account the subscription link proves: a stranger's wrong links use up nothing", async () => {
  const server = await proxiedServer();
  const sink = await startMailSink();
  open.push(sink);
  await server.context.settings.update({
    site_url: server.url,
    ...sinkSettings(sink),
  });
  const target = await createUser(server.context, {
    email: uniqueEmail("target"),
    passwordDigest: transformPassword(PASSWORD),
  });
  const reset = (user: Pick<UserRow, "id" | "email" | "userkey">, from: string) =>
    callWith(
      server,
      "/api/user/reset_password",
      {
        email: user.email,
        password: transformPassword("new-password-2"),
        describUrl: `${server.url}/api/subscript/clash/${user.id}/${user.userkey}`,
      },
      { "x-forwarded-for": from },
    );
  const guessed = { ...target, userkey: "0".repeat(32) };
  for (let i = 0; i < 8; i++) expect((await reset(guessed, "203.0.113.9")).answer.msg).toBe("USER_NOT_EXIST");
  for (let i = 0; i < 5; i++) expect((await reset(target, "203.0.113.10")).answer.code).toBe(0);
  expect((await reset(target, "203.0.113.11")).answer.code).toBe(1005);
  const other = await createUser(server.context, {
    email: uniqueEmail("other"),
    passwordDigest: transformPassword(PASSWORD),
  });
  expect((await reset(other, "203.0.113.11")).answer.code).toBe(0);
});
