import { Option } from "commander";
import type { ZodType, z } from "zod";
import { type AppContext, createContext } from "../src/context.ts";
import { DatabaseUrlError, openDatabase } from "../src/db/db.ts";
import { migrate } from "../src/db/migrate.ts";
import { migrations } from "../src/embedded.ts";
import { formatInstant } from "../src/lib/time.ts";
import { actAsCli } from "../src/modules/audit/service.ts";
// Installs the Chinese validation messages the server gives, for parseOrDie (issue 12).
import "../src/lib/zod-messages.ts";
import { PASSWORD_MIN } from "../src/modules/user/schema.ts";

export const DEFAULT_DATA_DIR = "./data";

export function dataDirOption(value: string | undefined): string {
  return value ?? process.env.FERRY_DATA ?? DEFAULT_DATA_DIR;
}

/** `--data <dir>`, which every command that opens the database takes (read by dataDirOption). */
export const dataOption = () => new Option("--data <dir>", "data directory (env FERRY_DATA)");

/** `--database-url`, a program option every command accepts (env FERRY_DATABASE_URL). */
export const DATABASE_URL_ENV = "FERRY_DATABASE_URL";
export const databaseUrlOption = () =>
  new Option(
    "--database-url <url>",
    `postgres://user:pass@host:5432/db to use PostgreSQL (env ${DATABASE_URL_ENV})`,
  );

/** The PostgreSQL URL an operator chose, or undefined for the SQLite file. */
export function databaseUrl(): string | undefined {
  return process.env[DATABASE_URL_ENV] || undefined;
}

/**
 * Opens the database of a data directory (or --database-url) for an operator command, applying
 * pending migrations. A bad URL or a refused connection is one line and exit 1.
 */
export async function openContext(dataDir: string): Promise<AppContext> {
  actAsCli();
  try {
    const db = await openDatabase({ url: databaseUrl(), file: `${dataDir}/ferry.db` });
    await migrate(db, migrations);
    return createContext(db, { dataDir });
  } catch (error) {
    if (error instanceof DatabaseUrlError) die(error.message);
    throw error;
  }
}

/** How a command prints an instant: "2026-11-27 20:15:03 +08:00", in the business timezone (setting `timezone`). */
export type PrintTime = (ms: number) => string;

export async function timePrinter(ctx: AppContext): Promise<PrintTime> {
  const timeZone = await ctx.settings.get("timezone");
  return (ms) => formatInstant(ms, timeZone);
}

/** A one-line error on stderr and exit code 1 (DESIGN §4). */
export function die(message: string): never {
  console.error(`error: ${message}`);
  process.exit(1);
}

export function printJsonOr<T>(json: boolean, value: T, text: (value: T) => string) {
  console.log(json ? JSON.stringify(value, null, 2) : text(value));
}

/** Columns padded to their widest cell (CJK characters count as two). */
export function textTable(rows: string[][]): string {
  const width = (text: string) => [...text].reduce((sum, c) => sum + (c.charCodeAt(0) > 0x2e80 ? 2 : 1), 0);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => width(row[i] ?? "")))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - width(cell))))
        .join("  "),
    )
    .join("\n");
}

/** A list as JSON, or one line per item, or `empty` ("no tickets") when there is none. */
export function printListOr<T>(json: boolean, list: T[], line: (item: T) => string, empty: string) {
  printJsonOr(json, list, () => (list.length ? list.map((item) => line(item)).join("\n") : empty));
}

/** Opens the data directory, runs the command, turns any failure into the one-line error, closes. */
export async function withContext<T>(
  dataDir: string | undefined,
  run: (ctx: AppContext) => T | Promise<T>,
): Promise<T> {
  const ctx = await openContext(dataDirOption(dataDir));
  try {
    return await run(ctx);
  } catch (error) {
    die((error as Error).message);
  } finally {
    await ctx.db.close();
  }
}

/** withContext for commands that wait on the network (the database stays open until they finish). */
export async function withContextAsync<T>(
  dataDir: string | undefined,
  run: (ctx: AppContext) => Promise<T>,
): Promise<T> {
  const ctx = await openContext(dataDirOption(dataDir));
  try {
    return await run(ctx);
  } catch (error) {
    die((error as Error).message);
  } finally {
    await ctx.db.close();
  }
}

/** A numeric option's value; undefined when the option was not given. */
export function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number)) die(`${name} must be a number: ${value}`);
  return number;
}

/**
 * Validates with the schema the routes use; the first problem becomes the one-line error, named
 * by the option it came from (`flags` maps schema paths to option names) or else by its path.
 */
export function parseOrDie<S extends ZodType>(
  schema: S,
  value: unknown,
  flags: Record<string, string> = {},
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.join(".") ?? "";
  die(`${flags[path] ?? (path || "input")}: ${issue?.message}`);
}

/** The password, or the one-line error when it is shorter than every account's minimum. */
function checkedPassword(password: string): string {
  if (password.length < PASSWORD_MIN) die(`password must be at least ${PASSWORD_MIN} characters`);
  return password;
}

/**
 * A new password, never from argv (where `ps` shows it to every user of the machine): typed at the
 * terminal without echo and asked twice, or, when stdin is not a terminal, its first line.
 */
export async function readNewPassword(): Promise<string> {
  if (!process.stdin.isTTY) return checkedPassword(await firstStdinLine());
  const password = checkedPassword(await askHidden("new password: "));
  if ((await askHidden("the same again: ")) !== password) die("the two passwords differ");
  return password;
}

async function firstStdinLine(): Promise<string> {
  const reader = Bun.stdin.stream().getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  const line = text.split("\n")[0]?.replace(/\r$/, "") ?? "";
  if (line === "") die("no password on stdin: type it at a terminal, or pipe it in as the first line");
  return line;
}

/** One line typed at the terminal with echo off (raw mode); Ctrl-C or Ctrl-D gives up. */
function askHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Echo goes off before the prompt shows, so nothing typed after seeing it is echoed.
  stdin.setRawMode(true);
  stdin.resume();
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    const typed: string[] = [];
    const done = () => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n") {
          done();
          resolve(typed.join(""));
          return;
        }
        if (char === "\u0003" || char === "\u0004") {
          done();
          die("cancelled");
        }
        if (char === "\u007f" || char === "\b") typed.pop();
        else typed.push(char);
      }
    };
    stdin.on("data", onData);
  });
}
