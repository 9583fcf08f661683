/**
 * Backups on PostgreSQL (issue 27 item 6): `ferry backup`, the scheduled backups and `ferry restore`
 * run PostgreSQL's own tools, `pg_dump --format=custom` and `pg_restore`, found on the PATH. The
 * password travels in PGPASSWORD, not on the command line, where `ps` would show it.
 */
import { closeSync, openSync, readSync, renameSync, rmSync } from "node:fs";
import { maskUrl } from "../db/db.ts";

/** Why a PostgreSQL backup or restore could not run; the CLI prints the message as its one line. */
export class PgToolError extends Error {
  override name = "PgToolError";
}

/** A pg_dump custom-format archive starts with these bytes. */
const PG_DUMP_MAGIC = "PGDMP";

function tool(name: "pg_dump" | "pg_restore"): string {
  const path = Bun.which(name);
  if (!path) {
    throw new PgToolError(
      `${name} is not on the PATH: install PostgreSQL's client tools of the server's version (Debian: apt-get install postgresql-client)`,
    );
  }
  return path;
}

/** The URL without its password, and the environment that carries the password instead. */
function connection(url: string): { url: string; env: Record<string, string | undefined> } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = "";
  return { url: parsed.toString(), env: password ? { ...process.env, PGPASSWORD: password } : process.env };
}

async function run(
  argv: string[],
  env: Record<string, string | undefined>,
  what: string,
  signal?: AbortSignal,
): Promise<void> {
  const proc = Bun.spawn(argv, { env, stdin: "ignore", stdout: "ignore", stderr: "pipe", signal });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) {
    const reason = stderr.trim().split("\n").filter(Boolean).at(-1) ?? `exit code ${code}`;
    throw new PgToolError(`${what}: ${reason}`);
  }
}

/**
 * `pg_dump --format=custom` of the database at `url` into `file` (which must not exist), written as
 * `<file>.partial` and renamed when complete, owner-only as the SQLite backups are.
 */
export async function dumpPostgres(url: string, file: string, signal?: AbortSignal): Promise<void> {
  const pgDump = tool("pg_dump");
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  closeSync(openSync(partial, "wx", 0o600));
  const target = connection(url);
  try {
    await run(
      [pgDump, "--format=custom", "--file", partial, target.url],
      target.env,
      `pg_dump of ${maskUrl(url)} failed`,
      signal,
    );
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

/** Whether `file` is a pg_dump custom-format archive (its first bytes are "PGDMP"). */
export function isPgDumpArchive(file: string): boolean {
  const fd = openSync(file, "r");
  try {
    const header = Buffer.alloc(PG_DUMP_MAGIC.length);
    const read = readSync(fd, header, 0, header.length, 0);
    return read === header.length && header.toString("latin1") === PG_DUMP_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces the database at `url` with a pg_dump archive: `pg_restore --clean --if-exists
 * --no-owner` in one transaction, so a restore that fails half-way leaves the database as it was.
 */
export async function restorePostgres(url: string, file: string): Promise<void> {
  if (!(await Bun.file(file).exists())) throw new PgToolError(`no such file: ${file}`);
  if (!isPgDumpArchive(file)) {
    throw new PgToolError(
      `${file} is not a pg_dump archive (custom format, as ferry backup writes with --database-url)`,
    );
  }
  const pgRestore = tool("pg_restore");
  const target = connection(url);
  await run(
    [pgRestore, "--clean", "--if-exists", "--no-owner", "--single-transaction", "--dbname", target.url, file],
    target.env,
    `pg_restore into ${maskUrl(url)} failed`,
  );
}
