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
