/** Image uploads and downloads over real HTTP (issue 13 §1, seed 000 §5 and §7). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import {
  type ApiClient,
  loggedInClient,
  rawGet,
  startTestServer,
  type TestServer,
} from "../../../tests/harness.ts";
import { noonZone } from "../../../tests/traffic.ts";
import { downloadImage } from "../../../tests/uploads.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { randomHex } from "../../rpc/ids.ts";
import { DOWNLOAD_PREFIX, FileMsg, MAX_IMAGE_BYTES, UPLOAD_NAME_PATTERN } from "./schema.ts";
import { DAILY_UPLOADS, requireOwnUpload } from "./service.ts";
import { everyBytePng, JPEG, png, pngOfSize, WEBP } from "./test-images.ts";

let server: TestServer;
let customer: { client: ApiClient; user: { id: string } };

beforeAll(async () => {
  server = await startTestServer();
  // About noon in the server's zone: the daily upload quota cannot reset mid-test.
  await server.context.settings.update({ timezone: noonZone() });
  customer = await loggedInClient(server);
});
afterAll(() => server.close());

interface UploadResult {
  status: number;
  body: { file?: { filename: string }; code?: number; msg?: string };
}

async function upload(
  client: ApiClient | null,
  bytes: Uint8Array,
  options: { name?: string; type?: string; headers?: Record<string, string> } = {},
): Promise<UploadResult> {
  const form = new FormData();
  const type = options.type ?? "image/png";
  form.append("file", new File([new Uint8Array(bytes)], options.name ?? "image.png", { type }));
  const response = await fetch(`${server.url}/api/file/upload`, {
    method: "POST",
    body: form,
    headers: { ...(client ? { cookie: client.cookieHeader() } : {}), ...options.headers },
  });
  return { status: response.status, body: (await response.json()) as UploadResult["body"] };
}

/** Every file under the data directory (relative paths), to prove a request wrote none. */
function dataFiles(): string[] {
  return readdirSync(server.dataDir, { recursive: true, encoding: "utf8" })
    .map((path) => relative(server.dataDir, join(server.dataDir, path)))
    .filter((path) => !path.startsWith("ferry.db"))
    .sort();
}

/** What uploads have stored: the image rows and their bytes in the database, and files on disk. */
async function stored(): Promise<{ uploads: number; blobs: number; files: string[] }> {
  const count = async (table: string) =>
    (await server.context.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))?.n ?? 0;
  return { uploads: await count("uploads"), blobs: await count("upload_blobs"), files: dataFiles() };
}

/** The bytes the database holds for an upload (null when it holds none). */
async function blobOf(filename: string): Promise<Buffer | null> {
  const row = await server.context.db.get<{ bytes: Uint8Array }>(
    "SELECT bytes FROM upload_blobs WHERE filename = ?",
    filename,
  );
  return row ? Buffer.from(row.bytes) : null;
}

const served = (filename: string) => downloadImage(server.url, filename);

const expectStoredName = (result: UploadResult, ext: string) => {
  expect(result.status).toBe(200);
  const filename = result.body.file?.filename ?? "";
  expect(filename).toMatch(UPLOAD_NAME_PATTERN);
  expect(filename.endsWith(`.${ext}`)).toBe(true);
  return filename;
};

const refused = (status: number, code: number, msg: string) => ({ status, body: { code, msg } });

describe("POST /api/file/upload", () => {
  test.each([
    ["png", png(), "image/png"],
    ["jpg", JPEG, "image/jpeg"],
    ["webp", WEBP, "image/webp"],
  ] as const)(
    "a real %s is stored under a server-made name and served back byte for byte",
    async (ext, bytes, type) => {
      const filename = expectStoredName(
        await upload(customer.client, bytes, { name: `photo.${ext}`, type }),
        ext,
      );
      // The bytes are in the database (every replica serves them); nothing is written to disk.
      expect((await blobOf(filename))?.equals(bytes)).toBe(true);
      expect(existsSync(server.context.uploadsDir)).toBe(false);

      const response = await fetch(`${server.url}${DOWNLOAD_PREFIX}${filename}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(type);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
      expect(response.headers.get("content-disposition")).toBe("inline");
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    },
  );

  test("a PNG named .webp and declared image/webp is stored and served as a PNG", async () => {
    const filename = expectStoredName(
      await upload(customer.client, png(), { name: "cat.webp", type: "image/webp" }),
      "png",
    );
    const response = await fetch(`${server.url}${DOWNLOAD_PREFIX}${filename}`);
    expect(response.headers.get("content-type")).toBe("image/png");
  });

  test("an HTML file named .png and declared image/png is refused", async () => {
    const html = Buffer.from("<!doctype html><html><script>alert(document.cookie)</script></html>");
    expect(await upload(customer.client, html, { name: "cat.png" })).toEqual(
      refused(415, Code.badInput, FileMsg.badType),
    );
  });

  test("polyglots are refused: markup in or after an image, an archive after its end", async () => {
    const before = await stored();
    const script = Buffer.from("<html><script>alert(document.cookie)</script></html>");
    const afterEnd = Buffer.concat([png(), script]);
    const inTextChunk = png([["tEXt", Buffer.concat([Buffer.from("Comment\0"), script])]]);
    const afterJpeg = Buffer.concat([JPEG, script]);
    const headerOnly = Buffer.concat([png().subarray(0, 33), script]);
    // GIFAR-style: an archive appended after the image's end.
    const archive = Buffer.from("PK\x03\x04\x14\x00\x00\x00META-INF/MANIFEST.MF");
    const pngArchive = Buffer.concat([png(), archive]);
    const webpArchive = Buffer.concat([WEBP, archive]);
    for (const bytes of [afterEnd, inTextChunk, afterJpeg, headerOnly, pngArchive, webpArchive]) {
      expect(await upload(customer.client, bytes)).toEqual(refused(415, Code.badInput, FileMsg.notImage));
    }
    expect(await stored()).toEqual(before);
  });

  test("a JPEG with a camera trailer after its end is stored, served only as image/jpeg", async () => {
    const withTrailer = Buffer.concat([JPEG, Buffer.from("SEFH\0\0\0\0trailer data SEFT")]);
    const filename = expectStoredName(await upload(customer.client, withTrailer, { name: "x.html" }), "jpg");
    const response = await fetch(`${server.url}${DOWNLOAD_PREFIX}${filename}`);
    expect(response.headers.get("content-type")).toBe("image/jpeg");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("exactly 4 MB is accepted; 4 MB + 1 byte is refused with 图片限制在4M内 and nothing is written", async () => {
    expectStoredName(await upload(customer.client, pngOfSize(MAX_IMAGE_BYTES)), "png");
    const before = await stored();
    expect(await upload(customer.client, pngOfSize(MAX_IMAGE_BYTES + 1))).toEqual(
      refused(413, Code.badInput, FileMsg.tooLarge),
    );
    expect(await stored()).toEqual(before);
  });

  test("a 4 MB image holding every byte value comes back from its URL byte for byte", async () => {
    const size = MAX_IMAGE_BYTES;
    const bytes = everyBytePng(size);
    const filename = expectStoredName(await upload(customer.client, bytes), "png");
    const answer = await served(filename);
    expect({ status: answer.status, type: answer.type, length: answer.bytes.length }).toEqual({
      status: 200,
      type: "image/png",
      length: size,
    });
    expect(answer.bytes.equals(bytes)).toBe(true);
  });

  test("a body over the limit is refused by its declared length and, streamed, while it arrives", async () => {
    const big = new Uint8Array(MAX_IMAGE_BYTES + 200 * 1024);
    const declared = await fetch(`${server.url}/api/file/upload`, {
      method: "POST",
      body: big,
      headers: { cookie: customer.client.cookieHeader(), "content-type": "multipart/form-data; boundary=x" },
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ code: Code.badInput, msg: FileMsg.tooLarge });

    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 7 * 1024 * 1024) return controller.close();
        sent += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const streamed = await fetch(`${server.url}/api/file/upload`, {
      method: "POST",
      body: stream,
      headers: { cookie: customer.client.cookieHeader(), "content-type": "multipart/form-data; boundary=x" },
    }).catch(() => null);
    // The server answers and stops reading soon after the limit, before the 7 MB are sent (or the
    // client sees the connection close while still sending).
    expect(sent).toBeLessThan(7 * 1024 * 1024);
    if (streamed) {
      expect(streamed.status).toBe(413);
      expect(await streamed.json()).toEqual({ code: Code.badInput, msg: FileMsg.tooLarge });
    }
  });

  test("an empty file and a missing file field are refused", async () => {
    expect(await upload(customer.client, new Uint8Array(0))).toEqual(
      refused(400, Code.badInput, FileMsg.empty),
    );
    const form = new FormData();
    form.append("image", new File([new Uint8Array(png())], "a.png", { type: "image/png" }));
    form.append("file", "not a file");
    const response = await fetch(`${server.url}/api/file/upload`, {
      method: "POST",
      body: form,
      headers: { cookie: customer.client.cookieHeader() },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: Code.badInput, msg: FileMsg.noFile });
  });

  test("a file name with ../ is ignored: the image gets a safe name and no file is written", async () => {
    const before = dataFiles();
    const names: string[] = [];
    for (const name of ["../../evil.png", "..%2f..%2fferry.db", "/etc/passwd"]) {
      names.push(expectStoredName(await upload(customer.client, png(), { name }), "png"));
    }
    for (const name of names) expect((await blobOf(name))?.equals(png())).toBe(true);
    expect(dataFiles()).toEqual(before);
    expect(existsSync(join(server.dataDir, "..", "evil.png"))).toBe(false);
    expect(existsSync(join(server.dataDir, "..", "..", "evil.png"))).toBe(false);
  });

  test("not logged in is 1002; a Bearer token works without the cookie", async () => {
    expect(await upload(null, png())).toEqual(refused(401, Code.notLoggedIn, "登录过期，请登录"));
    expect(await upload(null, png(), { headers: { authorization: `Bearer ${"0".repeat(64)}` } })).toEqual(
      refused(401, Code.notLoggedIn, "登录过期，请登录"),
    );
    const token = customer.client.cookies.get("token") ?? "";
    expectStoredName(await upload(null, png(), { headers: { authorization: `Bearer ${token}` } }), "png");
  });

  test("a browser request from another site is refused; from the site itself it is accepted", async () => {
    const before = await stored();
    const crossSite = refused(403, Code.badInput, "跨站请求已拒绝：请在本站页面内操作");
    expect(await upload(customer.client, png(), { headers: { origin: "https://evil.example" } })).toEqual(
      crossSite,
    );
    expect(await upload(customer.client, png(), { headers: { "sec-fetch-site": "cross-site" } })).toEqual(
      crossSite,
    );
    expect(await stored()).toEqual(before);
    const sameSite = { origin: server.url, "sec-fetch-site": "same-origin" };
    expectStoredName(await upload(customer.client, png(), { headers: sameSite }), "png");
  });

  test("a customer's image over the daily quota is refused (1005); another account is not affected", async () => {
    const { client } = await loggedInClient(server);
    for (let i = 0; i < DAILY_UPLOADS.customer; i++) expectStoredName(await upload(client, png()), "png");
    const before = await stored();
    expect(await upload(client, png())).toEqual(refused(429, Code.tooManyRequests, FileMsg.quota));
    expect(await stored()).toEqual(before);
    const other = await loggedInClient(server);
    expectStoredName(await upload(other.client, png()), "png");
  });

  test("uploads sent all at once past the quota: exactly the quota is stored, the rest refused", async () => {
    const { client, user } = await loggedInClient(server);
    const results = await Promise.all(
      Array.from({ length: DAILY_UPLOADS.customer + 5 }, () => upload(client, png())),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(DAILY_UPLOADS.customer);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    const rows = await server.context.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM uploads JOIN upload_blobs USING (filename) WHERE user_id = ?",
      user.id,
    );
    expect(rows?.n).toBe(DAILY_UPLOADS.customer);
  });

  test("an admin's quota is the staff one", async () => {
    const { client } = await loggedInClient(server, { role: "admin" });
    for (let i = 0; i <= DAILY_UPLOADS.customer; i++) expectStoredName(await upload(client, png()), "png");
  });
});

describe("GET /api/file/downloads/:filename", () => {
  let filename: string;
  beforeAll(async () => {
    filename = expectStoredName(await upload(customer.client, png()), "png");
  });

  test("paths out of uploads/, unknown and malformed names are 404 and nothing else is read", async () => {
    for (const name of [
      "../ferry.db",
      "..%2fferry.db",
      "%2e%2e%2fferry.db",
      "%2e%2e/%2e%2e/etc/passwd",
      "..%5cferry.db",
      `${randomHex(16)}.png`,
      filename.toUpperCase(),
      `${filename}%00.html`,
      `.${filename}`,
    ]) {
      const response = await rawGet(server, `${DOWNLOAD_PREFIX}${name}`);
      expect({ name, status: response.status }).toEqual({ name, status: 404 });
      expect(response.text).not.toContain("SQLite format 3");
      expect(response.text).not.toContain("root:");
    }
  });

  test("a file in uploads/ with a valid name but no upload row is not served", async () => {
    const planted = `${randomHex(16)}.png`;
    mkdirSync(server.context.uploadsDir, { recursive: true });
    writeFileSync(join(server.context.uploadsDir, planted), png());
    expect((await served(planted)).status).toBe(404);
  });

  test("an upload made before the blobs (a row, its file in uploads/, no blob) is still served", async () => {
    const legacy = `${randomHex(16)}.jpg`;
    await server.context.db.run(
      "INSERT INTO uploads (filename, user_id, content_type, create_time) VALUES (?, ?, ?, ?)",
      legacy,
      customer.user.id,
      "image/jpeg",
      Date.now() - 86_400_000,
    );
    expect((await served(legacy)).status).toBe(404);
    mkdirSync(server.context.uploadsDir, { recursive: true });
    writeFileSync(join(server.context.uploadsDir, legacy), JPEG);
    const answer = await served(legacy);
    expect({ status: answer.status, type: answer.type }).toEqual({ status: 200, type: "image/jpeg" });
    expect(answer.bytes.equals(JPEG)).toBe(true);
  });
});

describe("requireOwnUpload", () => {
  test("passes no image and the user's own upload; refuses another's and an unknown name", async () => {
    const own = expectStoredName(await upload(customer.client, png()), "png");
    const other = await loggedInClient(server);
    const foreign = expectStoredName(await upload(other.client, png()), "png");
    await requireOwnUpload(server.context, customer.user.id, "");
    await requireOwnUpload(server.context, customer.user.id, own);
    for (const name of [foreign, `${randomHex(16)}.png`]) {
      let error: unknown;
      try {
        await requireOwnUpload(server.context, customer.user.id, name);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(RpcError);
      expect(error).toMatchObject({ code: Code.badInput, message: FileMsg.notYours });
    }
  });
});
