import { resolve } from "node:path";
import type { Command } from "commander";
import { migrations } from "../src/embedded.ts";
import { RestoreRefused, restoreDatabase } from "../src/ops/restore.ts";
import { dataDirOption, dataOption, die } from "./shared.ts";

export function registerRestoreCommand(program: Command) {
  program
    .command("restore")
    .description(
      "replace the database with a backup: checks its integrity, refuses while a server runs on the " +
        "data directory, keeps the old database as ferry.db.bak-<time>",
    )
    .argument("<file>", "a backup written by `ferry backup` or the scheduled backups")
    .addOption(dataOption())
    .action(async (file: string, options: { data?: string }) => {
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
