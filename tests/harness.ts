/**
 * Test helpers: a real ferry server on 127.0.0.1 with a fresh SQLite file in a temp dir, and an
 * envelope client with a cookie jar, so tests speak exactly what the SPA speaks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LeaseTimings } from "../src/cluster/leases.ts";
import type { Db } from "../src/db/db.ts";
import type { BotTimings } from "../src/modules/telegram/bot.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import type { UserRow } from "../src/modules/user/row.ts";
import type { Role } from "../src/modules/user/schema.ts";
import { createUser } from "../src/modules/user/service.ts";
import type { WebhookTimings } from "../src/modules/webhook/sender.ts";
import { type Answer, fromBase64Json, toBase64Json } from "../src/rpc/envelope.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { createTestDatabase, registerTestDatabase, testDatabaseOf } from "./pg.ts";

export interface TestServer extends RunningServer {
  dataDir: string;
  /** Stops the server and deletes its data directory. */
  close(): Promise<void>;
}

/**
 * A server on a fresh data directory. Its fakes of internet services listen on 127.0.0.1, so it
 * may call private addresses (`--allow-private-urls`) unless `allowPrivateUrls: false`, as in the
 * tests of that refusal. `replicaOf` (PostgreSQL only): another replica on that server's database
 * and settings (close it first; the first server drops the database).
 */
export async function startTestServer(
  options: {
    rateLimitScale?: number;
    telegram?: Partial<BotTimings>;
    allowPrivateUrls?: boolean;
    replicaOf?: TestServer;
    leases?: Partial<LeaseTimings>;
    webhooks?: Partial<WebhookTimings>;
    reconcileScanMs?: number;
  } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-test-"));
  const shared = options.replicaOf && testDatabaseOf(options.replicaOf.dataDir);
  if (options.replicaOf && !shared) throw new Error("replicaOf: replicas share a PostgreSQL database");
  const database = shared ? null : await createTestDatabase();
  const databaseUrl = shared || database?.url;
  if (databaseUrl) registerTestDatabase(dataDir, databaseUrl);
  const server = await startServer({
    dataDir,
    databaseUrl,
    host: "127.0.0.1",
    port: 0,
    rateLimitScale: options.rateLimitScale ?? 1000,
    telegram: options.telegram,
    allowPrivateUrls: options.allowPrivateUrls ?? true,
    leases: options.leases,
    webhooks: options.webhooks,
    reconcileScanMs: options.reconcileScanMs,
  });
  // A deployed panel knows its own origin (site_url); tests about an unset one clear it.
  if (!shared) await server.context.settings.update({ site_url: server.url });
  return {
    ...server,
    dataDir,
    async close() {
      await server.stop();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An HTTP client that keeps cookies like a browser and speaks the base64 envelope. */
export class ApiClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  absorb(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => a.trim().toLowerCase() === "max-age=0");
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** Sends a raw body to a path and returns the HTTP response (cookies absorbed). */
  async raw(path: string, body: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(this.baseUrl + path, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", cookie: this.cookieHeader(), ...headers },
      redirect: "manual",
    });
    this.absorb(response);
    return response;
  }

  /** Calls an envelope API and decodes the answer. */
  async call<T = unknown>(path: string, payload: unknown = {}): Promise<Answer<T>> {
    const response = await this.raw(path, JSON.stringify({ data: toBase64Json(payload) }));
    return decodeAnswer<T>(response);
  }

  /** Calls an envelope API that must succeed (code 0) and returns its data; throws with the code otherwise. */
  async ok<T = unknown>(path: string, payload: unknown = {}): Promise<T> {
    const answer = await this.call<T>(path, payload);
    if (answer.code !== 0) throw new Error(`${path}: ${answer.code} ${answer.msg}`);
    return answer.data;
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await fetch(this.baseUrl + path, {
      headers: { cookie: this.cookieHeader(), ...headers },
      redirect: "manual",
    });
    this.absorb(response);
    return response;
  }

  async login(email: string, password: string) {
    return this.call("/api/user/login", { email, password: transformPassword(password) });
  }
}

export async function decodeAnswer<T>(response: Response): Promise<Answer<T>> {
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { data: string };
  const decoded = fromBase64Json(body.data);
  if (!decoded.ok) throw new Error(`answer is not an envelope: ${decoded.reason}`);
  return decoded.value as Answer<T>;
}

let counter = 0;
export function uniqueEmail(prefix = "user"): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}@example.com`;
}

/** Creates an account straight through the service (as `ferry user create` does) and logs a client in. */
export async function loggedInClient(
  server: TestServer,
  options: { role?: Role; email?: string; password?: string } = {},
): Promise<{ client: ApiClient; user: UserRow; email: string; password: string }> {
  const email = options.email ?? uniqueEmail(options.role ?? "user");
  const password = options.password ?? "correct-horse-1";
  const user = await createUser(server.context, {
    email,
    passwordDigest: transformPassword(password),
    type: options.role ?? "normal",
  });
  const client = new ApiClient(server.url);
  const answer = await client.login(email, password);
  if (answer.code !== 0) throw new Error(`login failed: ${answer.msg}`);
  return { client, user, email, password };
}

/**
 * A test server (`start`, startTestServer unless given) with an admin's client logged in to it, for
 * a test file's set-up: `beforeAll(async () => ({ server, admin } = await startWithAdmin()))`.
 */
export async function startWithAdmin(
  start: () => Promise<TestServer> = startTestServer,
): Promise<{ server: TestServer; admin: ApiClient }> {
  const server = await start();
  return { server, admin: (await loggedInClient(server, { role: "admin" })).client };
}

/** A GET with the path sent exactly as written (fetch would resolve `..` and `%2e%2e` first). */
export async function rawGet(
  server: { port: number },
  path: string,
): Promise<{ status: number; text: string }> {
  const chunks: Buffer[] = [];
  const { promise, resolve } = Promise.withResolvers<void>();
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port: server.port,
    socket: {
      data: (_socket, data) => void chunks.push(Buffer.from(data)),
      close: () => resolve(),
    },
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`);
  await promise;
  const text = Buffer.concat(chunks).toString("latin1");
  return { status: Number(text.split(" ")[1]), text };
}

/** The UserRow columns kept in the balances table (migration 013), not in users. */
const BALANCE_COLUMNS = new Set(["traffic", "spend_traffic", "daily_usage", "daily_usage_day"]);

/**
 * Sets a user's columns directly, for a test's set-up: balance columns in balances, the rest in
 * users. Column names come from the test, never from input.
 */
export async function setUserColumns(db: Db, userId: string, fields: Record<string, unknown>) {
  for (const [column, value] of Object.entries(fields)) {
    const [table, key] = BALANCE_COLUMNS.has(column) ? ["balances", "user_id"] : ["users", "id"];
    await db.run(
      `UPDATE ${table} SET ${column} = ? WHERE ${key} = ?`,
      value as string | number | null,
      userId,
    );
  }
}
