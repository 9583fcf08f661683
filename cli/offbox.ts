/**
 * `ferry backup --to s3` and `ferry restore --from s3://bucket/key` (issue 30 §4): the off-box
 * halves of the backup commands. The restore downloads and opens the sealed file, then hands the
 * backup inside to the same restore as a local file (cli/restore.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Option } from "commander";
import { openDatabase } from "../src/db/db.ts";
import { ALLOW_PRIVATE_FLAG } from "../src/lib/outbound.ts";
import type { Settings } from "../src/modules/settings/schema.ts";
import { SettingsStore } from "../src/modules/settings/service.ts";
import { downloadObject, OffboxError, parseS3Url, type S3Settings, uploadBackup } from "../src/ops/offbox.ts";
import { isSealedBackup, openSealedBackup, SealedBackupError } from "../src/ops/sealed.ts";
import { databaseUrl, die, withContextAsync } from "./shared.ts";

export const PASSPHRASE_ENV = "FERRY_BACKUP_PASSPHRASE";

/** `--allow-private-urls` for the commands that reach S3 (env FERRY_ALLOW_PRIVATE_URLS=1). */
export const allowPrivateOption = () =>
  new Option(
    ALLOW_PRIVATE_FLAG,
    "let the command reach an S3 endpoint on a loopback or private address (env FERRY_ALLOW_PRIVATE_URLS=1)",
  );
export const privateAllowed = (flag: boolean | undefined) =>
  flag === true || process.env.FERRY_ALLOW_PRIVATE_URLS === "1";

/** A folder only this user can read, for a backup on its way in or out; removed by the caller. */
export const privateTempDir = () => mkdtempSync(join(tmpdir(), "ferry-offbox-"));

/**
 * Uploads a backup just written (`file`) with the settings of the database it came from; prints
 * the key. The backup was made by the caller (the one `ferry backup` path).
 */
export async function uploadToS3(dataDir: string | undefined, file: string, allowPrivate: boolean) {
  await withContextAsync(dataDir, async (ctx) => {
    try {
      const { bucket, key, size, sha256 } = await uploadBackup(ctx, file, { allowPrivate });
      console.log(
        `uploaded s3://${bucket}/${key} (${size} bytes, SHA-256 ${sha256}, verified by reading it back)`,
      );
    } catch (error) {
      if (error instanceof OffboxError) die(error.message);
      die(`upload failed: ${(error as Error).message}`);
    }
  });
}

/**
 * The S3 settings for a restore: those of the target database when it already has them (read, not
 * migrated: a fresh database has none), then the environment Bun's S3 client knows (S3_ENDPOINT,
 * S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_VIRTUAL_HOSTED_STYLE=1), which wins: on a
 * new box it is all there is.
 */
async function restoreSettings(dataDir: string): Promise<S3Settings & Pick<Settings, "backup_passphrase">> {
  let stored: Settings | null = null;
  const url = databaseUrl();
  const file = `${dataDir}/ferry.db`;
  if (url || (await Bun.file(file).exists())) {
    try {
      const db = await openDatabase({ url, file });
      try {
        stored = await new SettingsStore(db).all();
      } finally {
        await db.close();
      }
    } catch {
      stored = null;
    }
  }
  const env = process.env;
  return {
    backup_s3_endpoint: env.S3_ENDPOINT ?? env.AWS_ENDPOINT ?? stored?.backup_s3_endpoint ?? "",
    backup_s3_bucket: stored?.backup_s3_bucket ?? "",
    backup_s3_region: env.S3_REGION ?? env.AWS_REGION ?? stored?.backup_s3_region ?? "us-east-1",
    backup_s3_access_key_id:
      env.S3_ACCESS_KEY_ID ?? env.AWS_ACCESS_KEY_ID ?? stored?.backup_s3_access_key_id ?? "",
    backup_s3_secret_access_key:
      env.S3_SECRET_ACCESS_KEY ?? env.AWS_SECRET_ACCESS_KEY ?? stored?.backup_s3_secret_access_key ?? "",
    backup_s3_prefix: stored?.backup_s3_prefix ?? "",
    backup_s3_virtual_host:
      env.S3_VIRTUAL_HOSTED_STYLE !== undefined
        ? env.S3_VIRTUAL_HOSTED_STYLE === "1"
        : (stored?.backup_s3_virtual_host ?? false),
    backup_passphrase: stored?.backup_passphrase ?? "",
  };
}

/**
 * Downloads `s3://bucket/key` into `dir` and, when it is a sealed off-box file, opens it there
 * (decrypted and checked against its SHA-256). Answers the backup to restore.
 */
export async function fetchFromS3(
  s3Url: string,
  dataDir: string,
  dir: string,
  options: { passphrase?: string; allowPrivate: boolean },
): Promise<string> {
  const target = parseS3Url(s3Url);
  if (!target) die(`not an s3://bucket/key address: ${s3Url}`);
  const settings = await restoreSettings(dataDir);
  const downloaded = join(dir, "download");
  try {
    await downloadObject(settings, options.allowPrivate, target.bucket, target.key, downloaded);
  } catch (error) {
    die(
      error instanceof OffboxError
        ? error.message
        : `download of ${s3Url} failed: ${(error as Error).message}`,
    );
  }
  const passphrase = options.passphrase ?? process.env[PASSPHRASE_ENV] ?? settings.backup_passphrase;
  return await unsealIfSealed(downloaded, dir, passphrase, s3Url);
}

/** `file` itself, or, for a sealed off-box file (from S3 or a Telegram chat), the backup inside it written to `dir`. */
export async function unsealIfSealed(
  file: string,
  dir: string,
  passphrase: string,
  shownAs = file,
): Promise<string> {
  if (!isSealedBackup(file)) return file;
  const opened = join(dir, "backup");
  try {
    await openSealedBackup(file, opened, passphrase);
  } catch (error) {
    if (error instanceof SealedBackupError) die(error.message.replaceAll(file, shownAs));
    throw error;
  }
  return opened;
}

export const removeTempDir = (dir: string) => rmSync(dir, { recursive: true, force: true });
