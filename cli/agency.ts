/**
 * Operator commands for agencies: `ferry agency list|set|unset|attach|detach|allocate`. They call
 * the services behind /api/admin/agency/* and /api/agency/allocate, with the same schemas.
 */
import type { Command } from "commander";
import { formatGB } from "../src/lib/traffic.ts";
import type { Agency } from "../src/modules/agency/schema.ts";
import {
  AgencyMsg,
  allocateInput,
  attachCustomerInput,
  setAgencyInput,
  unsetAgencyInput,
} from "../src/modules/agency/schema.ts";
import {
  allocateTraffic,
  attachCustomer,
  detachCustomer,
  listAgencies,
  setAgency,
  unsetAgency,
} from "../src/modules/agency/service.ts";
import { findUserByEmail } from "../src/modules/user/service.ts";
import { dataOption, numberOption, parseOrDie, printJsonOr, printListOr, withContext } from "./shared.ts";

interface Options {
  data?: string;
  json?: boolean;
}

const describeAgency = (a: Agency) =>
  `agency ${a.email}${a.name ? ` (${a.name})` : ""}: ${a.customerCount} customer${a.customerCount === 1 ? "" : "s"}`;

export function registerAgencyCommands(program: Command) {
  const agency = program
    .command("agency")
    .description("agencies: owners, their customers, traffic allocation");

  agency
    .command("list")
    .description("every agency with its number of customers, newest first")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: Options) => {
      const agencies = await withContext(options.data, async (ctx) => await listAgencies(ctx));
      printListOr(options.json ?? false, agencies, describeAgency, "no agencies");
    });

  agency
    .command("set")
    .description("make an account an agency owner, or rename its agency")
    .argument("<email>", "the owner")
    .option("--name <name>", "the agency's name")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (email: string, options: Options & { name?: string }) => {
      const input = parseOrDie(setAgencyInput, { email, name: options.name }, { name: "--name" });
      const saved = await withContext(options.data, async (ctx) => await setAgency(ctx, input));
      printJsonOr(options.json ?? false, saved, describeAgency);
    });

  agency
    .command("unset")
    .description("end an agency; its customers are detached and keep their traffic")
    .argument("<email>", "the owner")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (email: string, options: Options) => {
      const input = parseOrDie(unsetAgencyInput, { email });
      const done = await withContext(options.data, async (ctx) => await unsetAgency(ctx, input));
      printJsonOr(
        options.json ?? false,
        done,
        (d) => `agency of ${email} ended, ${d.detached} customers detached`,
      );
    });

  for (const [name, description, run] of [
    ["attach", "attach a normal account to an agency as its customer (agency menu)", attachCustomer],
    ["detach", "detach a customer from its agency; the traffic it was given stays", detachCustomer],
  ] as const) {
    agency
      .command(name)
      .description(description)
      .argument("<agency-email>", "the owner")
      .argument("<customer-email>", "the customer")
      .addOption(dataOption())
      .option("--json", "print as JSON")
      .action(async (agencyEmail: string, customerEmail: string, options: Options) => {
        const input = parseOrDie(attachCustomerInput, {
          agency_email: agencyEmail,
          customer_email: customerEmail,
        });
        const saved = await withContext(options.data, (ctx) => run(ctx, input));
        printJsonOr(options.json ?? false, saved, describeAgency);
      });
  }

  agency
    .command("allocate")
    .description(
      "give a customer some of its agency owner's permanent traffic (agency_spend / agency_allocate)",
    )
    .argument("<agency-email>", "the owner")
    .argument("<customer-email>", "the customer, attached to that agency")
    .requiredOption(
      "--traffic-g <G>",
      "traffic in G, at least the transfer minimum (setting minPushNum), at most the owner's permanent traffic",
    )
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (agencyEmail: string, customerEmail: string, options: Options & { trafficG: string }) => {
      const input = parseOrDie(
        allocateInput,
        { email: customerEmail, trafficG: numberOption("--traffic-g", options.trafficG) },
        { trafficG: "--traffic-g" },
      );
      const result = await withContext(options.data, async (ctx) => {
        const owner = await findUserByEmail(ctx, agencyEmail.trim().toLowerCase());
        if (!owner) throw new Error(AgencyMsg.userNotFound(agencyEmail));
        return await allocateTraffic(ctx, owner.id, input);
      });
      printJsonOr(
        options.json ?? false,
        result,
        (r) =>
          `allocated ${formatGB(r.allocated)} G to ${r.customerEmail}: owner now ${formatGB(r.ownerTraffic)} G, customer ${formatGB(r.customerTraffic)} G`,
      );
    });
}
