import { resolve } from "node:path";
import type { Command } from "commander";
import { maskUrl } from "../src/db/db.ts";
import { migrations } from "../src/embedded.ts";
import { PgToolError, restorePostgres } from "../src/ops/pg-dump.ts";
import { RestoreRefused, restoreDatabase } from "../src/ops/restore.ts";
import { databaseUrl, dataDirOption, dataOption, die } from "./shared.ts";

/** With --database-url: a pg_dump archive through pg_restore. */
async function restoreIntoPostgres(url: string, file: string): Promise<void> {
  try {
    await restorePostgres(url, file);
  } catch (error) {
    die(error instanceof PgToolError ? error.message : `restore failed: ${(error as Error).message}`);
  }
  console.log(`restored ${file} into ${maskUrl(url)}`);
}

export function registerRestoreCommand(program: Command) {
  program
    .command("restore")
    .description(
      "replace the database with a backup: checks its integrity, refuses while a server runs on the " +
        "data directory, keeps the old database as ferry.db.bak-<time>",
    )
    .argument(
      "<file>",
      "a backup written by `ferry backup` or the scheduled backups; with --database-url, a pg_dump custom-format archive",
    )
    .addOption(dataOption())
    .action(async (file: string, options: { data?: string }) => {
      const url = databaseUrl();
      if (url) return await restoreIntoPostgres(url, file);
      const dataDir = resolve(dataDirOption(options.data));
      try {
        const { version, kept } = await restoreDatabase(resolve(file), dataDir, migrations);
        console.log(
          `restored ${file} (schema version ${version}) into ${dataDir}/ferry.db` +
            (kept ? `; the old database is kept as ${kept}` : ""),
        );
      } catch (error) {
        if (error instanceof RestoreRefused) die(error.message);
        die(`restore failed: ${(error as Error).message}`);
      }
    });
}
