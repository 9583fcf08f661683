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

/** The SPA files compiled into this build, ready to serve (bytes and ETag computed once). */
export function loadWebFiles(): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  for (const file of webFiles) {
    const bytes = new Uint8Array(
      file.encoding === "utf8" ? new TextEncoder().encode(file.body) : Buffer.from(file.body, "base64"),
    );
    const etag = `"${Bun.hash(bytes).toString(36)}"`;
    let gzip: Uint8Array<ArrayBuffer> | undefined;
    files.set(file.path, {
      type: file.type,
      bytes,
      etag,
      gzip: () => {
        gzip ??= Bun.gzipSync(bytes);
        return gzip;
      },
    });
  }
  return files;
}
