import { existsSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, CommanderError } from "commander";
import pkg from "../package.json" with { type: "json" };
import { DatabaseUrlError, type Db, maskUrl, openDatabase, openSqlite, PostgresDb } from "../src/db/db.ts";
import { DatabaseTooNewError, migrationStatus } from "../src/db/migrate.ts";
import { migrations } from "../src/embedded.ts";
import { ALLOW_PRIVATE_FLAG } from "../src/lib/outbound.ts";
import { formatInstant } from "../src/lib/time.ts";
import { shellQuote } from "../src/modules/node-api/install.ts";
import { settingsSchema, siteOrigin } from "../src/modules/settings/schema.ts";
import { SettingsStore } from "../src/modules/settings/service.ts";
import { hasAdmin } from "../src/modules/user/service.ts";
import { isCompiledExecutable } from "../src/node-program/upgrade.ts";
import { backupDatabase } from "../src/ops/backup.ts";
import { dumpPostgres, PgToolError } from "../src/ops/pg-dump.ts";
import { fileTime } from "../src/ops/restore.ts";
import { paymentsInForce } from "../src/payments/registry.ts";
import { LOOPBACK_PROXIES, parseTrustedProxies } from "../src/rpc/forwarded.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { registerAgencyCommands } from "./agency.ts";
import { registerAuditCommands } from "./audit.ts";
import { registerChannelCommands } from "./channel.ts";
import { registerCommerceCommands } from "./commerce.ts";
import { registerCouponCommands } from "./coupon.ts";
import { registerDbCommands } from "./db.ts";
import { registerGuideCommands } from "./guide.ts";
import { registerNetworkCommands } from "./network.ts";
import { allowPrivateOption, privateAllowed, privateTempDir, removeTempDir, uploadToS3 } from "./offbox.ts";
import { registerPrizeCommands } from "./prize.ts";
import { registerReplicaCommands } from "./replicas.ts";
import { registerRestoreCommand } from "./restore.ts";
import {
  DATABASE_URL_ENV,
  databaseUrl,
  databaseUrlOption,
  dataDirOption,
  dataOption,
  die,
  printJsonOr,
} from "./shared.ts";
import { registerStatsCommands } from "./stats.ts";
import { registerTelegramCommands } from "./telegram.ts";
import { registerTicketCommands } from "./ticket.ts";
import { registerTrafficCommands } from "./traffic.ts";
import { registerUserCommands } from "./user.ts";
import { registerWithdrawCommands } from "./withdraw.ts";

/** `ferry backup`'s copy: pg_dump with --database-url, else VACUUM INTO of the data directory's ferry.db. */
async function writeBackup(file: string, data: string | undefined, announce: boolean): Promise<void> {
  if (await Bun.file(file).exists()) die(`refusing to overwrite ${file}`);
  const url = databaseUrl();
  if (url) {
    await dumpPostgres(url, file).catch((error: Error) =>
      die(error instanceof PgToolError ? error.message : `backup failed: ${error.message}`),
    );
    if (announce) console.log(`backup (pg_dump custom format) written to ${file}`);
    return;
  }
  const source = `${dataDirOption(data)}/ferry.db`;
  // Opening a missing file would create an empty database and "back up" that.
  if (!(await Bun.file(source).exists())) die(`no database at ${source}`);
  const db = openSqlite(source);
  try {
    await backupDatabase(db, file);
  } catch (error) {
    die(`backup failed: ${(error as Error).message}`);
  } finally {
    await db.close();
  }
  if (announce) console.log(`backup written to ${file}`);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) die(`not a port number: ${value}`);
  return port;
}

/** The proxies `serve` trusts: `--trust-proxy` alone or `FERRY_TRUST_PROXY=1` = loopback, else the list given. */
function trustedProxyList(flag: string | true | undefined): string {
  const value = flag ?? process.env.FERRY_TRUST_PROXY ?? "";
  if (value === true || value === "1") return LOOPBACK_PROXIES;
  if (value === "0") return "";
  try {
    parseTrustedProxies(value);
  } catch (error) {
    die(`--trust-proxy: ${(error as Error).message}`);
  }
  return value;
}

/** SIGTERM: requests in flight get SHUTDOWN_DRAIN_MS to finish; the process exits by the deadline regardless. */
const SHUTDOWN_DRAIN_MS = 8_000;
const SHUTDOWN_DEADLINE_MS = 10_000;

const ALL_ADDRESSES = new Set(["0.0.0.0", "::", "[::]", ""]);

/** A value as one shell word: as it is when it needs no quoting, else single-quoted. */
const shellWord = (value: string) => (/^[\w@%+=:,./-]+$/.test(value) ? value : shellQuote(value));

/** The command that runs this ferry again from any directory: the executable, or bun and the entry script. */
function ferryCommand(): string {
  if (isCompiledExecutable()) return shellWord(process.execPath);
  const onPath = Bun.which("bun");
  const bun = onPath && realpathSync(onPath) === realpathSync(process.execPath) ? "bun" : process.execPath;
  return `${shellWord(bun)} ${shellWord(Bun.main)}`;
}

interface ServeFlags {
  host: string;
  port: string;
  data?: string;
  trustProxy?: string | true;
  allowPrivateUrls?: boolean;
}

/**
 * What `serve` prints on start: where it listens, whether it may call private addresses, what to
 * open, whether payments go to the sandbox (nothing is really charged), and the first step when
 * there is no admin.
 */
async function startupLines(server: RunningServer, host: string, dataDir: string): Promise<string[]> {
  const lines = [
    `ferry ${pkg.version} listening on ${host}:${server.port}, data in ${dataDir}`,
    `database: ${server.context.db.describe}`,
  ];
  if (ALL_ADDRESSES.has(host)) {
    lines.push(
      "listening on all addresses: other machines can reach it; --host 127.0.0.1 keeps it to this one",
    );
  }
  if (server.context.allowPrivateUrls) {
    lines.push(
      `${ALLOW_PRIVATE_FLAG}: the server may call loopback, private and link-local addresses ` +
        "(EPay, TronGrid, Telegram Bot API, SMTP)",
    );
  }
  lines.push(`open ${siteOrigin(await server.context.settings.all()) ?? server.url}/`);
  const { sandbox } = await paymentsInForce(server.context);
  if (sandbox.on) {
    const by = sandbox.source === "env" ? `${sandbox.variable}=1` : "setting sandbox_pay (配置管理)";
    lines.push(`${by}: 沙箱支付收款，不会真实扣款`);
  }
  if (!(await hasAdmin(server.context))) {
    const db = server.context.db;
    // On PostgreSQL the command must reach the same database, and the URL's password is not printed.
    const target =
      db instanceof PostgresDb
        ? `--database-url ${shellWord(maskUrl(db.url))}`
        : `--data ${shellWord(dataDir)}`;
    lines.push(
      "no admin account yet; create one (it asks for the password, or reads it from stdin):",
      `  ${ferryCommand()} user create --email admin@example.com --role admin ${target}`,
    );
    if (target.includes(":***@")) lines.push("  (with the database password in place of ***)");
  }
  return lines;
}

const DEFAULT_TIME_ZONE = settingsSchema.shape.timezone.parse(undefined);

/** The business timezone of a database, also one migrated only up to before the settings table (the default then). */
async function storedTimeZone(db: Db): Promise<string> {
  try {
    return await new SettingsStore(db).get("timezone");
  } catch {
    return DEFAULT_TIME_ZONE;
  }
}

async function withDatabase<T>(file: string, use: (db: Db) => Promise<T>): Promise<T> {
  let db: Db;
  try {
    db = await openDatabase({ url: databaseUrl(), file });
  } catch (error) {
    if (error instanceof DatabaseUrlError) die(error.message);
    throw error;
  }
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

export function buildProgram(): Command {
  const program = new Command("ferry")
    .description("飞渡 Ferry: proxy subscription service in one executable")
    .version(pkg.version, "-v, --version", "print the version")
    .addOption(databaseUrlOption())
    .exitOverride();
  // Before any command runs: the option reaches every command that opens the database as the variable.
  program.hook("preAction", () => {
    const url = program.opts<{ databaseUrl?: string }>().databaseUrl;
    if (url) process.env[DATABASE_URL_ENV] = url;
  });

  program
    .command("serve")
    .description("run the web server (SPA, API, subscriptions)")
    .option(
      "--host <host>",
      "address to listen on; 0.0.0.0 for all (env FERRY_HOST)",
      process.env.FERRY_HOST ?? "127.0.0.1",
    )
    .option("--port <port>", "port to listen on (env FERRY_PORT)", process.env.FERRY_PORT ?? "3000")
    .option("--data <dir>", "data directory holding ferry.db (env FERRY_DATA)")
    .option(
      "--trust-proxy [addresses]",
      "believe X-Forwarded-For/-Proto/-Host from these reverse proxies only: comma-separated IPs or CIDRs, " +
        "none = loopback (env FERRY_TRUST_PROXY=1 or a list)",
    )
    .option(
      ALLOW_PRIVATE_FLAG,
      "let the server call loopback, private and link-local addresses it is configured with: an internal " +
        "payment gateway or Bot API, a local SMTP relay (env FERRY_ALLOW_PRIVATE_URLS=1)",
    )
    .action(async (options: ServeFlags) => {
      const dataDir = resolve(dataDirOption(options.data));
      const port = parsePort(options.port);
      const trustProxy = trustedProxyList(options.trustProxy);
      const allowPrivateUrls =
        options.allowPrivateUrls === true || process.env.FERRY_ALLOW_PRIVATE_URLS === "1";
      let server: RunningServer;
      try {
        server = await startServer({
          dataDir,
          databaseUrl: databaseUrl(),
          host: options.host,
          port,
          trustProxy,
          allowPrivateUrls,
        });
      } catch (error) {
        if (error instanceof DatabaseTooNewError || error instanceof DatabaseUrlError) die(error.message);
        if ((error as { code?: unknown }).code === "EADDRINUSE") {
          die(
            `port ${port} on ${options.host} is already in use (another ferry serve?); choose another with --port`,
          );
        }
        die(`cannot start: ${(error as Error).message}`);
      }
      // Before the first line is printed: a signal right after it must stop the server cleanly.
      let stopping = false;
      const shutdown = () => {
        if (stopping) return;
        stopping = true;
        // Whatever hangs (a request, a job, the checkpoint), the process is gone within 10 s.
        setTimeout(() => {
          console.error("error: shutdown took longer than 10 s; exiting without finishing it");
          process.exit(1);
        }, SHUTDOWN_DEADLINE_MS);
        void server.stop(SHUTDOWN_DRAIN_MS).then(
          () => process.exit(0),
          (error: Error) => {
            console.error(`error: stopping failed: ${error.message}`);
            process.exit(1);
          },
        );
      };
      process.on("SIGINT", shutdown);
      process.on("SIGTERM", shutdown);
      console.log((await startupLines(server, options.host, dataDir)).join("\n"));
      if (trustProxy && ALL_ADDRESSES.has(options.host)) {
        console.warn(
          `warning: listening on all addresses with --trust-proxy ${trustProxy}: make sure port ${server.port} ` +
            "is reachable only through those proxies, or listen on 127.0.0.1 (--host)",
        );
      }
    });

  registerUserCommands(program);
  registerCommerceCommands(program);
  registerCouponCommands(program);
  registerChannelCommands(program);
  registerAgencyCommands(program);
  registerNetworkCommands(program);
  registerTrafficCommands(program);
  registerTicketCommands(program);
  registerTelegramCommands(program);
  registerGuideCommands(program);
  registerPrizeCommands(program);
  registerStatsCommands(program);
  registerWithdrawCommands(program);
  registerReplicaCommands(program);
  registerAuditCommands(program);

  const migrate = program.command("migrate").description("database schema migrations");
  migrate
    .command("status")
    .description("list migrations and whether each is applied")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      const file = `${dataDirOption(options.data)}/ferry.db`;
      // Asking about a database that does not exist yet must not create one.
      const { states, timeZone } =
        databaseUrl() || existsSync(file)
          ? await withDatabase(file, async (db) => ({
              states: await migrationStatus(db, migrations),
              timeZone: await storedTimeZone(db),
            }))
          : {
              states: migrations.map((m) => ({ version: m.version, name: m.name, appliedTime: null })),
              timeZone: DEFAULT_TIME_ZONE,
            };
      printJsonOr(options.json ?? false, states, (rows) =>
        rows
          .map(
            (m) =>
              `${String(m.version).padStart(3, "0")}_${m.name}  ${m.appliedTime ? `applied ${formatInstant(m.appliedTime, timeZone)}` : "pending"}`,
          )
          .join("\n"),
      );
    });

  program
    .command("backup")
    .description(
      "write a consistent copy of the live database (safe while the server runs); with --database-url, a pg_dump custom-format archive",
    )
    .argument("[file]", "where to write the copy; must not exist (optional with --to s3)")
    .addOption(dataOption())
    .option("--to <target>", "also upload it, sealed and verified, to the S3 storage of the settings: s3")
    .addOption(allowPrivateOption())
    .action(
      async (
        file: string | undefined,
        options: { data?: string; to?: string; allowPrivateUrls?: boolean },
      ) => {
        if (options.to !== undefined && options.to !== "s3") die(`--to takes s3, not ${options.to}`);
        if (file === undefined && options.to === undefined) die("give the file to write, or --to s3");
        const dir = file === undefined ? privateTempDir() : null;
        if (dir) process.on("exit", () => removeTempDir(dir));
        const target =
          file ?? join(dir as string, `ferry-${fileTime(Date.now())}.${databaseUrl() ? "dump" : "db"}`);
        await writeBackup(target, options.data, file !== undefined);
        if (options.to === "s3")
          await uploadToS3(options.data, target, privateAllowed(options.allowPrivateUrls));
      },
    );

  registerRestoreCommand(program);
  registerDbCommands(program);

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
