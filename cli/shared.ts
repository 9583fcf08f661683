import type { ZodType, z } from "zod";
import { type AppContext, createContext } from "../src/context.ts";
import { openDatabase } from "../src/db/db.ts";
import { migrate } from "../src/db/migrate.ts";
import { migrations } from "../src/embedded.ts";

export const DEFAULT_DATA_DIR = "./data";

export function dataDirOption(value: string | undefined): string {
  return value ?? process.env.FERRY_DATA ?? DEFAULT_DATA_DIR;
}

/** Opens the database of a data directory for an operator command, applying pending migrations. */
export function openContext(dataDir: string): AppContext {
  const db = openDatabase(`${dataDir}/ferry.db`);
  migrate(db, migrations);
  return createContext(db);
}

/** A one-line error on stderr and exit code 1 (DESIGN §4). */
export function die(message: string): never {
  console.error(`error: ${message}`);
  process.exit(1);
}

export function printJsonOr<T>(json: boolean, value: T, text: (value: T) => string) {
  console.log(json ? JSON.stringify(value, null, 2) : text(value));
}

/** Opens the data directory, runs the command, turns any failure into the one-line error, closes. */
export function withContext<T>(dataDir: string | undefined, run: (ctx: AppContext) => T): T {
  const ctx = openContext(dataDirOption(dataDir));
  try {
    return run(ctx);
  } catch (error) {
    die((error as Error).message);
  } finally {
    ctx.db.close();
  }
}

/** withContext for commands that wait on the network (the database stays open until they finish). */
export async function withContextAsync<T>(
  dataDir: string | undefined,
  run: (ctx: AppContext) => Promise<T>,
): Promise<T> {
  const ctx = openContext(dataDirOption(dataDir));
  try {
    return await run(ctx);
  } catch (error) {
    die((error as Error).message);
  } finally {
    ctx.db.close();
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
