/** Uploading and downloading images over HTTP as the SPA does (POST /api/file/upload, GET the download path). */
import { DOWNLOAD_PREFIX } from "../src/modules/file/schema.ts";
import type { ApiClient } from "./harness.ts";

/** Uploads bytes as the client's account; answers the HTTP status and the stored name ("" when refused). */
export async function uploadImage(
  client: ApiClient,
  bytes: Uint8Array,
  name = "image.png",
): Promise<{ status: number; filename: string }> {
  const form = new FormData();
  form.append("file", new File([new Uint8Array(bytes)], name, { type: "image/png" }));
  const response = await fetch(`${client.baseUrl}/api/file/upload`, {
    method: "POST",
    body: form,
    headers: { cookie: client.cookieHeader() },
  });
  const body = (await response.json()) as { file?: { filename: string } };
  return { status: response.status, filename: body.file?.filename ?? "" };
}

/** The image a server serves under a stored name: status, content type and bytes. */
export async function downloadImage(
  baseUrl: string,
  filename: string,
): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await fetch(`${baseUrl}${DOWNLOAD_PREFIX}${filename}`);
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}
