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
import { createTestDatabase, type TestDatabase } from "../../tests/pg.ts";
import { type Db, openDatabase, tx } from "../db/db.ts";
import { migrate } from "../db/migrate.ts";
import { migrations } from "../embedded.ts";
import { transformPassword } from "../modules/user/password.ts";
import type { UserRow } from "../modules/user/row.ts";
import { createUser } from "../modules/user/service.ts";
import { type RunningServer, startServer } from "../server.ts";
import { toBase64Json } from "./envelope.ts";
import { RateLimiter, type RateRule, type Reservation } from "./rate-limit.ts";

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

/** A database of its own for the limiter's unit tests, on the engine this run uses. */
let db: Db;
let second: Db;
let dbDir: string;
let database: TestDatabase | null;

beforeAll(async () => {
  dbDir = mkdtempSync(join(tmpdir(), "ferry-limits-"));
  database = await createTestDatabase();
  const target = { url: database?.url, file: join(dbDir, "ferry.db") };
  db = await openDatabase(target);
  await migrate(db, migrations);
  // A second connection pool to the same database, as another replica has.
  second = await openDatabase(target);
});

afterAll(async () => {
  await second?.close();
  await db?.close();
  await database?.drop();
  rmSync(dbDir, { recursive: true, force: true });
});

let ruleCount = 0;
/** A rule of its own per test: the tests share one database. */
const freshRule = (max: number, windowMs = 60_000): RateRule => {
  ruleCount += 1;
  return { name: `unit-${ruleCount}`, max, windowMs };
};

describe("RateLimiter (counted in the database)", () => {
  test("tries taken before their outcome is known never exceed the limit; given back, they count nothing", async () => {
    const rule = freshRule(3);
    const limiter = new RateLimiter(db);
    const taken: (Reservation | null)[] = [];
    for (let i = 0; i < 5; i++) taken.push(await limiter.reserve([{ rule, key: "a" }], 0));
    expect(taken.map((t) => t !== null)).toEqual([true, true, true, false, false]);
    await taken[0]?.release();
    await taken[0]?.release(); // once only
    expect(await limiter.reserve([{ rule, key: "a" }], 0)).not.toBeNull();
    expect(await limiter.reserve([{ rule, key: "a" }], 0)).toBeNull();
    expect(await limiter.reserve([{ rule, key: "b" }], 0)).not.toBeNull();
  });

  test("all buckets or none: a full one takes nothing from the others", async () => {
    const [rule, other] = [freshRule(3), freshRule(10)];
    const limiter = new RateLimiter(db);
    for (let i = 0; i < 3; i++) await limiter.reserve([{ rule, key: "full" }], 0);
    for (let i = 0; i < 20; i++) {
      const both = [
        { rule: other, key: "x" },
        { rule, key: "full" },
      ];
      expect(await limiter.reserve(both, 0)).toBeNull();
    }
    for (let i = 0; i < 10; i++) expect(await limiter.reserve([{ rule: other, key: "x" }], 0)).not.toBeNull();
    expect(await limiter.reserve([{ rule: other, key: "x" }], 0)).toBeNull();
  });

  test("a window that ended starts again from nothing, and a late release does not reach into it", async () => {
    const rule = freshRule(3);
    const limiter = new RateLimiter(db);
    const old: (Reservation | null)[] = [];
    for (let i = 0; i < 3; i++) old.push(await limiter.reserve([{ rule, key: "a" }], 0));
    expect(await limiter.reserve([{ rule, key: "a" }], 59_999)).toBeNull();
    for (let i = 0; i < 3; i++) expect(await limiter.reserve([{ rule, key: "a" }], 60_000)).not.toBeNull();
    for (const t of old) await t?.release();
    expect(await limiter.reserve([{ rule, key: "a" }], 60_001)).toBeNull();
  });

  test("hit counts every try and answers false once the window is full", async () => {
    const rule = freshRule(2, 1_000);
    const limiter = new RateLimiter(db);
    const hits: boolean[] = [];
    for (let i = 0; i < 4; i++) hits.push(await limiter.hit(rule, "k", 5_000));
    expect(hits).toEqual([true, true, false, false]);
    expect(await limiter.hit(rule, "k", 6_000)).toBe(true);
  });

  test("the scale multiplies every limit", async () => {
    const rule = freshRule(3);
    const limiter = new RateLimiter(db, 2);
    let kept = 0;
    for (let i = 0; i < 7; i++) if (await limiter.reserve([{ rule, key: "a" }], 0)) kept += 1;
    expect(kept).toBe(6);
  });

  test("50 reserves at once against a limit of 10 take exactly 10, for one bucket and for two", async () => {
    const [rule, wide] = [freshRule(10), freshRule(1_000)];
    const limiter = new RateLimiter(db);
    const now = Date.now();
    const single = await Promise.all(
      Array.from({ length: 50 }, () => limiter.reserve([{ rule, key: "one" }], now)),
    );
    expect(single.filter((t) => t !== null)).toHaveLength(10);
    const pair = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        // On PostgreSQL half through another connection pool, as on another replica (two SQLite
        // connections in one process would wait on each other's locks synchronously).
        new RateLimiter(i % 2 && db.engine === "postgres" ? second : db).reserve(
          [
            { rule: wide, key: "shared" },
            { rule, key: "two" },
          ],
          now,
        ),
      ),
    );
    expect(pair.filter((t) => t !== null)).toHaveLength(10);
    expect(
      await db.get<{ count: number }>(
        "SELECT count FROM rate_counters WHERE bucket = ?",
        `${wide.name}\u0000shared`,
      ),
    ).toEqual({ count: 10 });
  });

  test("two connections to one database (two replicas) share the count", async () => {
    const rule = freshRule(4);
    const [here, there] = [new RateLimiter(db), new RateLimiter(second)];
    expect(await here.hit(rule, "k", 0)).toBe(true);
    expect(await there.hit(rule, "k", 0)).toBe(true);
    expect(await here.reserve([{ rule, key: "k" }], 0)).not.toBeNull();
    const last = await there.reserve([{ rule, key: "k" }], 0);
    expect(last).not.toBeNull();
    expect(await here.hit(rule, "k", 0)).toBe(false);
    await last?.release();
    expect(await here.hit(rule, "k", 0)).toBe(true);
  });

  test("inside a transaction the tries go with it: rolled back they count nothing (a late release gives back nothing more), committed they stay", async () => {
    const rule = freshRule(2);
    const limiter = new RateLimiter(db);
    let late: Reservation | null = null;
    await expect(
      tx(db, async () => {
        late = await limiter.reserve([{ rule, key: "t" }], 0);
        expect(await limiter.hit(rule, "t", 0)).toBe(true);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await (late as Reservation | null)?.release();
    await tx(db, async () => {
      expect(await limiter.reserve([{ rule, key: "t" }], 0)).not.toBeNull();
      expect(await limiter.hit(rule, "t", 0)).toBe(true);
    });
    expect(await limiter.hit(rule, "t", 0)).toBe(false);
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
