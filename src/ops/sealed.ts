/**
 * The off-box backup file (issue 30 §4): a backup as it leaves the machine, to S3 or a Telegram
 * chat. One format, encrypted or not, so what comes back is checked the same way:
 *
 *   "FERRYBK1" | u32 BE header length | header JSON | body
 *
 * The header names the engine, the backup's own file name, its size and SHA-256, and, when a
 * passphrase was set, the encryption: AES-256-GCM with a key from scrypt (N, r, p and a random
 * 16-byte salt in the header). The body is then a run of chunks of CHUNK_BYTES plaintext (the last
 * one shorter, possibly empty), each sealed with its own nonce (the header's 8 random bytes and the
 * chunk's number) and its 16-byte tag; the additional data is the chunk's number and whether it is
 * the last, so chunks cannot be reordered, dropped or the file cut short unnoticed. Memory stays at
 * one chunk whatever the backup's size. A key check (HMAC of a fixed text with the key) in the
 * header tells a wrong passphrase from an altered file. Without a passphrase the body is the backup
 * as it is. Opening always ends by comparing the size and SHA-256 of what came out with the header.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from "node:crypto";
import { closeSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { basename } from "node:path";
import type { Engine } from "../db/db.ts";

const MAGIC = "FERRYBK1";
/** Plaintext bytes per sealed chunk. */
export const CHUNK_BYTES = 1024 * 1024;
const TAG_BYTES = 16;
const MAX_HEADER_BYTES = 64 * 1024;
/** scrypt's cost: 2^15 × 8 × 128 B = 32 MiB of memory and about 0.1 s per key. */
export const SCRYPT_PARAMS = { N: 32_768, r: 8, p: 1 } as const;
const KEY_CHECK_TEXT = "ferry-backup-key-check";

/** Why an off-box backup cannot be opened; the CLI prints the message as its one line. */
export class SealedBackupError extends Error {
  override name = "SealedBackupError";
}

export interface SealedHeader {
  v: 1;
  engine: Engine;
  /** The backup's own file name ("ferry-2026-11-27.db"). */
  name: string;
  size: number;
  sha256: string;
  enc: null | {
    alg: "aes-256-gcm";
    kdf: "scrypt";
    N: number;
    r: number;
    p: number;
    salt: string;
    nonce: string;
    chunk: number;
    check: string;
  };
}

function deriveKey(passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }) {
  return new Promise<Buffer>((resolve, reject) =>
    scrypt(
      passphrase.normalize("NFC"),
      salt,
      32,
      { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

const keyCheck = (key: Buffer) => createHmac("sha256", key).update(KEY_CHECK_TEXT).digest("base64");

function chunkNonce(prefix: Buffer, index: number): Buffer {
  const nonce = Buffer.alloc(12);
  prefix.copy(nonce, 0, 0, 8);
  nonce.writeUInt32BE(index, 8);
  return nonce;
}

function chunkAad(index: number, last: boolean): Buffer {
  const aad = Buffer.alloc(5);
  aad.writeUInt32BE(index, 0);
  aad[4] = last ? 1 : 0;
  return aad;
}

/** Reads `file` from start to end in pieces of `size` bytes, the last one possibly shorter or empty. */
function* pieces(fd: number, size: number, from = 0): Generator<Buffer> {
  let position = from;
  for (;;) {
    const buffer = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const read = readSync(fd, buffer, filled, size - filled, position + filled);
      if (read === 0) break;
      filled += read;
    }
    position += filled;
    yield buffer.subarray(0, filled);
    if (filled < size) return;
  }
}

async function fileSha256(file: string, signal?: AbortSignal): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  const fd = openSync(file, "r");
  try {
    for (const piece of pieces(fd, CHUNK_BYTES)) {
      signal?.throwIfAborted();
      hash.update(piece);
      size += piece.length;
    }
  } finally {
    closeSync(fd);
  }
  return { size, sha256: hash.digest("hex") };
}

/**
 * Writes the off-box file of the backup `source` to `target` (owner-only; must not exist),
 * encrypted when `passphrase` is not empty. Answers the header written.
 */
export async function sealBackup(
  source: string,
  target: string,
  options: { engine: Engine; passphrase: string; signal?: AbortSignal },
): Promise<SealedHeader> {
  const { signal } = options;
  const plain = await fileSha256(source, signal);
  let key: Buffer | null = null;
  let enc: SealedHeader["enc"] = null;
  const nonce = randomBytes(8);
  if (options.passphrase) {
    const salt = randomBytes(16);
    key = await deriveKey(options.passphrase, salt, SCRYPT_PARAMS);
    enc = {
      alg: "aes-256-gcm",
      kdf: "scrypt",
      ...SCRYPT_PARAMS,
      salt: salt.toString("base64"),
      nonce: nonce.toString("base64"),
      chunk: CHUNK_BYTES,
      check: keyCheck(key),
    };
  }
  const header: SealedHeader = { v: 1, engine: options.engine, name: basename(source), ...plain, enc };
  const headerBytes = Buffer.from(JSON.stringify(header));
  const lead = Buffer.alloc(MAGIC.length + 4);
  lead.write(MAGIC, 0, "latin1");
  lead.writeUInt32BE(headerBytes.length, MAGIC.length);
  const out = openSync(target, "wx", 0o600);
  const input = openSync(source, "r");
  try {
    writeSync(out, lead);
    writeSync(out, headerBytes);
    let index = 0;
    let written = 0;
    for (const piece of pieces(input, CHUNK_BYTES)) {
      signal?.throwIfAborted();
      written += piece.length;
      if (!key) {
        writeSync(out, piece);
        continue;
      }
      const last = piece.length < CHUNK_BYTES || written === plain.size;
      const cipher = createCipheriv("aes-256-gcm", key, chunkNonce(nonce, index));
      cipher.setAAD(chunkAad(index, last));
      writeSync(out, Buffer.concat([cipher.update(piece), cipher.final(), cipher.getAuthTag()]));
      index += 1;
      if (last) break;
    }
    if (written !== plain.size) throw new Error(`${source} changed while it was sealed`);
  } catch (error) {
    closeSync(out);
    rmSync(target, { force: true });
    throw error;
  } finally {
    closeSync(input);
  }
  closeSync(out);
  return header;
}

/** Whether `file` starts as an off-box backup does. */
export function isSealedBackup(file: string): boolean {
  const fd = openSync(file, "r");
  try {
    const head = Buffer.alloc(MAGIC.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.toString("latin1") === MAGIC;
  } finally {
    closeSync(fd);
  }
}

function readHeader(fd: number, file: string): { header: SealedHeader; bodyAt: number } {
  const lead = Buffer.alloc(MAGIC.length + 4);
  if (readSync(fd, lead, 0, lead.length, 0) !== lead.length || lead.toString("latin1", 0, 8) !== MAGIC) {
    throw new SealedBackupError(`${file} is not a ferry off-box backup`);
  }
  const length = lead.readUInt32BE(MAGIC.length);
  if (length > MAX_HEADER_BYTES) throw new SealedBackupError(`${file} has a damaged header`);
  const bytes = Buffer.alloc(length);
  if (readSync(fd, bytes, 0, length, lead.length) !== length) {
    throw new SealedBackupError(`${file} is cut short (in its header)`);
  }
  try {
    const header = JSON.parse(bytes.toString("utf8")) as SealedHeader;
    if (header.v !== 1 || typeof header.sha256 !== "string") throw new Error("version");
    return { header, bodyAt: lead.length + length };
  } catch {
    throw new SealedBackupError(`${file} has a damaged header`);
  }
}

/** The header of an off-box backup, without opening its body. */
export function sealedHeaderOf(file: string): SealedHeader {
  const fd = openSync(file, "r");
  try {
    return readHeader(fd, file).header;
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the backup inside the off-box file `source` to `target` (owner-only; must not exist):
 * decrypted with `passphrase` when it is encrypted, then checked against the size and SHA-256 its
 * header names. Refuses (SealedBackupError) a wrong or missing passphrase, an altered or cut-short
 * file; nothing is left at `target` then.
 */
export async function openSealedBackup(
  source: string,
  target: string,
  passphrase: string,
): Promise<SealedHeader> {
  const input = openSync(source, "r");
  const out = openSync(target, "wx", 0o600);
  try {
    const { header, bodyAt } = readHeader(input, source);
    const hash = createHash("sha256");
    let size = 0;
    const emit = (bytes: Buffer) => {
      hash.update(bytes);
      size += bytes.length;
      writeSync(out, bytes);
    };
    if (!header.enc) {
      for (const piece of pieces(input, CHUNK_BYTES, bodyAt)) emit(piece);
    } else {
      const key = await keyFor(header.enc, passphrase, source);
      const nonce = Buffer.from(header.enc.nonce, "base64");
      let index = 0;
      let ended = false;
      for (const piece of pieces(input, header.enc.chunk + TAG_BYTES, bodyAt)) {
        if (ended) {
          if (piece.length > 0) throw altered(source, "data after its last chunk");
          break;
        }
        if (piece.length < TAG_BYTES) throw altered(source, "cut short");
        const last =
          piece.length < header.enc.chunk + TAG_BYTES || size + piece.length - TAG_BYTES === header.size;
        const decipher = createDecipheriv("aes-256-gcm", key, chunkNonce(nonce, index));
        decipher.setAAD(chunkAad(index, last));
        decipher.setAuthTag(piece.subarray(piece.length - TAG_BYTES));
        try {
          emit(
            Buffer.concat([decipher.update(piece.subarray(0, piece.length - TAG_BYTES)), decipher.final()]),
          );
        } catch {
          throw altered(source, `chunk ${index} fails its authentication tag`);
        }
        index += 1;
        ended = last;
      }
      if (!ended) throw altered(source, "cut short");
    }
    const sha256 = hash.digest("hex");
    if (size !== header.size || sha256 !== header.sha256) {
      throw altered(
        source,
        `${size} bytes with SHA-256 ${sha256}, its header names ${header.size} bytes, ${header.sha256}`,
      );
    }
    closeSync(out);
    return header;
  } catch (error) {
    closeSync(out);
    rmSync(target, { force: true });
    throw error;
  } finally {
    closeSync(input);
  }
}

const altered = (file: string, why: string) =>
  new SealedBackupError(`${file} fails the integrity check (${why}): it was altered or damaged`);

async function keyFor(enc: NonNullable<SealedHeader["enc"]>, passphrase: string, file: string) {
  if (!passphrase) {
    throw new SealedBackupError(
      `${file} is encrypted: give the passphrase (setting backup_passphrase, --passphrase or FERRY_BACKUP_PASSPHRASE)`,
    );
  }
  if (enc.alg !== "aes-256-gcm" || enc.kdf !== "scrypt" || enc.N > 1 << 20 || enc.r > 32 || enc.p > 16) {
    throw new SealedBackupError(`${file} names an encryption this ferry build does not know`);
  }
  const key = await deriveKey(passphrase, Buffer.from(enc.salt, "base64"), enc);
  const expected = Buffer.from(enc.check, "base64");
  const got = Buffer.from(keyCheck(key), "base64");
  if (expected.length !== got.length || !timingSafeEqual(expected, got)) {
    throw new SealedBackupError(`wrong passphrase for ${file}`);
  }
  return key;
}
