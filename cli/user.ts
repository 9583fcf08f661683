import type { Command } from "commander";
import { transformPassword } from "../src/modules/user/password.ts";
import { EMAIL_PATTERN, PASSWORD_MIN, type Role } from "../src/modules/user/schema.ts";
import { createUser, findUserByEmail, ROLES, setPassword, setRole } from "../src/modules/user/service.ts";
import { RpcError } from "../src/rpc/codes.ts";
import {
  checkedPassword,
  dataDirOption,
  die,
  openContext,
  printJsonOr,
  readNewPassword,
  withContextAsync,
} from "./shared.ts";

function parseRole(value: string): Role {
  if (!ROLES.includes(value as Role)) die(`role must be one of ${ROLES.join(", ")}`);
  return value as Role;
}

export function registerUserCommands(program: Command) {
  const user = program.command("user").description("manage accounts");

  user
    .command("create")
    .description("create an account (the e-mail counts as confirmed)")
    .requiredOption("--email <email>", "login e-mail")
    .option(
      "--password <password>",
      `at least ${PASSWORD_MIN} characters; visible to other users of this machine (ps), so prefer leaving it ` +
        "out: then it is asked for at the terminal, or read from the first line of stdin",
    )
    .option("--role <role>", `one of ${ROLES.join(", ")}`, "normal")
    .option("--data <dir>", "data directory (env FERRY_DATA)")
    .option("--json", "print the account as JSON")
    .action(
      async (options: { email: string; password?: string; role: string; data?: string; json?: boolean }) => {
        const email = options.email.trim().toLowerCase();
        if (!EMAIL_PATTERN.test(email)) die(`not an e-mail address: ${options.email}`);
        const role = parseRole(options.role);
        const password =
          options.password === undefined ? await readNewPassword() : checkedPassword(options.password);
        const ctx = openContext(dataDirOption(options.data));
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
          ctx.db.close();
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
    .option("--data <dir>", "data directory (env FERRY_DATA)")
    .action(async (emailArg: string, options: { data?: string }) => {
      const email = emailArg.trim().toLowerCase();
      await withContextAsync(options.data, async (ctx) => {
        const account = findUserByEmail(ctx, email);
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
    .option("--data <dir>", "data directory (env FERRY_DATA)")
    .option("--json", "print the account as JSON")
    .action((emailArg: string, roleArg: string, options: { data?: string; json?: boolean }) => {
      const role = parseRole(roleArg);
      const ctx = openContext(dataDirOption(options.data));
      try {
        const updated = setRole(ctx, emailArg.trim().toLowerCase(), role);
        printJsonOr(
          options.json ?? false,
          { _id: updated.id, email: updated.email, type: updated.type },
          (u) => `${u.email} is now ${u.type}`,
        );
      } catch (error) {
        die((error as Error).message);
      } finally {
        ctx.db.close();
      }
    });
}
