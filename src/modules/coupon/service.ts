/**
 * The coupon model, built once: lookup, the order-coupon checks with the seed's codes, the
 * discount a coupon gives, and usage records that count against the limits until restored.
 * Callers run these inside their own transaction.
 */
import type { AppContext } from "../../context.ts";
import { type Db, greatestSql, nocaseEqualsSql, rowOrderSql, tx } from "../../db/db.ts";
import { fenToYuan } from "../../lib/money.ts";
import { endOfBusinessDay } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId } from "../../rpc/ids.ts";
import { createDiff, recordAudit, recordSave } from "../audit/service.ts";
import { OrderMsg } from "../order/schema.ts";
import {
  type Coupon,
  type CouponBatchInput,
  type CouponInput,
  CouponMsg,
  type CouponType,
  type CouponUseRecord,
  TRIAL_COUPON_TYPES,
} from "./schema.ts";

export interface CouponRow {
  id: string;
  name: string;
  type: CouponType;
  code: string;
  taobao: number;
  traffic: number;
  traffic_has_limit_time: number;
  traffic_limit_hours: number;
  vip_day: number;
  for_money_fen: number;
  discount: number;
  use_num_per_user: number;
  number_of_authorizations: number;
  auth_times: number;
  expire_time: number;
  create_time: number;
  /** A coupon given to one customer (a lucky-draw prize); null = anyone with the code. */
  owner_user_id: string | null;
}

export async function findCouponByCode(db: Db, code: string): Promise<CouponRow | null> {
  return await db.get<CouponRow>(`SELECT * FROM coupons WHERE ${nocaseEqualsSql(db, "code")}`, code.trim());
}

export async function findCouponById(db: Db, id: string): Promise<CouponRow | null> {
  return await db.get<CouponRow>("SELECT * FROM coupons WHERE id = ?", id);
}

/** Uses of a coupon by a user that still count (not restored). */
export async function activeUsesByUser(db: Db, couponId: string, userId: string): Promise<number> {
  return (
    (
      await db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM coupon_uses WHERE coupon_id = ? AND user_id = ? AND is_delete = 0",
        couponId,
        userId,
      )
    )?.n ?? 0
  );
}

/** Another customer's own coupon is treated as unknown, so its code tells nothing. */
export const usableBy = (coupon: CouponRow, userId: string) =>
  coupon.owner_user_id === null || coupon.owner_user_id === userId;

export const isExpired = (coupon: CouponRow, now: number) =>
  coupon.expire_time > 0 && now > coupon.expire_time;

/**
 * The checks for putting a coupon on an order (seed 000 §8): unknown 1016 (shown as 优惠券错误),
 * expired 1029, a trial coupon 1022, this user's or all uses spent 1017. `alreadyHeld` counts a use
 * the caller already holds (re-checking an order's own coupon at payment time).
 */
export async function checkOrderCoupon(
  db: Db,
  coupon: CouponRow | null,
  userId: string,
  now: number,
  alreadyHeld = 0,
): Promise<CouponRow> {
  if (!coupon || !usableBy(coupon, userId)) throw new RpcError(Code.couponNotFound, OrderMsg.couponError);
  if (isExpired(coupon, now)) throw new RpcError(Code.couponExpired, OrderMsg.couponExpired);
  if (TRIAL_COUPON_TYPES.includes(coupon.type))
    throw new RpcError(Code.couponTrialNotAllowed, OrderMsg.couponTrial);
  const total = coupon.number_of_authorizations;
  if (total > 0 && coupon.auth_times - alreadyHeld >= total)
    throw new RpcError(Code.couponUsedUp, OrderMsg.couponUsedUp);
  const perUser = coupon.use_num_per_user;
  if (perUser > 0 && (await activeUsesByUser(db, coupon.id, userId)) - alreadyHeld >= perUser)
    throw new RpcError(Code.couponUsedUp, OrderMsg.couponUsedUp);
  return coupon;
}

/**
 * Fen taken off a price: a cash coupon up to the price, a discount coupon (0.9 = 10% off) with the
 * price to pay rounded half up to the fen. The rate goes through basis points so that float noise
 * (1005 × 0.9 = 904.4999…) cannot flip the rounding.
 */
export function couponDiscountFen(coupon: CouponRow, priceFen: number): number {
  if (coupon.type === "cash") return Math.min(coupon.for_money_fen, priceFen);
  if (coupon.type === "discount") {
    const basisPoints = Math.round(Math.min(1, Math.max(0, coupon.discount)) * 10_000);
    return priceFen - Math.round((priceFen * basisPoints) / 10_000);
  }
  return 0;
}

export interface CouponUse {
  coupon: CouponRow;
  userId: string;
  orderId?: string | null;
  addTraffic?: number;
  addDay?: number;
  addMoneyFen?: number;
  now: number;
}

/** Records a use and counts it against the coupon's total. Returns the usage record id. */
export async function recordCouponUse(db: Db, use: CouponUse): Promise<string> {
  const id = newId(use.now);
  await db.run(
    `INSERT INTO coupon_uses (id, coupon_id, user_id, order_id, code, type, add_traffic, add_day, add_money_fen, discount, time)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    id,
    use.coupon.id,
    use.userId,
    use.orderId ?? null,
    use.coupon.code,
    use.coupon.type,
    use.addTraffic ?? 0,
    use.addDay ?? 0,
    use.addMoneyFen ?? 0,
    use.coupon.type === "discount" ? use.coupon.discount : 1,
    use.now,
  );
  await db.run("UPDATE coupons SET auth_times = auth_times + 1 WHERE id = ?", use.coupon.id);
  return id;
}

/** Marks a use restored (is_delete) and gives the use back to the coupon. Restoring twice does nothing. */
export async function restoreCouponUse(db: Db, useId: string, now: number): Promise<void> {
  const use = await db.get<{ coupon_id: string }>(
    "UPDATE coupon_uses SET is_delete = 1, restore_time = ? WHERE id = ? AND is_delete = 0 RETURNING coupon_id",
    now,
    useId,
  );
  if (!use) return;
  await db.run(
    `UPDATE coupons SET auth_times = ${greatestSql(db, "auth_times - 1", "0")} WHERE id = ?`,
    use.coupon_id,
  );
}

/** A coupon row with its owner's e-mail (null when anyone may use it, or the owner is gone). */
type ListedCouponRow = CouponRow & { owner_email?: string | null };

const LISTED_COUPON_SQL =
  "SELECT c.*, u.email AS owner_email FROM coupons c LEFT JOIN users u ON u.id = c.owner_user_id";

export function toCoupon(row: ListedCouponRow): Coupon {
  return {
    _id: row.id,
    name: row.name,
    type: row.type,
    code: row.code,
    taobao: row.taobao === 1,
    traffic: row.traffic,
    traffixHaveLimitTime: row.traffic_has_limit_time === 1,
    traffixLimitTime: row.traffic_limit_hours,
    vipDay: row.vip_day,
    forMoney: fenToYuan(row.for_money_fen),
    discount: row.discount,
    useNumPerUser: row.use_num_per_user,
    NumberOfAuthorizations: row.number_of_authorizations,
    authTimes: row.auth_times,
    expireTime: row.expire_time,
    createTime: row.create_time,
    ownerEmail: row.owner_email ?? "",
  };
}

async function couponById(db: Db, id: string): Promise<Coupon> {
  const row = await db.get<ListedCouponRow>(`${LISTED_COUPON_SQL} WHERE c.id = ?`, id);
  if (!row) throw new RpcError(Code.notFound, CouponMsg.notFound);
  return toCoupon(row);
}

const CODE_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
export const RANDOM_CODE_LENGTH = 6;

/** A random code of uppercase A–Z (seed 000 §9, seed 001 §9: length 6). */
export function randomCouponCode(length = RANDOM_CODE_LENGTH): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  // 256 is not a multiple of 26; the bias (under 1%) does not matter for a code checked against the table.
  return Array.from(bytes, (b) => CODE_LETTERS[b % CODE_LETTERS.length]).join("");
}

async function codeTaken(db: Db, code: string, exceptId: string | undefined): Promise<boolean> {
  const holder = await db.get<{ id: string }>(
    `SELECT id FROM coupons WHERE ${nocaseEqualsSql(db, "code")}`,
    code,
  );
  return holder !== null && holder.id !== exceptId;
}

/** A random code no coupon has yet (in the caller's transaction, the unique index backing it). */
export async function unusedRandomCode(db: Db): Promise<string> {
  for (;;) {
    const code = randomCouponCode();
    if (!(await codeTaken(db, code, undefined))) return code;
  }
}

/** expireTime of the input as stored: the end of the given day in the `timezone` setting, or 0 for never. */
async function expireTimeMs(ctx: AppContext, expireTime: string | number): Promise<number> {
  if (typeof expireTime === "number") return expireTime;
  return expireTime === "" ? 0 : endOfBusinessDay(expireTime, await ctx.settings.get("timezone"));
}

type CouponFields = Omit<CouponInput, "_id" | "code">;

/** The stored columns of a coupon's fields, in the order of COUPON_COLUMNS. */
async function couponValues(ctx: AppContext, input: CouponFields, code: string) {
  const expireTime = await expireTimeMs(ctx, input.expireTime);
  return [
    input.name,
    input.type,
    code,
    input.taobao ? 1 : 0,
    input.traffic,
    input.traffixHaveLimitTime ? 1 : 0,
    input.traffixLimitTime,
    input.vipDay,
    input.forMoney,
    input.discount,
    input.useNumPerUser,
    input.NumberOfAuthorizations,
    expireTime,
  ] as const;
}

const COUPON_COLUMNS = `name, type, code, taobao, traffic, traffic_has_limit_time, traffic_limit_hours, vip_day,
  for_money_fen, discount, use_num_per_user, number_of_authorizations, expire_time`;

/** Inserts a coupon (in the caller's transaction); an `ownerUserId` makes it that customer's own. */
export async function insertCoupon(
  ctx: AppContext,
  input: CouponFields,
  code: string,
  now: number,
  ownerUserId: string | null = null,
): Promise<string> {
  const id = newId(now);
  await ctx.db.run(
    `INSERT INTO coupons (${COUPON_COLUMNS}, id, create_time, owner_user_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ...(await couponValues(ctx, input, code)),
    id,
    now,
    ownerUserId,
  );
  return id;
}

/**
 * Creates (no `_id`) or replaces a coupon. Uses already made stay counted (authTimes is kept), and
 * so does the owner of a lucky-draw coupon; lowered limits apply to the next use and to orders not
 * yet paid (checked again at dobuy).
 */
export async function saveCoupon(ctx: AppContext, input: CouponInput, now = Date.now()): Promise<Coupon> {
  return await tx(ctx.db, async () => {
    const code = input.code || (await unusedRandomCode(ctx.db));
    if (await codeTaken(ctx.db, code, input._id))
      throw new RpcError(Code.badInput, `${CouponMsg.codeTaken}: ${code}`);
    let id = input._id;
    const before = id ? await couponById(ctx.db, id).catch(() => null) : null;
    if (id) {
      const changed = (
        await ctx.db.run(
          `UPDATE coupons SET name = ?, type = ?, code = ?, taobao = ?, traffic = ?, traffic_has_limit_time = ?,
             traffic_limit_hours = ?, vip_day = ?, for_money_fen = ?, discount = ?, use_num_per_user = ?,
             number_of_authorizations = ?, expire_time = ?
           WHERE id = ?`,
          ...(await couponValues(ctx, input, code)),
          id,
        )
      ).changes;
      if (!changed) throw new RpcError(Code.notFound, CouponMsg.notFound);
    } else {
      id = await insertCoupon(ctx, input, code, now);
    }
    const saved = await couponById(ctx.db, id);
    await recordSave(ctx.db, "coupon", saved.code, before, saved, UNAUDITED_COUPON_FIELDS);
    return saved;
  });
}

/**
 * The Taobao flow (seed 001 §4): `count` coupons of the same fields in one transaction, each with
 * its own random code that no coupon has (the unique index backs the check). All or none.
 */
export async function createCouponBatch(
  ctx: AppContext,
  input: CouponBatchInput,
  now = Date.now(),
): Promise<Coupon[]> {
  const { count, ...fields } = input;
  return await tx(ctx.db, async () => {
    const coupons: Coupon[] = [];
    for (let i = 0; i < count; i += 1) {
      const id = await insertCoupon(ctx, fields, await unusedRandomCode(ctx.db), now);
      coupons.push(await couponById(ctx.db, id));
    }
    // One row for the batch: its fields once, and the codes made.
    const [first] = coupons;
    const { code, ...shared } = first as Coupon;
    const diff = createDiff(shared, ["_id", ...UNAUDITED_COUPON_FIELDS]);
    diff.codes = { new: coupons.map((coupon) => coupon.code) };
    await recordAudit(ctx.db, { action: "coupon.batch_create", target: `${count}`, diff });
    return coupons;
  });
}

/** What a coupon's audit rows leave out: counts that uses move, not staff. */
const UNAUDITED_COUPON_FIELDS = ["authTimes", "createTime"];

/**
 * Deletes coupons; returns how many existed. Their usage records stay for the records page, and an
 * unpaid order still holding one of them is refused at dobuy (优惠券错误) until its coupon is taken off.
 */
export async function deleteCoupons(ctx: AppContext, ids: readonly string[]): Promise<number> {
  return await tx(ctx.db, async () => {
    const remove = "DELETE FROM coupons WHERE id = ?";
    const removed: { code: string; name: string }[] = [];
    for (const id of new Set(ids)) {
      const coupon = await ctx.db.get<{ code: string; name: string }>(
        "SELECT code, name FROM coupons WHERE id = ?",
        id,
      );
      if (coupon && (await ctx.db.run(remove, id)).changes > 0) removed.push(coupon);
    }
    if (removed.length > 0) {
      await recordAudit(ctx.db, {
        action: "coupon.delete",
        target: removed.map((coupon) => coupon.code).join(","),
        diff: { coupons: { old: removed } },
      });
    }
    return removed.length;
  });
}

/**
 * Every coupon, newest first (the manager filters by type and Taobao flag on the client), the
 * customers' own lucky-draw coupons too, with their owner's e-mail.
 */
export async function listCoupons(ctx: AppContext): Promise<Coupon[]> {
  return (
    await ctx.db.all<ListedCouponRow>(
      `${LISTED_COUPON_SQL} ORDER BY c.create_time DESC, ${rowOrderSql(ctx.db, "c")} DESC`,
    )
  ).map(toCoupon);
}

interface CouponUseRow {
  id: string;
  email: string | null;
  code: string;
  type: CouponType;
  add_traffic: number;
  add_day: number;
  add_money_fen: number;
  discount: number;
  time: number;
  is_delete: number;
}

/** The most recent `limit` usage records, newest first (seed 001 §2.13); email "" when the user is gone. */
export async function listCouponUses(ctx: AppContext, limit: number): Promise<CouponUseRecord[]> {
  return (
    await ctx.db.all<CouponUseRow>(
      `SELECT cu.id, (SELECT email FROM users WHERE id = cu.user_id) AS email, cu.code, cu.type, cu.add_traffic,
         cu.add_day, cu.add_money_fen, cu.discount, cu.time, cu.is_delete
       FROM coupon_uses cu ORDER BY cu.time DESC, ${rowOrderSql(ctx.db, "cu")} DESC LIMIT ?`,
      limit,
    )
  ).map((row) => ({
    _id: row.id,
    email: row.email ?? "",
    code: row.code,
    type: row.type,
    add_traffic: row.add_traffic,
    add_day: row.add_day,
    add_money: fenToYuan(row.add_money_fen),
    discount: row.discount,
    time: row.time,
    is_delete: row.is_delete === 1,
  }));
}
