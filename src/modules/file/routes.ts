/**
 * Image uploads (issue 13 §1, seed 000 §7). Not enveloped (DESIGN §5):
 *
 *   POST /api/file/upload   multipart/form-data, field `file`; session by the `token` cookie or
 *                           `Authorization: Bearer <token>`.
 *     200 {"file": {"filename": "<32 hex>.<jpg|png|webp>"}}
 *     4xx/5xx {"code": <envelope code>, "msg": "<中文 message>"}:
 *       401 1002 not logged in · 403 1000 cross-site browser request · 400 1000 no file / empty ·
 *       413 1000 图片限制在4M内 · 415 1000 not a jpg/png/webp image · 429 1005 daily quota ·
 *       500 999 unexpected.
 *
 *   GET /api/file/downloads/:filename   the stored image, or 404 for anything else.
 *     No login: the pages show these in <img> (tickets for the customer and the admins, avatars),
 *     and the name's 128 random bits are the capability, like the subscription link's key.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { refreshDataVersion } from "../../db/read-cache.ts";
import { jsonResponse, readBodyBytes } from "../../lib/http.ts";
import { CROSS_SITE_MSG, NOT_LOGGED_IN_MSG, ownOrigins, sessionToken } from "../../rpc/call.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { sameSiteRequest } from "../../rpc/same-site.ts";
import { recordError } from "../errors/service.ts";
import { roleOf } from "../user/row.ts";
import { touchActivity } from "../user/service.ts";
import { resolveSession } from "../user/session.ts";
import { FileMsg, MAX_IMAGE_BYTES, UPLOAD_NAME_PATTERN, UPLOAD_PATH } from "./schema.ts";
import { dailyUploadQuota, readUpload, requireUploadQuota, saveUpload } from "./service.ts";

/** Room for the multipart boundary and part headers around a 4 MB image. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

const refuse = (status: number, code: number, msg: string) => jsonResponse(status, { code, msg });

/** The HTTP status of an expected refusal. */
function statusOf(error: RpcError): number {
  if (error.code === Code.notLoggedIn) return 401;
  if (error.code === Code.tooManyRequests) return 429;
  if (error.message === FileMsg.tooLarge) return 413;
  if (error.message === FileMsg.badType || error.message === FileMsg.notImage) return 415;
  return 400;
}

/** The `file` part of a multipart body, or null when there is none (or the body is not multipart). */
async function filePart(body: Uint8Array<ArrayBuffer>, contentType: string): Promise<Uint8Array | null> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { "content-type": contentType } }).formData();
  } catch {
    return null;
  }
  const file = form.get("file");
  // The part's file name and declared type are ignored: the bytes decide (sniff.ts).
  return file instanceof Blob ? new Uint8Array(await file.arrayBuffer()) : null;
}

/** Who may upload now and their daily quota, or the refusal (throws RpcError for a used-up quota). */
async function checkUploader(
  app: AppContext,
  request: Request,
): Promise<{ userId: string; quota: number } | Response> {
  // A browser says where the request comes from; a page on another site must not upload with the
  // visitor's cookie. Clients that are not browsers send neither header.
  if (!sameSiteRequest(request, await ownOrigins(app, request))) {
    return refuse(403, Code.badInput, CROSS_SITE_MSG);
  }
  refreshDataVersion(app.db);
  const user = await resolveSession(app, sessionToken(request));
  if (!user) return refuse(401, Code.notLoggedIn, NOT_LOGGED_IN_MSG);
  await touchActivity(app, user);
  const quota = dailyUploadQuota(roleOf(user, await app.settings.all()));
  // Before taking 4 MB that would be refused anyway.
  await requireUploadQuota(app, user.id, quota);
  return { userId: user.id, quota };
}

async function upload(app: AppContext, request: Request): Promise<Response> {
  // The body is read (capped) while the checks wait on the database, and one past the cap is
  // refused at once: Bun buffers a body nobody reads yet, and the client keeps sending until it
  // has an answer, so a streamed oversized body would otherwise pile up far past the cap.
  const stopReading = new AbortController();
  const reading = readBodyBytes(request, MAX_IMAGE_BYTES + MULTIPART_OVERHEAD_BYTES, stopReading.signal);
  const checking = checkUploader(app, request);
  const overCap = reading.then((body) => (!body.ok && body.reason === "too_large" ? body : NEVER));
  const first = await Promise.race([checking, overCap]).catch((error: unknown) => {
    stopReading.abort();
    throw error;
  });
  if (first instanceof Response) {
    stopReading.abort();
    return first;
  }
  if ("reason" in first) {
    checking.catch(() => {});
    return refuse(413, Code.badInput, FileMsg.tooLarge);
  }
  const body = await reading;
  if (!body.ok) {
    return body.reason === "too_large"
      ? refuse(413, Code.badInput, FileMsg.tooLarge)
      : refuse(400, Code.badInput, FileMsg.failed);
  }
  const file = await filePart(body.bytes, request.headers.get("content-type") ?? "");
  if (!file) return refuse(400, Code.badInput, FileMsg.noFile);
  const filename = await saveUpload(app, first.userId, first.quota, file);
  return jsonResponse(200, { file: { filename } });
}

/** A promise that never settles: a race entrant that only ever loses. */
const NEVER = new Promise<never>(() => {});

const notFound = () => new Response(null, { status: 404 });

async function download(app: AppContext, filename: string): Promise<Response> {
  // Only a server-made name with its row is looked up (and, for an upload older than the blobs,
  // ever becomes a path inside uploadsDir).
  if (!UPLOAD_NAME_PATTERN.test(filename)) return notFound();
  const upload = await readUpload(app, filename);
  if (!upload) return notFound();
  return new Response(upload.bytes, {
    headers: {
      "content-type": upload.contentType,
      "x-content-type-options": "nosniff",
      "cache-control": "public, max-age=31536000, immutable",
      "content-security-policy": "default-src 'none'; sandbox",
      "content-disposition": "inline",
    },
  });
}

export function fileRoutes(app: AppContext) {
  return new Elysia()
    .post(
      UPLOAD_PATH,
      async ({ request }) => {
        try {
          return await upload(app, request);
        } catch (error) {
          if (error instanceof RpcError) return refuse(statusOf(error), error.code, error.message);
          await recordError(app.db, UPLOAD_PATH, error);
          return refuse(500, Code.internal, FileMsg.failed);
        }
      },
      { parse: "none" },
    )
    .get("/api/file/downloads/:filename", ({ params }) => download(app, params.filename));
}
