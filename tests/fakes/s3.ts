/**
 * A real S3-compatible server on 127.0.0.1 for the off-box backup tests (issue 30 §4): the npm
 * package s3rver (a Koa implementation of the S3 REST API: PUT/GET/HEAD/DELETE object, multipart
 * uploads, ListObjectsV2 XML) storing objects in a temporary folder, behind a front on loopback
 * that verifies each request's AWS Signature Version 4 (s3rver checks only that the access key
 * exists: its v4 check is unimplemented) and passes it on. A request signed with another secret, or
 * for another region, gets S3's 403 SignatureDoesNotMatch. `tamper` alters a stored object through
 * the S3 API itself, `corruptWrites` as the store's disk would; `stop` takes the store down (a refused connection), `restart` brings it back
 * on the same port.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

export const FAKE_S3_BUCKET = "ferry-backups";
export const FAKE_S3_KEY_ID = "S3RVER";
export const FAKE_S3_SECRET = "S3RVER";
export const FAKE_S3_REGION = "us-east-1";

export interface FakeS3 {
  endpoint: string;
  bucket: string;
  /** A client of the bucket, as an operator's other tools would be. */
  client: Bun.S3Client;
  /** Requests refused for their signature, as "<code> <method> <path>". */
  refused: string[];
  /** Every request that came in, as "<method> <path>?<query>". */
  requests: string[];
  /** While on, the store keeps a body written (PUT) with its middle byte flipped: a disk that corrupts. */
  corruptWrites: boolean;
  /** The keys under `prefix`, sorted. */
  keys(prefix?: string): Promise<string[]>;
  /** Flips one byte of the stored object at `offset` from its end, writing it back through the API. */
  tamper(key: string, offsetFromEnd?: number): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const sha256Hex = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();
/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters. */
const uriEncode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(search: string): string {
  return search
    .replace(/^\?/, "")
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const [name = "", value = ""] = pair.split("=", 2);
      return [uriEncode(decodeURIComponent(name)), uriEncode(decodeURIComponent(value))];
    })
    .sort(([a = "", x = ""], [b = "", y = ""]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/**
 * Why the request's SigV4 signature does not hold (S3's error code and message), or null when it
 * does: the canonical request rebuilt from what arrived, signed with the key's secret.
 */
function signatureProblem(
  request: Request,
  body: Uint8Array,
  secrets: Map<string, string>,
  region: string,
): [code: string, message: string] | null {
  const match = AUTHORIZATION.exec(request.headers.get("authorization") ?? "");
  if (!match) return ["AccessDenied", "no AWS4-HMAC-SHA256 Authorization header"];
  const [, keyId = "", day = "", scopeRegion = "", signedHeaders = "", signature = ""] = match;
  const secret = secrets.get(keyId);
  if (secret === undefined) return ["InvalidAccessKeyId", `unknown access key ${keyId}`];
  if (scopeRegion !== region)
    return ["SignatureDoesNotMatch", `scope names region ${scopeRegion}, not ${region}`];
  const amzDate = request.headers.get("x-amz-date") ?? "";
  if (!amzDate.startsWith(day)) return ["SignatureDoesNotMatch", "x-amz-date is not the scope's day"];
  const signed = signedHeaders.split(";");
  if (!signed.includes("host") || !signed.includes("x-amz-date")) {
    return ["SignatureDoesNotMatch", "host and x-amz-date must be signed"];
  }
  const payloadHash = request.headers.get("x-amz-content-sha256") ?? "";
  if (payloadHash !== "UNSIGNED-PAYLOAD" && payloadHash !== sha256Hex(body)) {
    return ["XAmzContentSHA256Mismatch", "the body's SHA-256 is not x-amz-content-sha256"];
  }
  const url = new URL(request.url);
  const canonicalRequest = [
    request.method,
    url.pathname,
    canonicalQuery(url.search),
    signed
      .map((name) => `${name}:${(request.headers.get(name) ?? "").trim().replace(/\s+/g, " ")}\n`)
      .join(""),
    signedHeaders,
    payloadHash,
  ].join("\n");
  const scope = `${day}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const signingKey = ["s3", "aws4_request"].reduce(
    (key, part) => hmac(key, part),
    hmac(hmac(`AWS4${secret}`, day), region),
  );
  const expected = Buffer.from(hmac(signingKey, stringToSign).toString("hex"));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return [
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided.",
    ];
  }
  return null;
}

const s3Error = (status: number, code: string, message: string) =>
  new Response(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`,
    {
      status,
      headers: { "content-type": "application/xml" },
    },
  );

export async function startFakeS3(): Promise<FakeS3> {
  const directory = mkdtempSync(join(tmpdir(), "ferry-s3rver-"));
  const store = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: FAKE_S3_BUCKET }],
  });
  const { port: storePort } = await store.run();
  const secrets = new Map([[FAKE_S3_KEY_ID, FAKE_S3_SECRET]]);
  const refused: string[] = [];
  const requests: string[] = [];

  const front = (port: number) =>
    Bun.serve({
      hostname: "127.0.0.1",
      port,
      async fetch(request) {
        const body = new Uint8Array(await request.arrayBuffer());
        const url = new URL(request.url);
        requests.push(`${request.method} ${url.pathname}${url.search}`);
        const problem = signatureProblem(request, body, secrets, FAKE_S3_REGION);
        if (problem) {
          refused.push(`${problem[0]} ${request.method} ${url.pathname}`);
          return s3Error(
            problem[0] === "InvalidAccessKeyId" ? 403 : problem[0].startsWith("XAmz") ? 400 : 403,
            ...problem,
          );
        }
        if (fake.corruptWrites && request.method === "PUT" && body.length > 0) {
          const middle = Math.floor(body.length / 2);
          body[middle] = (body[middle] as number) ^ 0xff;
        }
        const headers = new Headers(request.headers);
        headers.set("accept-encoding", "identity");
        const answer = await fetch(`http://127.0.0.1:${storePort}${url.pathname}${url.search}`, {
          method: request.method,
          headers,
          body: request.method === "GET" || request.method === "HEAD" ? undefined : body,
          decompress: false,
        });
        return new Response(request.method === "HEAD" ? null : answer.body, {
          status: answer.status,
          headers: answer.headers,
        });
      },
    });
  let server: ReturnType<typeof front> | null = front(0);
  const port = server.port as number;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new Bun.S3Client({
    endpoint,
    bucket: FAKE_S3_BUCKET,
    accessKeyId: FAKE_S3_KEY_ID,
    secretAccessKey: FAKE_S3_SECRET,
    region: FAKE_S3_REGION,
  });
  const fake: FakeS3 = {
    endpoint,
    bucket: FAKE_S3_BUCKET,
    client,
    refused,
    requests,
    corruptWrites: false,
    async keys(prefix = "") {
      const page = await client.list({ prefix, maxKeys: 1000 });
      return (page.contents ?? []).map((object) => object.key).sort();
    },
    async tamper(key, offsetFromEnd = 100) {
      const bytes = new Uint8Array(await client.file(key).arrayBuffer());
      const at = Math.max(0, bytes.length - offsetFromEnd);
      bytes[at] = (bytes[at] as number) ^ 0xff;
      await client.write(key, bytes);
    },
    async stop() {
      await server?.stop(true);
      server = null;
    },
    async restart() {
      server ??= front(port);
    },
    async close() {
      await fake.stop();
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
  return fake;
}
