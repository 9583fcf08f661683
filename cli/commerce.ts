/**
 * Operator commands for the shop: `ferry combo list|create` and `ferry order list|mark-paid`. They
 * call the services the back office calls; mark-paid credits through settleWithoutGateway → markPaid,
 * the one crediting function, and is logged in payment_events like a gateway notification.
 */
import type { Command } from "commander";
import type { AppContext } from "../src/context.ts";
import { ID_PATTERN } from "../src/lib/id-schema.ts";
import { formatYuan } from "../src/lib/money.ts";
import { formatGB, GB } from "../src/lib/traffic.ts";
import { type Combo, comboInput } from "../src/modules/combo/schema.ts";
import { listAllCombos, saveCombo } from "../src/modules/combo/service.ts";
import type { Order, OrderStatus, Trade } from "../src/modules/order/schema.ts";
import { findOrder, isOpen, listTrades, type OrderRow, toOrder } from "../src/modules/order/service.ts";
import { findUserByEmail } from "../src/modules/user/service.ts";
import { settleWithoutGateway } from "../src/payments/credit.ts";
import {
  dataOption,
  die,
  numberOption,
  type PrintTime,
  parseOrDie,
  printJsonOr,
  printListOr,
  timePrinter,
  withContext,
} from "./shared.ts";

const ORDER_STATUSES: readonly OrderStatus[] = ["topay", "wallet_spend", "paied", "cancled"];
const DEFAULT_ORDER_LIMIT = 100;

/** Permission ids or names to ids; an unknown one is an error. */
async function permissionIds(ctx: AppContext, values: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const value of values) {
    const row = await ctx.db.get<{ id: string }>(
      "SELECT id FROM permissions WHERE id = ? OR name = ?",
      value,
      value,
    );
    if (!row) die(`no permission with id or name ${value}`);
    ids.push(row.id);
  }
  return ids;
}

const comboLine = (c: Combo) =>
  [
    c._id,
    c.name,
    `¥${formatYuan(Math.round(c.price * 100))}`,
    c.traffic > 0 ? `${formatGB(c.traffic)} G` : "-",
    c.traffic > 0 && c.duration > 0 ? `traffic lasts ${c.duration} days` : "",
    c.vipDuration > 0 ? `${c.vipDuration} days` : "-",
    c.additionPersend > 0 ? `+${c.additionPersend}%` : "",
    c.permissionsGain.length
      ? `permissions ${c.permissionsGain.join(",")} for ${c.permissionDuration} days`
      : "",
  ]
    .filter(Boolean)
    .join("  ");

const tradeLine = (t: Trade, at: PrintTime) =>
  [
    t.order_id,
    t.status.padEnd(12),
    at(t.create_time),
    t.username,
    t.desc,
    `¥${formatYuan(Math.round(t.request_pay_amound * 100))}`,
    t.pay_mode || "-",
    t.tradeno,
  ]
    .filter(Boolean)
    .join("  ");

interface ComboCreateOptions {
  name: string;
  price: string;
  trafficG?: string;
  trafficDays?: string;
  days?: string;
  limitG?: string;
  bonus?: string;
  devices?: string;
  speed?: string;
  permission?: string[];
  permissionDays?: string;
  permissionsDesc?: string;
  order?: string;
  data?: string;
  json?: boolean;
}

function registerComboCommands(program: Command) {
  const combo = program.command("combo").description("shop products (traffic and time packages)");

  combo
    .command("list")
    .description("list every combo, hidden ones included")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { data?: string; json?: boolean }) => {
      const combos = await withContext(options.data, listAllCombos);
      printListOr(options.json ?? false, combos, comboLine, "no combos");
    });

  combo
    .command("create")
    .description("add a combo to the shop")
    .requiredOption("--name <name>", "name shown in the shop")
    .requiredOption("--price <yuan>", "price in yuan, at most 2 decimals")
    .option("--traffic-g <G>", "traffic in G (1024^3 bytes); permanent unless --traffic-days")
    .option(
      "--traffic-days <n>",
      "days the traffic lasts after payment (seed duration; default 0 = never expires)",
    )
    .option("--days <n>", "time package: days added to vipExpireTime")
    .option("--limit-g <G>", "time package: daily quota in G (default 50)")
    .option("--bonus <percent>", "bonus percent on traffic / daily quota (20 means 20%)")
    .option("--devices <n>", "device count shown in the shop")
    .option("--speed <text>", "speed shown in the shop, e.g. 150Mbps")
    .option("--permission <id-or-name...>", "permissions the combo grants")
    .option("--permission-days <n>", "days each granted permission lasts")
    .option("--permissions-desc <text>", "permission text shown in the shop")
    .option("--order <n>", "sort position in the shop")
    .addOption(dataOption())
    .option("--json", "print the combo as JSON")
    .action(async (options: ComboCreateOptions) => {
      const trafficG = numberOption("--traffic-g", options.trafficG) ?? 0;
      const limitG = numberOption("--limit-g", options.limitG);
      const created = await withContext(options.data, async (ctx) => {
        const permissions = await permissionIds(ctx, options.permission ?? []);
        const input = parseOrDie(comboInput, {
          name: options.name,
          price: numberOption("--price", options.price),
          traffic: Math.round(trafficG * GB),
          vipDuration: numberOption("--days", options.days) ?? 0,
          duration: numberOption("--traffic-days", options.trafficDays),
          limit: limitG === undefined ? undefined : Math.round(limitG * GB),
          additionPersend: numberOption("--bonus", options.bonus),
          deviceNum: numberOption("--devices", options.devices),
          speed: options.speed,
          permissionsGain: permissions,
          permissionDuration: numberOption("--permission-days", options.permissionDays),
          permissionsDesc: options.permissionsDesc,
          orderID: numberOption("--order", options.order),
        });
        if (input.traffic === 0 && input.vipDuration === 0 && input.permissionsGain.length === 0)
          die("the combo sells nothing: give --traffic-g, --days or --permission");
        if (input.permissionsGain.length > 0 && input.permissionDuration === 0)
          die("--permission needs --permission-days");
        return await saveCombo(ctx, input);
      });
      printJsonOr(options.json ?? false, created, (c) => `created ${comboLine(c)}`);
    });
}

function registerOrderCommands(program: Command) {
  const order = program.command("order").description("customer orders");

  order
    .command("list")
    .description("list orders, newest first")
    .option("--user <email>", "only this account's orders")
    .option("--status <status>", `only orders in this status: ${ORDER_STATUSES.join(", ")}`)
    .option("--limit <n>", "at most this many orders", String(DEFAULT_ORDER_LIMIT))
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(
      async (options: { user?: string; status?: string; limit: string; data?: string; json?: boolean }) => {
        const status = options.status as OrderStatus | undefined;
        if (status !== undefined && !ORDER_STATUSES.includes(status))
          die(`--status must be one of ${ORDER_STATUSES.join(", ")}`);
        const limit = numberOption("--limit", options.limit) as number;
        if (!Number.isInteger(limit) || limit < 1)
          die(`--limit must be a positive whole number: ${options.limit}`);
        const email = options.user?.trim().toLowerCase();
        const { trades, at } = await withContext(options.data, async (ctx) => {
          if (email !== undefined && !(await findUserByEmail(ctx, email)))
            die(`no account with e-mail ${options.user}`);
          return { trades: await listTrades(ctx, limit, "", { email, status }), at: await timePrinter(ctx) };
        });
        printListOr(options.json ?? false, trades, (t) => tradeLine(t, at), "no orders");
      },
    );

  order
    .command("mark-paid")
    .description("credit an unpaid order by hand (money received outside a gateway); logged with the reason")
    .argument("<orderId>", "the order's id")
    .requiredOption("--reason <text>", "why, for the payment log (e.g. bank transfer reference)")
    .addOption(dataOption())
    .option("--json", "print the order as JSON")
    .action(async (orderId: string, options: { reason: string; data?: string; json?: boolean }) => {
      const reason = options.reason.trim();
      if (reason === "") die("--reason must not be empty");
      if (!ID_PATTERN.test(orderId)) die(`not an order id: ${orderId}`);
      const paid = await withContext(options.data, async (ctx): Promise<Order> => {
        const found = await findOrder(ctx.db, orderId);
        if (!found) die(`no order ${orderId}`);
        if (!isOpen(found))
          die(`order ${orderId} is ${found.status}; only topay or wallet_spend orders can be marked paid`);
        const result = await settleWithoutGateway(ctx, orderId, "manual", `manual: ${reason}`);
        if (result.result !== "credited")
          die(`order ${orderId} was not credited: ${"reason" in result ? result.reason : result.result}`);
        return toOrder((await findOrder(ctx.db, orderId)) as OrderRow);
      });
      printJsonOr(
        options.json ?? false,
        paid,
        (o) =>
          `order ${o._id} (${o.desc}) marked paid: ¥${formatYuan(Math.round(o.pay_money * 100))} by hand`,
      );
    });
}

export function registerCommerceCommands(program: Command) {
  registerComboCommands(program);
  registerOrderCommands(program);
}
