import { chmodSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AppContext } from "../../context.ts";
import { onRollback, tx } from "../../db/db.ts";
import { addDays, businessDay, endOfBusinessDay } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { randomHex } from "../../rpc/ids.ts";
import type { Role } from "../user/schema.ts";
import { FileMsg, MAX_IMAGE_BYTES } from "./schema.ts";
import { sniffImage } from "./sniff.ts";

/**
 * Images one account may upload per business day (setting `timezone`): plenty for tickets and an
 * avatar, and a bound on the disk one account can fill (30 × 4 MB). Back-office staff upload
 * prize and product images in batches, so they get more.
 */
export const DAILY_UPLOADS = { customer: 30, staff: 300 } as const;

export const dailyUploadQuota = (role: Role): number =>
  role === "admin" || role === "yunying" ? DAILY_UPLOADS.staff : DAILY_UPLOADS.customer;

/**
 * Checks an image reference a user is about to store (ticket, comment, avatar): "" (no image)
 * passes; otherwise it must be one of that user's own uploads, so nobody can attach another
 * account's image by its name.
 */
export async function requireOwnUpload(ctx: AppContext, userId: string, filename: string): Promise<void> {
  if (filename === "") return;
  const row = await ctx.db.get<{ user_id: string }>(
    "SELECT user_id FROM uploads WHERE filename = ?",
    filename,
  );
  if (row?.user_id !== userId) throw new RpcError(Code.badInput, FileMsg.notYours);
}

async function uploadsToday(ctx: AppContext, userId: string, now: number): Promise<number> {
  const timeZone = await ctx.settings.get("timezone");
  const dayStart = endOfBusinessDay(addDays(businessDay(now, timeZone), -1), timeZone) + 1;
  return (
    (
      await ctx.db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM uploads WHERE user_id = ? AND create_time >= ?",
        userId,
        dayStart,
      )
    )?.n ?? 0
  );
}

/** Refuses (1005) once the account has used today's quota; checked again when the file is saved. */
export async function requireUploadQuota(
  ctx: AppContext,
  userId: string,
  quota: number,
  now = Date.now(),
): Promise<void> {
  if ((await uploadsToday(ctx, userId, now)) >= quota)
    throw new RpcError(Code.tooManyRequests, FileMsg.quota);
}

/** The content type of a stored upload, or null when there is no such upload. */
export async function uploadType(ctx: AppContext, filename: string): Promise<string | null> {
  return (
    (
      await ctx.db.get<{ content_type: string }>(
        "SELECT content_type FROM uploads WHERE filename = ?",
        filename,
      )
    )?.content_type ?? null
  );
}

/** `<uploadsDir>`, made owner-only (0700; chmod, unlike the create mode, ignores the umask). */
function ensureUploadsDir(ctx: AppContext): void {
  if (mkdirSync(ctx.uploadsDir, { recursive: true, mode: 0o700 }) !== undefined) {
    chmodSync(ctx.uploadsDir, 0o700);
  }
}

/**
 * Stores an image for a user and answers its new name: 128 random bits and the extension its
 * bytes prove. The bytes go to a temporary name first (never matching a served name) and are
 * renamed in the transaction that counts the quota and inserts the row, so a crash or a refusal
 * leaves no half file and no file without its row under a served name.
 */
export async function saveUpload(
  ctx: AppContext,
  userId: string,
  quota: number,
  bytes: Uint8Array,
  now = Date.now(),
): Promise<string> {
  if (bytes.length === 0) throw new RpcError(Code.badInput, FileMsg.empty);
  if (bytes.length > MAX_IMAGE_BYTES) throw new RpcError(Code.badInput, FileMsg.tooLarge);
  const image = sniffImage(bytes);
  if (!image.ok) throw new RpcError(Code.badInput, FileMsg[image.reason]);
  await requireUploadQuota(ctx, userId, quota, now);
  ensureUploadsDir(ctx);
  const filename = `${randomHex(16)}.${image.ext}`;
  const temporary = join(ctx.uploadsDir, `.incoming-${randomHex(8)}`);
  const final = join(ctx.uploadsDir, filename);
  try {
    await writeFile(temporary, bytes, { mode: 0o600, flag: "wx" });
    await tx(ctx.db, async () => {
      await requireUploadQuota(ctx, userId, quota, now);
      await ctx.db.run(
        "INSERT INTO uploads (filename, user_id, content_type, create_time) VALUES (?, ?, ?, ?)",
        filename,
        userId,
        image.type,
        now,
      );
      renameSync(temporary, final);
      onRollback(ctx.db, () => renameSync(final, temporary));
    });
  } finally {
    rmSync(temporary, { force: true });
  }
  return filename;
}
