import { type Command, Option } from "commander";
import { addDays, endOfBusinessDay } from "../src/lib/time.ts";
import { formatGB } from "../src/lib/traffic.ts";
import {
  adjustmentFrom,
  getAdminUser,
  listAdminUsers,
  requireUserByEmail,
  updateUser,
} from "../src/modules/user/admin.ts";
import { type AdminUser, adjustmentInput, userListInput } from "../src/modules/user/admin-schema.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import { ROLES } from "../src/modules/user/row.ts";
import { EMAIL_PATTERN, PASSWORD_MIN, type Role } from "../src/modules/user/schema.ts";
import { createUser, findUserByEmail, setPassword, setRole } from "../src/modules/user/service.ts";
import { resetTotp } from "../src/modules/user/two-factor.ts";
import { RpcError } from "../src/rpc/codes.ts";
import { registerDeviceCommands } from "./devices.ts";
import {
  dataDirOption,
  dataOption,
  die,
  numberOption,
  openContext,
  type PrintTime,
  parseOrDie,
  printJsonOr,
  readNewPassword,
  timePrinter,
  withContext,
  withContextAsync,
} from "./shared.ts";

function parseRole(value: string): Role {
  if (!ROLES.includes(value as Role)) die(`role must be one of ${ROLES.join(", ")}`);
  return value as Role;
}

/** Who the admin_adjustments rows of CLI adjustments name as the admin. */
export const CLI_ADMIN_ID = "cli";

/** An instant as the CLI prints it; 0 (never) as "-". */
const timeOrDash = (at: PrintTime, ms: number) => (ms ? at(ms) : "-");

/** One line of `ferry user list`. */
function userLine(u: AdminUser, at: PrintTime): string {
  return [
    u.email,
    u.disable ? "disabled" : "active",
    `x${u.scale}`,
    u.channel_code || "-",
    timeOrDash(at, u.createTime),
    u.paidUser ? "paid" : "unpaid",
    u.agency || "-",
    `¥${u.wallet_money.toFixed(2)}`,
    `${formatGB(u.spendTraffic)}/${formatGB(u.traffic)}G`,
    `vip ${timeOrDash(at, u.vipExpireTime)}`,
    `active ${timeOrDash(at, u.lastActiveTime)}`,
  ].join("  ");
}

function userDetails(u: AdminUser, at: PrintTime): string {
  return [
    `${u.email} (${u.type}${u.is_agency ? ", agency" : ""}) ${u._id}`,
    `  status: ${u.disable ? "disabled" : "active"}   multiplier: ${u.scale}   channel: ${u.channel_code || "none"}`,
    `  created: ${timeOrDash(at, u.createTime)}   last active: ${timeOrDash(at, u.lastActiveTime)}   paid: ${u.paidUser ? "yes" : "no"}`,
    `  secondary agent: ${u.agency || "none"}   wallet: ¥${u.wallet_money.toFixed(2)}`,
    `  traffic: ${formatGB(u.traffic)} G left, ${formatGB(u.spendTraffic)} G spent   time package until: ${timeOrDash(at, u.vipExpireTime)}`,
    `  first url: ${u.first_url || "-"}   last url: ${u.last_url || "-"}`,
    `  flags: canChangeDescribeKey=${u.canChangeDescribeKey} canChangePassword=${u.canChangePassword} ` +
      `normalPermission=${u.normalPermission} forceReward=${u.forceReward} ` +
      `specialDailyUnlimitTraffic=${u.specialDailyUnlimitTraffic} dailyUnlimitTraffic=${u.dailyUnlimitTraffic}G`,
  ].join("\n");
}

/** The first millisecond of a YYYY-MM-DD in the business timezone. */
function startOfDay(day: string, timeZone: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(day)))
    die(`--since must be YYYY-MM-DD: ${day}`);
  return endOfBusinessDay(addDays(day, -1), timeZone) + 1;
}

function registerAdminUserCommands(user: Command) {
  user
    .command("list")
    .description("list accounts, newest first (as /admin_userlist)")
    .option("--filter <text>", "part of the e-mail, channel code or id")
    .option("--since <date>", "signed up on or after this day (YYYY-MM-DD, business timezone)")
    .option("--number <n>", "how many (default 100)")
    .addOption(dataOption())
    .option("--json", "print the accounts as JSON")
    .action(
      async (options: {
        filter?: string;
        since?: string;
        number?: string;
        data?: string;
        json?: boolean;
      }) => {
        await withContext(options.data, async (ctx) => {
          const query = parseOrDie(
            userListInput,
            {
              number: numberOption("--number", options.number),
              filterStr: options.filter ?? "",
              fromTimestamp: options.since
                ? startOfDay(options.since, (await ctx.settings.all()).timezone)
                : null,
            },
            { number: "--number", filterStr: "--filter" },
          );
          const users = await listAdminUsers(ctx, query);
          const at = await timePrinter(ctx);
          printJsonOr(options.json ?? false, users, (list) =>
            list.length === 0 ? "no accounts" : list.map((u) => userLine(u, at)).join("\n"),
          );
        });
      },
    );

  user
    .command("show")
    .description("one account with every column of the user list")
    .argument("<email>", "the account's e-mail")
    .addOption(dataOption())
    .option("--json", "print the account as JSON")
    .action(async (email: string, options: { data?: string; json?: boolean }) => {
      await withContext(options.data, async (ctx) => {
        const printTime = await timePrinter(ctx);
        const user = await getAdminUser(ctx, (await requireUserByEmail(ctx, email)).id);
        printJsonOr(options.json ?? false, user, (u) => userDetails(u, printTime));
      });
    });

  for (const [name, disable] of [
    ["disable", true],
    ["enable", false],
  ] as const) {
    user
      .command(name)
      .description(
        disable
          ? "disable an account: it is signed out everywhere, dropped from node user lists and its subscription becomes the notice"
          : "enable a disabled account again",
      )
      .argument("<email>", "the account's e-mail")
      .addOption(dataOption())
      .action(async (email: string, options: { data?: string }) => {
        await withContext(options.data, async (ctx) => {
          const updated = await updateUser(ctx, CLI_ADMIN_ID, {
            _id: (await requireUserByEmail(ctx, email)).id,
            disable,
          });
          console.log(`${updated.email} ${disable ? "disabled; signed out everywhere" : "enabled"}`);
        });
      });
  }

  user
    .command("adjust")
    .description(
      "add to (or, negative, take from) an account's permanent traffic, time package or wallet; " +
        "writes the ledger rows and an audit row with the reason",
    )
    .argument("<email>", "the account's e-mail")
    .option("--traffic-g <G>", "permanent traffic in G, e.g. 10 or -5")
    .option("--days <days>", "days of time package, e.g. 30 or -3")
    .option("--wallet <yuan>", "wallet in yuan, e.g. 12.5 or -3")
    .requiredOption("--reason <text>", "why (kept with the adjustment and shown to the customer)")
    .addOption(dataOption())
    .option("--json", "print the account as JSON")
    .action(
      async (
        email: string,
        options: {
          trafficG?: string;
          days?: string;
          wallet?: string;
          reason: string;
          data?: string;
          json?: boolean;
        },
      ) => {
        const input = parseOrDie(
          adjustmentInput,
          {
            trafficG: numberOption("--traffic-g", options.trafficG),
            days: numberOption("--days", options.days),
            walletYuan: numberOption("--wallet", options.wallet),
            reason: options.reason,
          },
          { trafficG: "--traffic-g", days: "--days", walletYuan: "--wallet", reason: "--reason" },
        );
        await withContext(options.data, async (ctx) => {
          const account = await requireUserByEmail(ctx, email);
          const adjustment = adjustmentFrom(input, CLI_ADMIN_ID, account.id, Date.now());
          if (!adjustment) die("give --traffic-g, --days or --wallet");
          const updated = await updateUser(ctx, CLI_ADMIN_ID, { _id: account.id, adjust: input });
          const printTime = await timePrinter(ctx);
          printJsonOr(options.json ?? false, updated, (u) => userDetails(u, printTime));
        });
      },
    );
}

export function registerUserCommands(program: Command) {
  const user = program.command("user").description("manage accounts");
  registerAdminUserCommands(user);
  registerDeviceCommands(user);

  user
    .command("create")
    .description(
      `create an account (the e-mail counts as confirmed); the password (at least ${PASSWORD_MIN} characters) ` +
        "is asked for at the terminal, or read from the first line of stdin, never from the command line " +
        "(ps shows it to every user of the machine)",
    )
    .requiredOption("--email <email>", "login e-mail")
    .option("--role <role>", `one of ${ROLES.join(", ")}`, "normal")
    .addOption(dataOption())
    .option("--json", "print the account as JSON")
    // Only to refuse it with the way that works; older scripts passed it.
    .addOption(new Option("--password <password>").hideHelp())
    .action(
      async (options: { email: string; password?: string; role: string; data?: string; json?: boolean }) => {
        if (options.password !== undefined) {
          die(
            "--password is not taken (ps shows the command line to every user of the machine): " +
              "type the password when asked, or pipe it in as the first line of stdin",
          );
        }
        const email = options.email.trim().toLowerCase();
        if (!EMAIL_PATTERN.test(email)) die(`not an e-mail address: ${options.email}`);
        const role = parseRole(options.role);
        const password = await readNewPassword();
        const ctx = await openContext(dataDirOption(options.data));
        try {
          const created = await createUser(ctx, {
            email,
            passwordDigest: transformPassword(password),
            type: role,
            // The operator vouches for the address, so admin_id / yunying_list may name it.
            emailVerified: true,
          });
          printJsonOr(
            options.json ?? false,
            { _id: created.id, email: created.email, type: created.type },
            (u) => `created ${u.email} (${u.type}) ${u._id}`,
          );
        } catch (error) {
          die(error instanceof RpcError ? `${error.message}: ${email}` : (error as Error).message);
        } finally {
          await ctx.db.close();
        }
      },
    );

  user
    .command("set-password")
    .description(
      "set an account's password (when mail is off, customers cannot reset their own) and sign it out " +
        "everywhere; the password is asked for at the terminal, or read from the first line of stdin",
    )
    .argument("<email>", "the account's e-mail")
    .addOption(dataOption())
    .action(async (emailArg: string, options: { data?: string }) => {
      const email = emailArg.trim().toLowerCase();
      await withContextAsync(options.data, async (ctx) => {
        const account = await findUserByEmail(ctx, email);
        if (!account) throw new Error(`no account with the e-mail ${email}`);
        await setPassword(ctx, account.id, transformPassword(await readNewPassword()));
        console.log(
          `password of ${email} set; signed out everywhere (sessions, trusted browsers, login links)`,
        );
      });
    });

  user
    .command("set-role")
    .description("change an account's role")
    .argument("<email>", "the account's e-mail")
    .argument("<role>", `one of ${ROLES.join(", ")}`)
    .addOption(dataOption())
    .option("--json", "print the account as JSON")
    .action(async (emailArg: string, roleArg: string, options: { data?: string; json?: boolean }) => {
      const role = parseRole(roleArg);
      const ctx = await openContext(dataDirOption(options.data));
      try {
        const updated = await setRole(ctx, emailArg.trim().toLowerCase(), role);
        printJsonOr(
          options.json ?? false,
          { _id: updated.id, email: updated.email, type: updated.type },
          (u) => `${u.email} is now ${u.type}`,
        );
      } catch (error) {
        die((error as Error).message);
      } finally {
        await ctx.db.close();
      }
    });

  user
    .command("2fa-reset")
    .description(
      "turn two-factor login off for an account locked out of it (lost phone and recovery codes); " +
        "it logs in with its password alone until it turns 2FA on again. Audited (user.2fa_reset)",
    )
    .argument("<email>", "the account's e-mail")
    .addOption(dataOption())
    .action(async (emailArg: string, options: { data?: string }) => {
      const email = emailArg.trim().toLowerCase();
      await withContextAsync(options.data, async (ctx) => {
        const account = await findUserByEmail(ctx, email);
        if (!account) throw new Error(`no account with the e-mail ${email}`);
        const wasOn = await resetTotp(ctx, account);
        console.log(
          wasOn
            ? `two-factor login of ${email} turned off; it logs in with its password alone`
            : `two-factor login was not on for ${email}; nothing changed`,
        );
      });
    });
}
