/**
 * Off-box copies of the backups (issue 30 §4): the scheduled backup, sealed (src/ops/sealed.ts,
 * encrypted when `backup_passphrase` is set), goes to S3-compatible storage through Bun's S3
 * client and is verified there (the size by HEAD, then the object read back whole and its SHA-256
 * compared with the bytes sent), the scheduled copies under the prefix are pruned to
 * `backup_offbox_keep`, and, with `backup_telegram` on and the bot set up, the same file goes to
 * the bound admins' chats when it is under the Bot API's 50 MB. A failure is a row of the error
 * log and an alert to the admins through the bot outbox. `ferry backup --to s3` and
 * `ferry restore --from s3://bucket/key` (cli/) use the same functions.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { AppContext } from "../context.ts";
import type { Engine } from "../db/db.ts";
import { resolveTarget } from "../lib/outbound.ts";
import { recordError } from "../modules/errors/service.ts";
import type { Settings } from "../modules/settings/schema.ts";
import { MAX_BOT_UPLOAD_BYTES, sendBotDocument } from "../modules/telegram/api.ts";
import { endpointOf } from "../modules/telegram/bot.ts";
import { adminChats, queueAdminMessage } from "../modules/telegram/outbox.ts";
import { sealBackup } from "./sealed.ts";

/** What an off-box file's name ends with: `<prefix>ferry-2026-11-27.db.ferrybak`. */
export const SEALED_SUFFIX = ".ferrybak";
const SCHEDULED_OBJECT = /^ferry-\d{4}-\d{2}-\d{2}\.(db|dump)\.ferrybak$/;
/** Bun's S3 writer holds partSize × queueSize bytes at most: 10 MiB here, whatever the backup's size. */
const PART_BYTES = 5 * 1024 * 1024;
const READ_BYTES = 1024 * 1024;

/** The S3 settings an upload or download needs. */
export type S3Settings = Pick<
  Settings,
  | "backup_s3_endpoint"
  | "backup_s3_bucket"
  | "backup_s3_region"
  | "backup_s3_access_key_id"
  | "backup_s3_secret_access_key"
  | "backup_s3_prefix"
  | "backup_s3_virtual_host"
>;

/** Why an off-box copy could not be made, verified or read; the CLI prints the message as its one line. */
export class OffboxError extends Error {
  override name = "OffboxError";
}

export const s3Configured = (settings: S3Settings) =>
  settings.backup_s3_endpoint.trim() !== "" && settings.backup_s3_bucket !== "";

/**
 * Bun's S3 client for the settings, `bucket` instead of the setting's when given (a restore names
 * its own). The endpoint's host must be public unless the server or CLI allows private addresses
 * (src/lib/outbound.ts); Bun's client then resolves it again itself, so a name that starts to
 * resolve to a private address between the two (DNS rebinding) is not caught, as it is for the
 * other outbound calls. Path style by default (every S3-compatible server takes it); virtual-hosted
 * style puts the bucket in the host.
 */
export async function s3ClientOf(
  settings: S3Settings,
  allowPrivate: boolean,
  bucket = settings.backup_s3_bucket,
): Promise<Bun.S3Client> {
  if (!s3Configured({ ...settings, backup_s3_bucket: bucket })) {
    throw new OffboxError(
      "S3 is not set up: set backup_s3_endpoint and backup_s3_bucket (配置管理 → 定时备份)",
    );
  }
  const endpoint = new URL(settings.backup_s3_endpoint.trim().replace(/\/+$/, ""));
  if (settings.backup_s3_virtual_host) endpoint.hostname = `${bucket}.${endpoint.hostname}`;
  await resolveTarget(endpoint.hostname, allowPrivate);
  return new Bun.S3Client({
    endpoint: endpoint.toString().replace(/\/+$/, ""),
    bucket,
    region: settings.backup_s3_region || "us-east-1",
    accessKeyId: settings.backup_s3_access_key_id,
    secretAccessKey: settings.backup_s3_secret_access_key,
    virtualHostedStyle: settings.backup_s3_virtual_host,
  });
}

/**
 * Uploads `file` as `key`, then verifies it: the object's size (HEAD) and the SHA-256 of its bytes
 * read back must equal the file's. The file is sent in pieces, so a lost lease (`signal`) stops it
 * between two; the multipart upload is then abandoned. Answers the SHA-256.
 */
export async function uploadVerified(
  client: Bun.S3Client,
  file: string,
  key: string,
  signal?: AbortSignal,
): Promise<{ size: number; sha256: string }> {
  const size = statSync(file).size;
  const sent = createHash("sha256");
  const writer = client.file(key).writer({ partSize: PART_BYTES, queueSize: 2, retry: 3 });
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(READ_BYTES);
    for (let position = 0; position < size; ) {
      if (signal?.aborted) {
        await Promise.resolve(writer.end(new Error("aborted"))).catch(() => {});
        signal.throwIfAborted();
      }
      const read = readSync(fd, buffer, 0, READ_BYTES, position);
      if (read === 0) break;
      const piece = Buffer.from(buffer.subarray(0, read));
      sent.update(piece);
      await untilAborted(writer.write(piece), signal);
      position += read;
    }
    await untilAborted(writer.end(), signal);
  } finally {
    closeSync(fd);
  }
  const sha256 = sent.digest("hex");
  signal?.throwIfAborted();
  const stat = await untilAborted(client.stat(key), signal);
  if (stat.size !== size) {
    await failedVerification(client, key, `the store holds ${stat.size} bytes, ${size} were sent`);
  }
  const readBack = createHash("sha256");
  const reader = client.file(key).stream().getReader();
  try {
    for (;;) {
      const { value, done } = await untilAborted(reader.read(), signal);
      if (done) break;
      readBack.update(value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  const stored = readBack.digest("hex");
  if (stored !== sha256) {
    await failedVerification(client, key, `SHA-256 read back ${stored}, sent ${sha256}`);
  }
  return { size, sha256 };
}

/** A copy that does not read back as sent is deleted (it must not pass for a good one, nor count in pruning). */
async function failedVerification(client: Bun.S3Client, key: string, why: string): Promise<never> {
  const removed = await client.delete(key).then(
    () => "deleted",
    () => "could not be deleted",
  );
  throw new OffboxError(`verification of ${key} failed: ${why}; the object ${removed}`);
}

/**
 * `work`, or an AbortError as soon as `signal` aborts (a lost lease): Bun's S3 calls take no
 * signal, so a request to a store that stopped answering is left to end by itself, unawaited.
 */
function untilAborted<T>(work: T | Promise<T>, signal?: AbortSignal): Promise<T> {
  const promise = Promise.resolve(work);
  if (!signal) return promise;
  promise.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Every key under `prefix` (ListObjectsV2, page after page). */
async function keysUnder(client: Bun.S3Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let continuationToken: string | undefined;
  do {
    const page = await client.list({
      prefix,
      maxKeys: 1000,
      ...(continuationToken ? { continuationToken } : {}),
    });
    for (const object of page.contents ?? []) keys.push(object.key);
    continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
  } while (continuationToken);
  return keys;
}

/**
 * Deletes the oldest scheduled copies (`<prefix>ferry-YYYY-MM-DD.(db|dump).ferrybak`) beyond
 * `keep`; anything else under the prefix (copies of `ferry backup --to s3`) is left alone.
 * Answers the keys deleted.
 */
export async function pruneOffbox(
  client: Bun.S3Client,
  prefix: string,
  keep: number,
  signal?: AbortSignal,
): Promise<string[]> {
  const scheduled = (await untilAborted(keysUnder(client, prefix), signal))
    .filter((key) => SCHEDULED_OBJECT.test(key.slice(prefix.length)))
    .sort();
  const old = scheduled.slice(0, Math.max(0, scheduled.length - keep));
  for (const key of old) await untilAborted(client.delete(key), signal);
  return old;
}

/** `<prefix><name>.ferrybak`: where a sealed file goes in the bucket. */
const offboxKey = (settings: S3Settings, sealed: string) => `${settings.backup_s3_prefix}${basename(sealed)}`;

/** The sealed file of a backup, written beside it as `<backup>.ferrybak` (removed by the caller). */
export async function sealForOffbox(
  backup: string,
  engine: Engine,
  passphrase: string,
  signal?: AbortSignal,
): Promise<string> {
  const sealed = `${backup}${SEALED_SUFFIX}`;
  rmSync(sealed, { force: true });
  await sealBackup(backup, sealed, { engine, passphrase, signal });
  return sealed;
}

/**
 * Seals `backup`, uploads it as `<prefix><name>.ferrybak` and verifies it. Answers the key and the
 * object's SHA-256.
 */
export async function uploadBackup(
  ctx: AppContext,
  backup: string,
  options: { signal?: AbortSignal; allowPrivate?: boolean } = {},
): Promise<{ key: string; bucket: string; size: number; sha256: string }> {
  const { signal, allowPrivate = ctx.allowPrivateUrls } = options;
  const settings = await ctx.settings.all();
  const client = await s3ClientOf(settings, allowPrivate);
  const sealed = await sealForOffbox(backup, ctx.db.engine, settings.backup_passphrase, signal);
  try {
    const key = offboxKey(settings, sealed);
    return { key, bucket: settings.backup_s3_bucket, ...(await uploadVerified(client, sealed, key, signal)) };
  } finally {
    rmSync(sealed, { force: true });
  }
}

/** Sends the sealed file to every bound admin chat; answers how many chats got it. */
async function sendToAdmins(ctx: AppContext, sealed: string, caption: string, signal?: AbortSignal) {
  const endpoint = await endpointOf(ctx);
  let sent = 0;
  for (const chatId of await adminChats(ctx)) {
    const answer = await sendBotDocument(
      endpoint,
      { chatId, file: sealed, fileName: basename(sealed), caption },
      { timeoutMs: 300_000, signal },
    );
    if (!answer.ok)
      throw new OffboxError(`Telegram sendDocument to chat ${chatId} failed: ${answer.description}`);
    sent += 1;
  }
  if (sent === 0) {
    throw new OffboxError(
      "no admin account has bound the bot (我的账户 → Telegram), so no chat was sent the file",
    );
  }
  return sent;
}

/** The error-log row and the admins' alert for one failed off-box step of a day's backup. */
async function offboxFailed(ctx: AppContext, day: string, where: "S3" | "Telegram", error: unknown) {
  await recordError(ctx.db, `off-box backup (${where})`, error);
  const reason = (error as Error)?.message ?? String(error);
  await queueAdminMessage(
    ctx,
    `⚠️ ${day} 的定时备份未能送到 ${where}：${reason}\n本机 backups/ 中的备份不受影响；可用 ferry backup --to s3 重试。`,
    `backup-offbox:${day}:${where}`,
  );
}

/**
 * After the day's scheduled backup (inside the scheduled-backup lease and the day's claim): the S3
 * copy (uploaded, verified, pruned) and the Telegram copy, each when set up. A failure of one is
 * recorded and alerted and does not stop the other; a lost lease (`signal`) stops both.
 */
export async function sendScheduledOffbox(
  ctx: AppContext,
  backup: string,
  day: string,
  signal?: AbortSignal,
): Promise<void> {
  const settings = await ctx.settings.all();
  const toTelegram = settings.backup_telegram && settings.telegram_bot_token !== "";
  if (!s3Configured(settings) && !toTelegram) return;
  let sealed: string;
  try {
    sealed = await sealForOffbox(backup, ctx.db.engine, settings.backup_passphrase, signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    await offboxFailed(ctx, day, s3Configured(settings) ? "S3" : "Telegram", error);
    return;
  }
  try {
    if (s3Configured(settings)) {
      try {
        const client = await s3ClientOf(settings, ctx.allowPrivateUrls);
        await uploadVerified(client, sealed, offboxKey(settings, sealed), signal);
        await pruneOffbox(client, settings.backup_s3_prefix, settings.backup_offbox_keep, signal);
      } catch (error) {
        if (signal?.aborted) throw error;
        await offboxFailed(ctx, day, "S3", error);
      }
    }
    if (toTelegram) {
      try {
        const size = statSync(sealed).size;
        if (size >= MAX_BOT_UPLOAD_BYTES) {
          throw new OffboxError(
            `the file is ${size} bytes, over the Bot API's 50 MB: use S3 for this install`,
          );
        }
        const caption = `飞渡定时备份 ${day}${settings.backup_passphrase ? "（已加密）" : ""}`;
        await sendToAdmins(ctx, sealed, caption, signal);
      } catch (error) {
        if (signal?.aborted) throw error;
        await offboxFailed(ctx, day, "Telegram", error);
      }
    }
  } finally {
    rmSync(sealed, { force: true });
  }
}

/** `s3://bucket/key` → its parts, or null. */
export function parseS3Url(url: string): { bucket: string; key: string } | null {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  return match ? { bucket: match[1] as string, key: match[2] as string } : null;
}

/** Downloads `key` of `bucket` into `target` (owner-only; must not exist), streamed. */
export async function downloadObject(
  settings: S3Settings,
  allowPrivate: boolean,
  bucket: string,
  key: string,
  target: string,
): Promise<void> {
  const client = await s3ClientOf(settings, allowPrivate, bucket);
  if (!(await client.exists(key))) throw new OffboxError(`no object s3://${bucket}/${key}`);
  closeSync(openSync(target, "wx", 0o600));
  try {
    const writer = Bun.file(target).writer();
    for await (const piece of client.file(key).stream()) await writer.write(piece);
    await writer.end();
  } catch (error) {
    rmSync(target, { force: true });
    throw error;
  }
}
