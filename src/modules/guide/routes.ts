/**
 * Guide downloads and images (issue 17 §3, seed 000 §2 "Client guides"). Not enveloped:
 *
 *   GET|HEAD /guide/<path>   a catalog file from `<data>/guide/`, streamed from disk; 404 (plain)
 *                            for any path not in the catalog, not present, or resolving outside.
 *   POST /api/guide/files    (envelope, public) the catalog paths present now: a guide shows a
 *                            download button for these and the official page otherwise.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { defineCall } from "../../rpc/call.ts";
import { emptyInput } from "../user/schema.ts";
import { contentTypeOf, downloadName, guideFilesOf, type PresentGuideFile } from "./files.ts";

const GUIDE_PREFIX = "/guide/";

const notFound = () => new Response("Not Found", { status: 404, headers: { "content-type": "text/plain" } });

/**
 * The requested catalog path, or null. Catalog paths never need percent-escapes, so any escape
 * (`%2f`, `%2e%2e`, `%00`) is refused rather than decoded into something else.
 */
function requestedPath(request: Request): string | null {
  const path = new URL(request.url).pathname.slice(GUIDE_PREFIX.length);
  return path.includes("%") ? null : path;
}

/** A single `bytes=` range within `size`, "unsatisfiable", or null to send the whole file. */
function byteRange(
  header: string | null,
  size: number,
): { start: number; end: number } | "unsatisfiable" | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === "" && match[2] === "")) return null;
  const [first, last] = [match[1] as string, match[2] as string];
  const start = first === "" ? Math.max(0, size - Number(last)) : Number(first);
  const end = first === "" || last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (start > end || start >= size) return "unsatisfiable";
  return { start, end };
}

/** The answer's headers: type, caching validators and how a browser should show it. */
function fileHeaders(found: PresentGuideFile): Headers {
  const type = contentTypeOf(found.absolute);
  const name = downloadName(found.entry.path);
  return new Headers({
    "content-type": type,
    "x-content-type-options": "nosniff",
    // Installers get a new name with each version, so a day of caching never serves a stale one.
    "cache-control": "public, max-age=86400",
    etag: `"${found.size.toString(16)}-${Math.floor(found.mtimeMs).toString(16)}"`,
    "last-modified": new Date(found.mtimeMs).toUTCString(),
    "content-disposition": type.startsWith("image/") ? "inline" : `attachment; filename="${name}"`,
    "content-security-policy": "default-src 'none'; sandbox",
    "accept-ranges": "bytes",
  });
}

function notModified(request: Request, headers: Headers, mtimeMs: number): boolean {
  const tags = request.headers.get("if-none-match");
  if (tags !== null)
    return tags.split(",").some((tag) => tag.trim() === headers.get("etag") || tag.trim() === "*");
  const since = Date.parse(request.headers.get("if-modified-since") ?? "");
  return Number.isFinite(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}

function serveGuideFile(app: AppContext, request: Request): Response {
  const path = requestedPath(request);
  const found = path === null ? null : guideFilesOf(app).find(path);
  if (!found) return notFound();
  const headers = fileHeaders(found);
  if (notModified(request, headers, found.mtimeMs)) return new Response(null, { status: 304, headers });
  const file = Bun.file(found.absolute);
  const range = byteRange(request.headers.get("range"), found.size);
  if (range === "unsatisfiable") {
    headers.set("content-range", `bytes */${found.size}`);
    return new Response(null, { status: 416, headers });
  }
  if (range) {
    headers.set("content-range", `bytes ${range.start}-${range.end}/${found.size}`);
    headers.set("content-length", String(range.end - range.start + 1));
    return new Response(file.slice(range.start, range.end + 1), { status: 206, headers });
  }
  // For HEAD, Bun sends the file's headers (its length included) and no body.
  return new Response(file, { headers });
}

export function guideRoutes(app: AppContext) {
  return new Elysia()
    .get(`${GUIDE_PREFIX}*`, ({ request }) => serveGuideFile(app, request))
    .head(`${GUIDE_PREFIX}*`, ({ request }) => serveGuideFile(app, request));
}

export const guideCalls = [
  defineCall({
    path: "/api/guide/files",
    access: "public",
    input: emptyInput,
    handle: (ctx) => guideFilesOf(ctx.app).presentPaths(),
  }),
];
