/**
 * The guide files an operator puts in `<data>/guide/` (issue 17 §3): which of the catalog's files
 * are there, and the one safe way from a requested path to a file on disk. Nothing outside the
 * catalog is ever served, whatever else the folder holds.
 */
import { realpathSync, statSync } from "node:fs";
import { extname, join, posix, sep } from "node:path";
import type { AppContext } from "../../context.ts";
import { GUIDES, type GuideFile, type GuideInfo } from "./catalog.ts";

/**
 * A catalog path: lowercase segments of letters, digits and `._-` joined by single `/`, none
 * starting with a dot (so no `..`, no hidden files), no leading `/`, no backslash, no NUL.
 */
export const GUIDE_PATH_PATTERN = /^[a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)*$/;

export const isGuidePath = (path: string) =>
  path.length <= 200 && GUIDE_PATH_PATTERN.test(path) && !path.includes("..");

/** Content types by extension; any other extension is sent as a download of unknown type. */
const CONTENT_TYPES: Record<string, string> = {
  ".exe": "application/vnd.microsoft.portable-executable",
  ".msi": "application/x-msi",
  ".apk": "application/vnd.android.package-archive",
  ".dmg": "application/x-apple-diskimage",
  ".pkg": "application/octet-stream",
  ".zip": "application/zip",
  ".7z": "application/x-7z-compressed",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".gif": "image/gif",
};

export const contentTypeOf = (path: string) => CONTENT_TYPES[extname(path)] ?? "application/octet-stream";

/** A catalog file that is present: where it really is and what it is now. */
export interface PresentGuideFile {
  entry: GuideFile;
  /** The resolved path (symlinks followed), inside the guide folder. */
  absolute: string;
  size: number;
  mtimeMs: number;
}

export interface GuideFileStatus extends GuideFile {
  present: boolean;
  /** Bytes; 0 when missing. */
  size: number;
}

export interface GuideStatus {
  route: string;
  client: string;
  platform: string;
  files: GuideFileStatus[];
}

/** How long the list of present files is reused: a page view must not stat every file. */
const PRESENT_TTL_MS = 5_000;

export class GuideFiles {
  private readonly entries: Map<string, GuideFile>;
  private present: { at: number; paths: string[] } | null = null;

  constructor(
    readonly dir: string,
    private readonly catalog: readonly GuideInfo[] = GUIDES,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new Map(catalog.flatMap((guide) => guide.files.map((file) => [file.path, file])));
  }

  /**
   * The catalog file at `path` (already URL-decoded) when it is present as a regular file whose
   * real location is inside the folder; null for anything else (a symlink out is refused).
   */
  find(path: string): PresentGuideFile | null {
    const entry = this.entries.get(path);
    if (!entry || !isGuidePath(path)) return null;
    try {
      const root = realpathSync(this.dir);
      const absolute = realpathSync(join(root, ...path.split("/")));
      if (!absolute.startsWith(root + sep)) return null;
      const stat = statSync(absolute);
      if (!stat.isFile()) return null;
      return { entry, absolute, size: stat.size, mtimeMs: stat.mtimeMs };
    } catch {
      return null;
    }
  }

  /** The catalog paths present now, in catalog order (reused for a few seconds). */
  presentPaths(): string[] {
    const now = this.now();
    if (this.present && now - this.present.at < PRESENT_TTL_MS) return this.present.paths;
    const paths = [...this.entries.keys()].filter((path) => this.find(path) !== null);
    this.present = { at: now, paths };
    return paths;
  }

  /** Every guide with each file it expects, present or missing (read now, for `ferry guide list`). */
  status(): GuideStatus[] {
    return this.catalog.map((guide) => ({
      route: guide.route,
      client: guide.client,
      platform: guide.platform,
      files: guide.files.map((file) => {
        const found = this.find(file.path);
        return { ...file, present: found !== null, size: found?.size ?? 0 };
      }),
    }));
  }
}

const byApp = new WeakMap<AppContext, GuideFiles>();

/** The app's guide files over the real catalog, one per app so its short cache is shared. */
export function guideFilesOf(app: AppContext): GuideFiles {
  let files = byApp.get(app);
  if (!files) {
    files = new GuideFiles(app.guideDir);
    byApp.set(app, files);
  }
  return files;
}

/** The file name a download is saved as. */
export const downloadName = (path: string) => posix.basename(path);
