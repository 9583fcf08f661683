import type { Command } from "commander";
import { transformPassword } from "../src/modules/user/password.ts";
import { EMAIL_PATTERN, PASSWORD_MIN, type Role } from "../src/modules/user/schema.ts";
import { createUser, ROLES, setRole } from "../src/modules/user/service.ts";
import { RpcError } from "../src/rpc/codes.ts";
import { dataDirOption, die, openContext, printJsonOr } from "./shared.ts";

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
    .requiredOption("--password <password>", `password, at least ${PASSWORD_MIN} characters`)
    .option("--role <role>", `one of ${ROLES.join(", ")}`, "normal")
    .option("--data <dir>", "data directory (env FERRY_DATA)")
    .option("--json", "print the account as JSON")
    .action(
      async (options: { email: string; password: string; role: string; data?: string; json?: boolean }) => {
        const email = options.email.trim().toLowerCase();
        if (!EMAIL_PATTERN.test(email)) die(`not an e-mail address: ${options.email}`);
        if (options.password.length < PASSWORD_MIN)
          die(`password must be at least ${PASSWORD_MIN} characters`);
        const role = parseRole(options.role);
        const ctx = openContext(dataDirOption(options.data));
        try {
          const created = await createUser(ctx, {
            email,
            passwordDigest: transformPassword(options.password),
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
