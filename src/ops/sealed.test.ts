/**
 * Issue 30 §4: the off-box file (src/ops/sealed.ts) on real files. Every size round-trips, with and
 * without a passphrase, byte for byte, including the chunk boundaries; a file cut at a chunk
 * boundary, with two chunks swapped, with bytes appended, or with its header's SHA-256 changed is
 * refused and leaves nothing behind.
 */
import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHUNK_BYTES, isSealedBackup, openSealedBackup, sealBackup } from "./sealed.ts";

const dir = mkdtempSync(join(tmpdir(), "ferry-sealed-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const path = (name: string) => join(dir, `${++files}-${name}`);

async function sealed(bytes: Buffer, passphrase: string): Promise<string> {
  const source = path("backup.db");
  writeFileSync(source, bytes);
  const target = path("backup.db.ferrybak");
  await sealBackup(source, target, { engine: "sqlite", passphrase });
  return target;
}

async function opened(file: string, passphrase: string): Promise<Buffer> {
  const out = path("opened.db");
  await openSealedBackup(file, out, passphrase);
  return readFileSync(out);
}

/** Where the body starts: after the magic, the length and the header. */
const bodyStart = (file: Buffer) => 12 + file.readUInt32BE(8);

test("every size round-trips, encrypted or not, across the chunk boundaries", async () => {
  for (const size of [0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES]) {
    const bytes = randomBytes(size);
    for (const passphrase of ["", "a passphrase"]) {
      const file = await sealed(bytes, passphrase);
      expect(isSealedBackup(file)).toBe(true);
      expect({ size, passphrase, same: (await opened(file, passphrase)).equals(bytes) }).toEqual({
        size,
        passphrase,
        same: true,
      });
    }
  }
});

test("cut at a chunk boundary, chunks swapped, bytes appended, header changed: refused, nothing left", async () => {
  const bytes = randomBytes(2 * CHUNK_BYTES + 5);
  const file = await sealed(bytes, "a passphrase");
  const whole = readFileSync(file);
  const start = bodyStart(whole);
  const sealedChunk = CHUNK_BYTES + 16;
  const chunk = (i: number) => whole.subarray(start + i * sealedChunk, start + (i + 1) * sealedChunk);
  const head = whole.subarray(0, start);
  const cases: [string, Buffer, RegExp][] = [
    ["cut", Buffer.concat([head, chunk(0), chunk(1)]), /cut short/],
    [
      "swapped",
      Buffer.concat([head, chunk(1), chunk(0), whole.subarray(start + 2 * sealedChunk)]),
      /chunk 0 fails/,
    ],
    ["appended", Buffer.concat([whole, Buffer.from("more")]), /fails the integrity check/],
  ];
  const header = JSON.parse(whole.subarray(12, start).toString());
  const forged = Buffer.from(JSON.stringify({ ...header, sha256: "0".repeat(64) }));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(forged.length);
  cases.push([
    "header",
    Buffer.concat([whole.subarray(0, 8), length, forged, whole.subarray(start)]),
    /its header names/,
  ]);
  for (const [name, content, refusal] of cases) {
    const altered = path(`${name}.ferrybak`);
    writeFileSync(altered, content);
    const out = path(`${name}.db`);
    await expect(openSealedBackup(altered, out, "a passphrase")).rejects.toThrow(refusal);
    expect({ name, left: existsSync(out) }).toEqual({ name, left: false });
  }
});
