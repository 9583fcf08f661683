/**
 * Image upload from the SPA (issue 13 §1): the file is checked here first so a wrong type or an
 * oversized photo is refused at once with the seed's message; the server decides again by the bytes.
 */
import {
  downloadPath,
  FileMsg,
  IMAGE_TYPES,
  MAX_IMAGE_BYTES,
  UPLOAD_NAME_PATTERN,
  UPLOAD_PATH,
  type UploadAnswer,
} from "../../src/modules/file/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { NETWORK_ERROR_TOAST, onSessionExpired } from "../api.ts";

/** `msg` is "" when the failure was already shown (an expired session's toast and redirect). */
export type UploadResult = { ok: true; imageUrl: string } | { ok: false; msg: string };

const IMAGE_EXTENSION = /\.(jpe?g|png|webp)$/i;

/**
 * Why this file should not be sent, or null. The type counts when the browser names one; without
 * one (some phone pickers) the extension decides.
 */
export function imageFileProblem(file: File): string | null {
  const typeOk = file.type === "" ? IMAGE_EXTENSION.test(file.name) : isImageType(file.type);
  if (!typeOk) return FileMsg.badType;
  if (file.size === 0) return FileMsg.empty;
  if (file.size > MAX_IMAGE_BYTES) return FileMsg.tooLarge;
  return null;
}

const isImageType = (type: string) => (IMAGE_TYPES as readonly string[]).includes(type);

/** Uploads with the session cookie; answers the image's download path or the message to show. */
export async function uploadImage(file: File): Promise<UploadResult> {
  const problem = imageFileProblem(file);
  if (problem) return { ok: false, msg: problem };
  const form = new FormData();
  form.append("file", file);
  let response: Response;
  try {
    response = await fetch(UPLOAD_PATH, { method: "POST", body: form, credentials: "same-origin" });
  } catch {
    return { ok: false, msg: NETWORK_ERROR_TOAST };
  }
  // A proxy's error page is not JSON; its refusal still gets a message.
  const body = (await response.json().catch(() => null)) as
    | (Partial<UploadAnswer> & { code?: unknown; msg?: unknown })
    | null;
  const filename = body?.file?.filename;
  if (response.ok && typeof filename === "string" && UPLOAD_NAME_PATTERN.test(filename)) {
    return { ok: true, imageUrl: downloadPath(filename) };
  }
  if (body?.code === Code.notLoggedIn) {
    onSessionExpired();
    return { ok: false, msg: "" };
  }
  return { ok: false, msg: typeof body?.msg === "string" && body.msg !== "" ? body.msg : FileMsg.failed };
}
