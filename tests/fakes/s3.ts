/**
 * A real S3-compatible server on 127.0.0.1 for the off-box backup tests (issue 30 §4): the npm
 * package s3rver (a Koa implementation of the S3 REST API: PUT/GET/HEAD/DELETE object, multipart
 * uploads, ListObjectsV2 XML), storing objects in a temporary folder. It checks that the access
 * key exists but does not verify SigV4 signatures (its v4 check is unimplemented), so a test that
 * needs a refused signature cannot be written against it. `tamper` alters a stored object through
 * the S3 API itself; `stop` takes the server down (a refused connection), `restart` brings it back
 * on the same port and folder.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

export const FAKE_S3_BUCKET = "ferry-backups";
export const FAKE_S3_KEY_ID = "S3RVER";
export const FAKE_S3_SECRET = "S3RVER";

export interface FakeS3 {
  endpoint: string;
  bucket: string;
  /** A client of the bucket, as an operator's other tools would be. */
  client: Bun.S3Client;
  /** The keys under `prefix`, sorted. */
  keys(prefix?: string): Promise<string[]>;
  /** Flips one byte of the stored object at `offset` from its end, writing it back through the API. */
  tamper(key: string, offsetFromEnd?: number): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeS3(): Promise<FakeS3> {
  const directory = mkdtempSync(join(tmpdir(), "ferry-s3rver-"));
  const make = (port: number) =>
    new S3rver({
      address: "127.0.0.1",
      port,
      silent: true,
      directory,
      configureBuckets: [{ name: FAKE_S3_BUCKET }],
    });
  let server = make(0);
  const { port } = await server.run();
  let running = true;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new Bun.S3Client({
    endpoint,
    bucket: FAKE_S3_BUCKET,
    accessKeyId: FAKE_S3_KEY_ID,
    secretAccessKey: FAKE_S3_SECRET,
    region: "us-east-1",
  });
  const fake: FakeS3 = {
    endpoint,
    bucket: FAKE_S3_BUCKET,
    client,
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
      if (!running) return;
      running = false;
      await server.close();
    },
    async restart() {
      if (running) return;
      server = make(port);
      await server.run();
      running = true;
    },
    async close() {
      await fake.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
  return fake;
}
