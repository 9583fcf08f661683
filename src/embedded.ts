import { parseMigrationFiles } from "./db/migrate.ts";
import { migrationFiles, webFiles } from "./generated/embed.ts";

/** The migrations compiled into this build. */
export const migrations = parseMigrationFiles(migrationFiles);

export interface WebFile {
  type: string;
  bytes: Uint8Array<ArrayBuffer>;
  etag: string;
  /** Compressed on first use, not at start-up (the SPA bundle takes ~10 ms to gzip). */
  gzip(): Uint8Array<ArrayBuffer>;
}

/**
 * The SPA files compiled into this build, ready to serve. Bytes, ETag and gzip are each computed
 * once, on a file's first request: an idle server holds no copy of the bundle (issue 18).
 */
export function loadWebFiles(): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  for (const file of webFiles) {
    let bytes: Uint8Array<ArrayBuffer> | undefined;
    let etag: string | undefined;
    let gzip: Uint8Array<ArrayBuffer> | undefined;
    files.set(file.path, {
      type: file.type,
      get bytes() {
        bytes ??= new Uint8Array(
          file.encoding === "utf8" ? new TextEncoder().encode(file.body) : Buffer.from(file.body, "base64"),
        );
        return bytes;
      },
      get etag() {
        etag ??= `"${Bun.hash(this.bytes).toString(36)}"`;
        return etag;
      },
      gzip() {
        gzip ??= Bun.gzipSync(this.bytes);
        return gzip;
      },
    });
  }
  return files;
}
