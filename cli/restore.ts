import { resolve } from "node:path";
import type { Command } from "commander";
import { maskUrl } from "../src/db/db.ts";
import { migrations } from "../src/embedded.ts";
import { PgToolError, restorePostgres } from "../src/ops/pg-dump.ts";
import { RestoreRefused, refuseWhileServing, restoreDatabase } from "../src/ops/restore.ts";
import {
  allowPrivateOption,
  fetchFromS3,
  PASSPHRASE_ENV,
  privateAllowed,
  privateTempDir,
  removeTempDir,
  unsealIfSealed,
} from "./offbox.ts";
import { databaseUrl, dataDirOption, dataOption, die } from "./shared.ts";

/** With --database-url: a pg_dump archive through pg_restore. */
async function restoreIntoPostgres(url: string, file: string, shownAs: string): Promise<void> {
  try {
    await restorePostgres(url, file);
  } catch (error) {
    die(error instanceof PgToolError ? error.message : `restore failed: ${(error as Error).message}`);
  }
  console.log(`restored ${shownAs} into ${maskUrl(url)}`);
}

/** The one restore of a backup file, local or fetched from S3: checked, then swapped in. */
async function restoreFile(file: string, dataDir: string, shownAs: string): Promise<void> {
  const url = databaseUrl();
  if (url) return await restoreIntoPostgres(url, file, shownAs);
  try {
    const { version, kept } = await restoreDatabase(resolve(file), dataDir, migrations);
    console.log(
      `restored ${shownAs} (schema version ${version}) into ${dataDir}/ferry.db` +
        (kept ? `; the old database is kept as ${kept}` : ""),
    );
  } catch (error) {
    if (error instanceof RestoreRefused) die(error.message.replaceAll(resolve(file), shownAs));
    die(`restore failed: ${(error as Error).message}`);
  }
}

interface RestoreFlags {
  data?: string;
  from?: string;
  passphrase?: string;
  allowPrivateUrls?: boolean;
}

export function registerRestoreCommand(program: Command) {
  program
    .command("restore")
    .description(
      "replace the database with a backup: checks its integrity, refuses while a server runs on the " +
        "data directory, keeps the old database as ferry.db.bak-<time>",
    )
    .argument(
      "[file]",
      "a backup written by `ferry backup` or the scheduled backups (an off-box .ferrybak file too); " +
        "with --database-url, a pg_dump custom-format archive",
    )
    .addOption(dataOption())
    .option(
      "--from <s3-url>",
      "restore from s3://bucket/key, an off-box copy (S3 settings, or S3_* env on a new box)",
    )
    .option(
      "--passphrase <text>",
      `the passphrase of an encrypted off-box copy (default: the setting backup_passphrase; env ${PASSPHRASE_ENV} keeps it off the command line)`,
    )
    .addOption(allowPrivateOption())
    .action(async (file: string | undefined, options: RestoreFlags) => {
      if ((file === undefined) === (options.from === undefined))
        die("give a backup file or --from s3://bucket/key");
      const dataDir = resolve(dataDirOption(options.data));
      // Before a download that may take minutes: a server running on the directory refuses it anyway.
      if (!databaseUrl()) {
        try {
          refuseWhileServing(dataDir);
        } catch (error) {
          die((error as Error).message);
        }
      }
      const dir = privateTempDir();
      // die() exits at once: the downloaded and opened copies go with the process however it ends.
      process.on("exit", () => removeTempDir(dir));
      try {
        const passphrase = options.passphrase ?? process.env[PASSPHRASE_ENV] ?? "";
        const backup = options.from
          ? await fetchFromS3(options.from, dataDir, dir, {
              passphrase: options.passphrase,
              allowPrivate: privateAllowed(options.allowPrivateUrls),
            })
          : await unsealIfSealed(file as string, dir, passphrase);
        await restoreFile(backup, dataDir, options.from ?? (file as string));
      } finally {
        removeTempDir(dir);
      }
    });
}
