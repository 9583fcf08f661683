/**
 * Operator commands for coupons: `ferry coupon list|create|batch|delete`. They call the services
 * the coupon manager (/admin_coupon) calls and validate with the same schemas.
 */
import { existsSync, writeFileSync } from "node:fs";
import { type Command, Option } from "commander";
import type { AppContext } from "../src/context.ts";
import { ID_PATTERN } from "../src/lib/id-schema.ts";
import { businessDay } from "../src/lib/time.ts";
import {
  COUPON_TYPES,
  type Coupon,
  type CouponType,
  couponBatchInput,
  couponEffect,
  couponEffectText,
  couponInput,
} from "../src/modules/coupon/schema.ts";
import {
  createCouponBatch,
  deleteCoupons,
  findCouponByCode,
  findCouponById,
  listCoupons,
  saveCoupon,
} from "../src/modules/coupon/service.ts";
import {
  dataOption,
  die,
  numberOption,
  parseOrDie,
  printJsonOr,
  printListOr,
  withContext,
} from "./shared.ts";

/** The option each schema field comes from, to name it in an error. */
const FLAGS = {
  name: "--name",
  type: "--type",
  code: "--code",
  trafficG: "--traffic-g",
  traffixLimitTime: "--traffic-hours",
  vipDay: "--days",
  forMoney: "--money",
  discount: "--discount",
  useNumPerUser: "--per-user",
  NumberOfAuthorizations: "--total",
  expireTime: "--expire",
  count: "--count",
};

interface CouponOptions {
  type: CouponType;
  name?: string;
  trafficG?: string;
  trafficHours?: string;
  days?: string;
  money?: string;
  discount?: string;
  perUser?: string;
  total?: string;
  expire?: string;
  taobao?: boolean;
  data?: string;
  json?: boolean;
}

/** The coupon fields of the options, as update_coupon and batch_create take them. */
function couponFields(options: CouponOptions) {
  const hours = numberOption("--traffic-hours", options.trafficHours);
  return {
    name: options.name,
    type: options.type,
    trafficG: numberOption("--traffic-g", options.trafficG),
    traffixHaveLimitTime: hours !== undefined,
    traffixLimitTime: hours,
    vipDay: numberOption("--days", options.days),
    forMoney: numberOption("--money", options.money),
    discount: numberOption("--discount", options.discount),
    useNumPerUser: numberOption("--per-user", options.perUser),
    NumberOfAuthorizations: numberOption("--total", options.total),
    expireTime: options.expire,
    taobao: options.taobao,
  };
}

/** The options create and batch share. */
function withCouponOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--type <type>", "what the coupon gives").choices(COUPON_TYPES).makeOptionMandatory(),
    )
    .option("--name <name>", "name shown in the manager")
    .option("--traffic-g <G>", "freeUse: traffic in G (1024^3 bytes)")
    .option("--traffic-hours <h>", "freeUse: the traffic expires this many hours after redeeming")
    .option("--days <n>", "freeTime: days of time package")
    .option("--money <yuan>", "cash: yuan off an order, at most 2 decimals")
    .option("--discount <rate>", "discount: 0.1 to 1 (0.9 = 10% off), or 0 for a free order (免单)")
    .option("--per-user <n>", "uses per customer, 0 = no limit (default 1)")
    .option("--total <n>", "uses in all, 0 = no limit (default 1)")
    .option("--expire <YYYY-MM-DD>", "last day it can be used (timezone setting); default never")
    .addOption(dataOption())
    .option("--json", "print as JSON");
}

const expiry = (timeZone: string, c: Coupon) =>
  c.expireTime === 0 ? "never expires" : `until ${businessDay(c.expireTime, timeZone)}`;

const couponLine = (timeZone: string) => (c: Coupon) =>
  [
    c._id,
    c.code,
    c.type.padEnd(8),
    couponEffectText(couponEffect(c)),
    `used ${c.authTimes}/${c.NumberOfAuthorizations || "∞"}`,
    `per user ${c.useNumPerUser || "∞"}`,
    expiry(timeZone, c),
    c.taobao ? "taobao" : "",
    c.ownerEmail ? `owner ${c.ownerEmail}` : "",
    c.name,
  ]
    .filter(Boolean)
    .join("  ");

/** A coupon's id, found by id or code; an unknown one is an error. */
async function couponId(ctx: AppContext, idOrCode: string): Promise<string> {
  const coupon = ID_PATTERN.test(idOrCode)
    ? await findCouponById(ctx.db, idOrCode)
    : await findCouponByCode(ctx.db, idOrCode);
  if (!coupon) die(`no coupon with id or code ${idOrCode}`);
  return coupon.id;
}

export function registerCouponCommands(program: Command) {
  const coupon = program
    .command("coupon")
    .description("coupons (优惠券管理): trial, cash and discount codes");

  coupon
    .command("list")
    .description("list every coupon, newest first (customers' lucky-draw coupons with their owner)")
    .addOption(new Option("--type <type>", "only coupons of this type").choices(COUPON_TYPES))
    .option("--taobao", "only Taobao coupons")
    .addOption(dataOption())
    .option("--json", "print as JSON")
    .action(async (options: { type?: CouponType; taobao?: boolean; data?: string; json?: boolean }) => {
      await withContext(options.data, async (ctx) => {
        const coupons = (await listCoupons(ctx)).filter(
          (c) => (!options.type || c.type === options.type) && (!options.taobao || c.taobao),
        );
        printListOr(
          options.json ?? false,
          coupons,
          couponLine(await ctx.settings.get("timezone")),
          "no coupons",
        );
      });
    });

  withCouponOptions(
    coupon
      .command("create")
      .description("add one coupon")
      .option("--code <code>", "the code customers type (letters, digits, - and _); default 6 random letters")
      .option("--taobao", "mark it a Taobao coupon"),
  ).action(async (options: CouponOptions & { code?: string }) => {
    const input = parseOrDie(couponInput, { ...couponFields(options), code: options.code }, FLAGS);
    await withContext(options.data, async (ctx) => {
      const line = couponLine(await ctx.settings.get("timezone"));
      printJsonOr(options.json ?? false, await saveCoupon(ctx, input), (c) => `created ${line(c)}`);
    });
  });

  withCouponOptions(
    coupon
      .command("batch")
      .description("add N Taobao coupons at once, each with its own random 6-letter code; prints the codes")
      .requiredOption("--count <n>", "how many, 1 to 1000")
      .option(
        "--out <file>",
        "write the codes there, one per line (like the manager's a.txt), not to stdout",
      ),
  ).action(async (options: CouponOptions & { count: string; out?: string }) => {
    if (options.out !== undefined && existsSync(options.out)) die(`refusing to overwrite ${options.out}`);
    const input = parseOrDie(
      couponBatchInput,
      { ...couponFields(options), taobao: true, count: numberOption("--count", options.count) },
      FLAGS,
    );
    const made = await withContext(options.data, async (ctx) => await createCouponBatch(ctx, input));
    const codes = made.map((c) => c.code).join("\n");
    if (options.out !== undefined) {
      writeFileSync(options.out, `${codes}\n`);
      printJsonOr(options.json ?? false, made, (list) => `wrote ${list.length} codes to ${options.out}`);
    } else printJsonOr(options.json ?? false, made, () => codes);
  });

  coupon
    .command("delete")
    .description("delete coupons by id or code (their usage records stay)")
    .argument("<id-or-code...>", "coupon ids or codes")
    .addOption(dataOption())
    .action(async (idsOrCodes: string[], options: { data?: string }) => {
      const deleted = await withContext(
        options.data,
        async (ctx) =>
          await deleteCoupons(ctx, await Promise.all(idsOrCodes.map((value) => couponId(ctx, value)))),
      );
      console.log(`deleted ${deleted} coupon${deleted === 1 ? "" : "s"}`);
    });
}
