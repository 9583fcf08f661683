/** Rate limits at their real size (rateLimitScale 1): per account and per client address. */
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
import { transformPassword } from "../modules/user/password.ts";
import { createUser } from "../modules/user/service.ts";
import { type RunningServer, startServer } from "../server.ts";
import { toBase64Json } from "./envelope.ts";

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
  const server = startServer({ dataDir, port: 0, trustProxy: true, rateLimitScale: 1 });
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

describe("login limits (one server; the second test continues the first's count for 127.0.0.1)", () => {
  let server: TestServer;
  let victim: string;

  beforeAll(async () => {
    server = await strictServer();
    victim = await account(server);
  });

  test("after 10 tries on one account the 11th is 1005 even with the right password; another account still logs in", async () => {
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

  test("the 31st login from one address within the window is 1005 for any account; X-Forwarded-For does not help", async () => {
    // 12 logins so far from 127.0.0.1; 17 more (refused by the account limit) make 29.
    for (let i = 0; i < 17; i++) {
      const { answer } = await callWith(
        server,
        "/api/user/login",
        { email: victim, password: transformPassword(PASSWORD) },
        { "x-forwarded-for": `198.51.100.${i + 1}` },
      );
      expect(answer.code).toBe(1005);
    }
    const thirtieth = await callWith(
      server,
      "/api/user/login",
      { email: await account(server), password: transformPassword(PASSWORD) },
      { "x-forwarded-for": "198.51.100.200" },
    );
    expect(thirtieth.answer.code).toBe(0);
    const fresh = await account(server);
    const blocked = await callWith(
      server,
      "/api/user/login",
      { email: fresh, password: transformPassword(PASSWORD) },
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

test("reset_password is limited per account: the 6th try on one e-mail is 1005, another e-mail still gets through", async () => {
  const server = await proxiedServer();
  const reset = (email: string) =>
    callWith(
      server,
      "/api/user/reset_password",
      { email, password: transformPassword("new-password-2"), describUrl: "https://example.com/x" },
      { "x-forwarded-for": "203.0.113.9" },
    );
  const target = uniqueEmail("target");
  for (let i = 0; i < 5; i++) expect((await reset(target)).answer.msg).toBe("DESCRIBE_URL_ERROR");
  expect((await reset(target)).answer.code).toBe(1005);
  expect((await reset(target.toUpperCase())).answer.code).toBe(1005);
  expect((await reset(uniqueEmail("other"))).answer.msg).toBe("DESCRIBE_URL_ERROR");
});
