import type { Command } from "commander";
import { DatabaseUrlError, type Db } from "../src/db/db.ts";
import { migrations } from "../src/embedded.ts";
import {
  CopyRefused,
  type CopyResult,
  copyDatabase,
  formatComparison,
  legacyUploadsDir,
  openEndpoint,
  type ProgressReport,
  parseEndpoint,
  progressPrinter,
} from "../src/ops/db-copy.ts";
import { dataDirOption, dataOption, die } from "./shared.ts";

/** Opens both sides of a copy, runs it, prints the comparison; exit 1 when the copy differs from its source. */
async function runCopy(fromValue: string, toValue: string): Promise<void> {
  const [from, to] = [parseEndpoint(fromValue), parseEndpoint(toValue)];
  if (from.engine === to.engine)
    die("--from and --to must be one SQLite database and one PostgreSQL database");
  const opened: Db[] = [];
  let result: CopyResult;
  try {
    opened.push(await openEndpoint(from, "source"));
    opened.push(await openEndpoint(to, "target"));
    const [source, target] = opened as [Db, Db];
    const printer = progressPrinter();
    let announced = false;
    const onProgress: ProgressReport = (table, copied, total) => {
      if (!announced) console.error(`copying ${source.describe} → ${target.describe}`);
      announced = true;
      printer(table, copied, total);
    };
    result = await copyDatabase(source, target, {
      migrations,
      onProgress,
      legacyUploadsDir: legacyUploadsDir(from),
    });
  } catch (error) {
    if (error instanceof CopyRefused || error instanceof DatabaseUrlError) die(error.message);
    die(`copy failed: ${(error as Error).message}`);
  } finally {
    for (const db of opened) await db.close();
  }
  const accounts = result.tables.find((table) => table.name === "users")?.rows ?? 0;
  console.log(formatComparison(result.comparison, accounts));
  if (!result.comparison.equal) process.exit(1);
}

export function registerDbCommands(program: Command) {
  const db = program.command("db").description("move the database between SQLite and PostgreSQL");
  db.command("copy")
    .description(
      "copy a stopped server's database into an empty one on the other engine, then compare row counts " +
        "and ledger sums (traffic, wallet, time packages) per table and per account",
    )
    .option(
      "--from <source>",
      "a data directory (its ferry.db), sqlite:<file>, or postgres://…; default: --data",
    )
    .addOption(dataOption())
    .requiredOption("--to <target>", "postgres://… (an empty database), or sqlite:<file> / a data directory")
    .action(
      async (options: { from?: string; to: string; data?: string }) =>
        await runCopy(options.from ?? dataDirOption(options.data), options.to),
    );
}
