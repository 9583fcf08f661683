import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `<data>/ferry.pid`: written by `ferry serve` while it holds `<data>/ferry.db`, so that `ferry
 * restore` can refuse to replace a database under a running server. SQLite's own locks cannot
 * tell: in WAL mode an idle connection holds no lock another process would trip over.
 */
export const pidFilePath = (dataDir: string) => join(dataDir, "ferry.pid");

/** Writes this process's pid; answers the function that removes it again (only if still ours). */
export function claimPidFile(dataDir: string): () => void {
  const file = pidFilePath(dataDir);
  // On PostgreSQL no database file has created the data directory (owner only, as for ferry.db).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    if (runningPid(file) === process.pid) rmSync(file, { force: true });
  };
}

/** The pid of a live server holding the data directory, or null (no pid file, or a stale one of a dead process). */
export function runningServerPid(dataDir: string): number | null {
  return runningPid(pidFilePath(dataDir));
}

function runningPid(file: string): number | null {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return processAlive(pid) ? pid : null;
}

/** Whether a process with this pid runs on this machine (under any user). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user (the service account).
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
