/**
 * Operator commands for USDT withdrawals: `ferry withdraw list|settle|refuse|message`. They call
 * the services /admin_charge calls, so the customer gets the same notices and bot messages.
 */
import { type Command, Option } from "commander";
import type { AppContext } from "../src/context.ts";
import { ID_PATTERN } from "../src/lib/id-schema.ts";
import { formatYuan, yuanToFen } from "../src/lib/money.ts";
import {
  type Charge,
  chargeMessageInput,
  checkoutChargeInput,
  refuseChargeInput,
  WITHDRAWAL_STATUSES,
  type WithdrawalStatus,
} from "../src/modules/wallet/schema.ts";
import {
  findCharge,
  listCharges,
  messageCharge,
  refuseCharge,
  settleCharge,
} from "../src/modules/wallet/service.ts";
import { Code, RpcError } from "../src/rpc/codes.ts";
import {
  dataOption,
  die,
  type PrintTime,
  parseOrDie,
  printJsonOr,
  printListOr,
  timePrinter,
  withContext,
} from "./shared.ts";

const STATUS_MEANING: Record<WithdrawalStatus, string> = {
  request: "waiting to be settled",
  paid: "settled",
  refused: "refused, money returned to the wallet",
};

/** Runs a withdrawal service call; its expected refusals become English one-line errors. */
async function chargeCall<T>(
  dataDir: string | undefined,
  id: string,
  run: (ctx: AppContext) => Promise<T>,
): Promise<T> {
  return await withContext(dataDir, async (ctx) => {
    try {
      return await run(ctx);
    } catch (error) {
      if (error instanceof RpcError && error.code === Code.notFound) die(`no withdrawal ${id}`);
      if (error instanceof RpcError && error.code === Code.withdrawRefused) {
        die(`withdrawal ${id} is already ${STATUS_MEANING[(await findCharge(ctx, id)).status]}`);
      }
      throw error;
    }
  });
}

function checkId(id: string): string {
  if (!ID_PATTERN.test(id)) die(`not a withdrawal id: ${id}`);
  return id;
}

const chargeLine = (c: Charge, at: PrintTime) =>
  [
    c._id,
    c.status.padEnd(7),
    `${formatYuan(yuanToFen(c.money)).padStart(10)} yuan`,
    at(c.requestTime),
    c.email,
    `${c.addressType} ${c.address}`,
    ...(c.txid ? [`txid ${c.txid}`] : []),
    ...(c.msg ? [`msg ${c.msg}`] : []),
  ].join("  ");

export function registerWithdrawCommands(program: Command) {
  const withdraw = program.command("withdraw").description("USDT withdrawals from wallets (提现管理)");

  withdraw
    .command("list")
    .description("withdrawals, newest first (request = waiting to be settled)")
    .addOption(
      new Option("--status <status>", "only withdrawals in this status").choices(WITHDRAWAL_STATUSES),
    )
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { status?: WithdrawalStatus; data?: string; json?: boolean }) => {
      const { charges, at } = await withContext(options.data, async (ctx) => ({
        charges: await listCharges(ctx, { status: options.status }),
        at: await timePrinter(ctx),
      }));
      printListOr(options.json ?? false, charges, (c) => chargeLine(c, at), "no withdrawals");
    });

  withdraw
    .command("settle")
    .description("mark a request settled after sending the USDT: the customer gets a notice")
    .argument("<id>", "the withdrawal's id")
    .option("--txid <hash>", "the transaction hash of the payment")
    .addOption(dataOption())
    .option("--json", "print the withdrawal as JSON")
    .action(async (id: string, options: { txid?: string; data?: string; json?: boolean }) => {
      const input = parseOrDie(
        checkoutChargeInput,
        { charge_id: checkId(id), txid: options.txid },
        { charge_id: "<id>", txid: "--txid" },
      );
      const settled = await chargeCall(
        options.data,
        id,
        async (ctx) => await settleCharge(ctx, input.charge_id, input.txid ?? ""),
      );
      printJsonOr(
        options.json ?? false,
        settled,
        (c) =>
          `settled withdrawal ${c._id}: ${formatYuan(yuanToFen(c.money))} yuan to ${c.email} (${c.address})`,
      );
    });

  withdraw
    .command("refuse")
    .description("refuse a request: the money goes back to the wallet, the reason is shown to the customer")
    .argument("<id>", "the withdrawal's id")
    .requiredOption("--reason <text>", "why (the customer sees it)")
    .addOption(dataOption())
    .option("--json", "print the withdrawal as JSON")
    .action(async (id: string, options: { reason: string; data?: string; json?: boolean }) => {
      const input = parseOrDie(
        refuseChargeInput,
        { charge_id: checkId(id), reason: options.reason },
        { charge_id: "<id>", reason: "--reason" },
      );
      const refused = await chargeCall(
        options.data,
        id,
        async (ctx) => await refuseCharge(ctx, input.charge_id, input.reason),
      );
      printJsonOr(
        options.json ?? false,
        refused,
        (c) => `refused withdrawal ${c._id}: ${formatYuan(yuanToFen(c.money))} yuan returned to ${c.email}`,
      );
    });

  withdraw
    .command("message")
    .description("leave a message on a withdrawal (the customer sees it in the list)")
    .argument("<id>", "the withdrawal's id")
    .argument("<text>", "the message")
    .addOption(dataOption())
    .option("--json", "print the withdrawal as JSON")
    .action(async (id: string, text: string, options: { data?: string; json?: boolean }) => {
      const input = parseOrDie(
        chargeMessageInput,
        { charge_id: checkId(id), msg: text },
        { charge_id: "<id>", msg: "<text>" },
      );
      const messaged = await chargeCall(
        options.data,
        id,
        async (ctx) => await messageCharge(ctx, input.charge_id, input.msg),
      );
      printJsonOr(
        options.json ?? false,
        messaged,
        (c) => `message left on withdrawal ${c._id} of ${c.email}`,
      );
    });
}
