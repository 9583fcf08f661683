import { join } from "node:path";
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
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

/** A stored upload as it is served: its proven type and its bytes. */
export interface StoredUpload {
  contentType: string;
  bytes: Uint8Array<ArrayBuffer>;
}

/**
 * A stored upload, or null when there is none. Its bytes are in `upload_blobs`; an upload made
 * before migration 016 (SQLite only) has no blob row and is read from `<data>/uploads/<filename>`,
 * which nothing writes any more. Only a name the caller has checked against UPLOAD_NAME_PATTERN
 * and that has its `uploads` row ever becomes a path.
 */
export async function readUpload(ctx: AppContext, filename: string): Promise<StoredUpload | null> {
  const row = await ctx.db.get<{ content_type: string; bytes: Uint8Array<ArrayBuffer> | null }>(
    `SELECT u.content_type, b.bytes
       FROM uploads u LEFT JOIN upload_blobs b ON b.filename = u.filename
      WHERE u.filename = ?`,
    filename,
  );
  if (!row) return null;
  if (row.bytes) return { contentType: row.content_type, bytes: row.bytes };
  const legacy = Bun.file(join(ctx.uploadsDir, filename));
  if (!(await legacy.exists())) return null;
  return { contentType: row.content_type, bytes: await legacy.bytes() };
}

/**
 * Stores an image for a user and answers its new name: 128 random bits and the extension its
 * bytes prove. The bytes go into `upload_blobs` in the transaction that counts the quota and
 * inserts the `uploads` row, so every replica serves them, a refusal or a crash leaves nothing,
 * and a served name always has its whole image.
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
  const filename = `${randomHex(16)}.${image.ext}`;
  await tx(ctx.db, async () => {
    await requireUploadQuota(ctx, userId, quota, now);
    await ctx.db.run(
      "INSERT INTO uploads (filename, user_id, content_type, create_time) VALUES (?, ?, ?, ?)",
      filename,
      userId,
      image.type,
      now,
    );
    await ctx.db.run("INSERT INTO upload_blobs (filename, bytes) VALUES (?, ?)", filename, bytes);
  });
  return filename;
}
