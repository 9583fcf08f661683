/**
 * Self-upgrade of the node agent (the agent is the ferry executable): download the new
 * executable, check its SHA-256, write it next to the running one and rename it over it. The
 * caller then exits so the service manager starts the new file.
 */
import { chmodSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface UpgradeRequest {
  url: string;
  sha256: string;
  version: string;
}

/** An upgrade that did not happen, with the HTTP status the control port answers. */
export class UpgradeError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const DOWNLOAD_TIMEOUT_MS = 300_000;

/** The request body, checked; relative URLs are taken against the panel's address. */
export function parseUpgradeRequest(body: unknown, panelUrl: string): UpgradeRequest {
  if (!body || typeof body !== "object") throw new UpgradeError(400, "body must be a JSON object");
  const { url, sha256, version } = body as Record<string, unknown>;
  if (typeof url !== "string" || url === "") throw new UpgradeError(400, "url is required");
  if (typeof sha256 !== "string" || !/^[0-9a-fA-F]{64}$/.test(sha256)) {
    throw new UpgradeError(400, "sha256 must be 64 hex digits");
  }
  let absolute: URL;
  try {
    absolute = new URL(url, panelUrl);
  } catch {
    throw new UpgradeError(400, `not a URL: ${url}`);
  }
  if (absolute.protocol !== "http:" && absolute.protocol !== "https:") {
    throw new UpgradeError(400, `not an http(s) URL: ${url}`);
  }
  return {
    url: absolute.href,
    sha256: sha256.toLowerCase(),
    version: typeof version === "string" ? version.slice(0, 40) : "",
  };
}

/**
 * Downloads and verifies the executable, then replaces `exe` with it. Nothing is replaced when
 * the download fails or the digest differs.
 */
export async function replaceExecutable(request: UpgradeRequest, exe: string): Promise<void> {
  let bytes: Uint8Array;
  try {
    const response = await fetch(request.url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    throw new UpgradeError(502, `download failed: ${(error as Error).message}`);
  }
  const digest = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  if (digest !== request.sha256) throw new UpgradeError(400, "sha256 mismatch");
  // Written in the executable's own directory so the rename is atomic (same file system).
  const staged = join(dirname(exe), `.${basename(exe)}.upgrade-${process.pid}`);
  try {
    writeFileSync(staged, bytes);
    chmodSync(staged, 0o755);
    renameSync(staged, exe);
  } catch (error) {
    rmSync(staged, { force: true });
    throw new UpgradeError(500, `cannot replace ${exe}: ${(error as Error).message}`);
  }
}

/** True when running as the compiled ferry executable (not `bun src/main.ts`). */
export function isCompiledExecutable(): boolean {
  return Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:\\~BUN\\");
}
