import { existsSync } from "node:fs";
import { Command, CommanderError } from "commander";
import pkg from "../package.json" with { type: "json" };
import { type Db, openDatabase } from "../src/db/db.ts";
import { DatabaseTooNewError, migrationStatus } from "../src/db/migrate.ts";
import { migrations } from "../src/embedded.ts";
import { startServer } from "../src/server.ts";
import { registerCommerceCommands } from "./commerce.ts";
import { registerNetworkCommands } from "./network.ts";
import { dataDirOption, die, printJsonOr } from "./shared.ts";
import { registerTrafficCommands } from "./traffic.ts";
import { registerUserCommands } from "./user.ts";

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) die(`not a port number: ${value}`);
  return port;
}

function withDatabase<T>(file: string, use: (db: Db) => T): T {
  const db = openDatabase(file);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

export function buildProgram(): Command {
  const program = new Command("ferry")
    .description("飞渡 Ferry: proxy subscription service in one executable")
    .version(pkg.version, "-v, --version", "print the version")
    .exitOverride();

  program
    .command("serve")
    .description("run the web server (SPA, API, subscriptions)")
    .option("--host <host>", "address to listen on (env FERRY_HOST)", process.env.FERRY_HOST ?? "0.0.0.0")
    .option("--port <port>", "port to listen on (env FERRY_PORT)", process.env.FERRY_PORT ?? "3000")
    .option("--data <dir>", "data directory holding ferry.db (env FERRY_DATA)")
    .option("--trust-proxy", "trust X-Forwarded-For/-Proto from a reverse proxy (env FERRY_TRUST_PROXY=1)")
    .action((options: { host: string; port: string; data?: string; trustProxy?: boolean }) => {
      const dataDir = dataDirOption(options.data);
      try {
        const server = startServer({
          dataDir,
          host: options.host,
          port: parsePort(options.port),
          trustProxy: options.trustProxy ?? process.env.FERRY_TRUST_PROXY === "1",
        });
        console.log(`ferry ${pkg.version} listening on ${options.host}:${server.port}, data in ${dataDir}`);
        const shutdown = () => void server.stop().then(() => process.exit(0));
        process.on("SIGINT", shutdown);
        process.on("SIGTERM", shutdown);
      } catch (error) {
        if (error instanceof DatabaseTooNewError) die(error.message);
        die(`cannot start: ${(error as Error).message}`);
      }
    });

  registerUserCommands(program);
  registerCommerceCommands(program);
  registerNetworkCommands(program);
  registerTrafficCommands(program);

  const migrate = program.command("migrate").description("database schema migrations");
  migrate
    .command("status")
    .description("list migrations and whether each is applied")
    .option("--data <dir>", "data directory (env FERRY_DATA)")
    .option("--json", "print as JSON")
    .action((options: { data?: string; json?: boolean }) => {
      const file = `${dataDirOption(options.data)}/ferry.db`;
      // Asking about a database that does not exist yet must not create one.
      const states = existsSync(file)
        ? withDatabase(file, (db) => migrationStatus(db, migrations))
        : migrations.map((m) => ({ version: m.version, name: m.name, appliedTime: null }));
      printJsonOr(options.json ?? false, states, (rows) =>
        rows
          .map(
            (m) =>
              `${String(m.version).padStart(3, "0")}_${m.name}  ${m.appliedTime ? `applied ${new Date(m.appliedTime).toISOString()}` : "pending"}`,
          )
          .join("\n"),
      );
    });

  program
    .command("backup")
    .description("write a consistent copy of the live database (safe while the server runs)")
    .argument("<file>", "where to write the copy; must not exist")
    .option("--data <dir>", "data directory (env FERRY_DATA)")
    .action(async (file: string, options: { data?: string }) => {
      if (await Bun.file(file).exists()) die(`refusing to overwrite ${file}`);
      const source = `${dataDirOption(options.data)}/ferry.db`;
      // Opening a missing file would create an empty database and "back up" that.
      if (!(await Bun.file(source).exists())) die(`no database at ${source}`);
      const db = openDatabase(source);
      try {
        db.query("VACUUM INTO ?").run(file);
      } catch (error) {
        die(`backup failed: ${(error as Error).message}`);
      } finally {
        db.close();
      }
      console.log(`backup written to ${file}`);
    });

  return program;
}

export async function runCli(argv: string[]) {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode);
    die((error as Error).message);
  }
}
