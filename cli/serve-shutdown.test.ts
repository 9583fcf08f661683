/**
 * Issue 18 §5, must show: `ferry serve` (a real process) on SIGTERM stops accepting, answers every
 * request already in flight with a complete response, checkpoints the WAL and exits 0; a restart
 * finds every write it acknowledged.
 *
 * The 50 requests are real admin calls that each commit a combo. To have them truly in flight when
 * the signal arrives, each client sends its headers and half its body, and the rest only after the
 * server has stopped accepting: a slow client, not a slow path in the server. On the PostgreSQL run
 * the server and the CLI use a test database (there is no WAL file to check then).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toBase64Json } from "../src/rpc/envelope.ts";
import { ApiClient, decodeAnswer } from "../tests/harness.ts";
import { createTestDatabase, registerTestDatabase, type TestDatabase } from "../tests/pg.ts";
import { ferry, startServe } from "./test-helpers.ts";

const root = mkdtempSync(join(tmpdir(), "ferry-shutdown-"));
const dataDir = join(root, "data");
const IN_FLIGHT = 50;
let database: TestDatabase | null = null;
/** What `ferry serve` needs to reach the test database (nothing on SQLite). */
let serveEnv: Record<string, string> = {};

beforeAll(async () => {
  database = await createTestDatabase();
  if (!database) return;
  registerTestDatabase(dataDir, database.url);
  serveEnv = { FERRY_DATABASE_URL: database.url };
});
afterAll(async () => {
  await database?.drop();
  rmSync(root, { recursive: true, force: true });
});

/** One HTTP/1.1 POST over its own connection, sent in two parts. */
class SlowRequest {
  private readonly socket: Socket;
  private readonly head: string;
  private readonly body: Buffer;
  private received = Buffer.alloc(0);
  /** The whole response and how the connection ended ("end" = closed cleanly after it). */
  readonly done: Promise<{ raw: Buffer; ending: string }>;

  constructor(port: number, path: string, cookie: string, payload: unknown) {
    this.body = Buffer.from(JSON.stringify({ data: toBase64Json(payload) }));
    this.head =
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
      `cookie: ${cookie}\r\ncontent-length: ${this.body.length}\r\nconnection: close\r\n\r\n`;
    this.socket = connect(port, "127.0.0.1");
    this.done = new Promise((settle) => {
      this.socket.on("data", (chunk: Buffer) => {
        this.received = Buffer.concat([this.received, chunk]);
      });
      this.socket.on("error", (error) => settle({ raw: this.received, ending: String(error) }));
      this.socket.on("end", () => settle({ raw: this.received, ending: "end" }));
    });
  }

  /** Headers and the first half of the body: the server is now reading this request. */
  async sendFirstHalf() {
    await new Promise<void>((sent) => this.socket.once("connect", () => sent()));
    this.socket.write(this.head + this.body.subarray(0, this.body.length >> 1).toString("latin1"), "latin1");
  }

  sendRest() {
    this.socket.write(this.body.subarray(this.body.length >> 1));
  }
}

/** Parses a raw HTTP/1.1 response that must be complete: status, headers and content-length bytes. */
function parseResponse(raw: Buffer): Response {
  const split = raw.indexOf("\r\n\r\n");
  expect(split).toBeGreaterThan(0);
  const [statusLine = "", ...headerLines] = raw.subarray(0, split).toString("latin1").split("\r\n");
  const headers = new Headers(
    headerLines.map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
  );
  const body = raw.subarray(split + 4);
  expect(Number(headers.get("content-length"))).toBe(body.length);
  return new Response(new Uint8Array(body), { status: Number(statusLine.split(" ")[1]), headers });
}

/** Whether a new connection to the port is still accepted. */
function accepts(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("connect", () => {
      socket.destroy();
      answer(true);
    });
    socket.on("error", () => answer(false));
  });
}

test("SIGTERM with 50 writes in flight answers all of them, exits 0, and a restart finds every acknowledged write", async () => {
  const created = await ferry(
    ["user", "create", "--email", "boss@example.com", "--role", "admin", "--data", dataDir],
    {},
    "long-password-1\n",
  );
  expect(created.code).toBe(0);

  const server = await startServe(["--port", "0", "--data", dataDir], { env: serveEnv });
  const port = server.port as number;
  const admin = new ApiClient(server.url);
  expect((await admin.login("boss@example.com", "long-password-1")).code).toBe(0);

  const requests = Array.from(
    { length: IN_FLIGHT },
    (_, i) =>
      new SlowRequest(port, "/api/admin/combo/update_combo", admin.cookieHeader(), {
        name: `关机套餐 ${i}`,
        price: 10 + i,
        traffic: 1024,
        vipDuration: 30,
      }),
  );
  await Promise.all(requests.map((request) => request.sendFirstHalf()));
  // Connections are accepted in order: once a later one is answered, the server holds all 50.
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

  const stopped = server.stop();
  // Stopping to accept is the first thing the signal does; the 50 are still waiting for their bodies.
  while (await accepts(port)) await Bun.sleep(10);
  for (const request of requests) request.sendRest();

  const endings = await Promise.all(requests.map((request) => request.done));
  const answers = await Promise.all(
    endings.map(({ raw }) => decodeAnswer<{ _id: string }>(parseResponse(raw))),
  );
  expect(endings.map(({ ending }) => ending)).toEqual(Array(IN_FLIGHT).fill("end"));
  expect(answers.map((answer) => answer.code)).toEqual(Array(IN_FLIGHT).fill(0));
  const exit = await stopped;
  expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: "" });
  // The WAL was checkpointed into ferry.db and the pid file removed.
  expect(existsSync(join(dataDir, "ferry.db-wal")) ? statSync(join(dataDir, "ferry.db-wal")).size : 0).toBe(
    0,
  );
  expect(existsSync(join(dataDir, "ferry.pid"))).toBe(false);

  const again = await startServe(["--port", "0", "--data", dataDir], { env: serveEnv });
  try {
    const client = new ApiClient(again.url);
    expect((await client.login("boss@example.com", "long-password-1")).code).toBe(0);
    const combos = await client.call<{ _id: string; name: string }[]>("/api/admin/combo/list");
    const stored = new Set(combos.data.map((combo) => combo._id));
    expect(answers.filter((answer) => !stored.has(answer.data._id))).toEqual([]);
    expect(combos.data.filter((combo) => combo.name.startsWith("关机套餐")).length).toBe(IN_FLIGHT);
  } finally {
    expect((await again.stop()).code).toBe(0);
  }
});
