/**
 * Agencies. An owner is a row of `agencies`; its customers carry the owner's id in
 * users.agency_id and is_agency = 1 (the reduced menu, no shop, draws or transfers). The owner
 * allocates its own permanent traffic to a customer: agency_spend on the owner and
 * agency_allocate on the customer, in one transaction. Detaching a customer leaves the traffic it
 * was given with it (it is the customer's ledger; taking it back would be a new allocation).
 */
import type { AppContext } from "../../context.ts";
import { type Db, tx } from "../../db/db.ts";
import { GB } from "../../lib/traffic.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import { recordAudit, recordStaffAudit } from "../audit/service.ts";
import { changeTraffic } from "../ledger/service.ts";
import { transferMinimumG } from "../push/service.ts";
import { permanentTraffic } from "../trial/service.ts";
import type { UserRow } from "../user/row.ts";
import { findUserByEmail, findUserById } from "../user/service.ts";
import { type AgencyRow, agencyOf } from "./owner.ts";
import {
  type Agency,
  type AgencyCustomers,
  AgencyMsg,
  ALLOCATIONS_PER_HOUR,
  type AllocateInput,
  type AllocateResult,
  type AttachCustomerInput,
  type SetAgencyInput,
} from "./schema.ts";

/** The owner's page lists at most this many customers. */
const CUSTOMER_LIMIT = 1000;

const ALLOCATIONS: RateRule = {
  name: "agency-allocations",
  max: ALLOCATIONS_PER_HOUR,
  windowMs: 60 * 60_000,
};

/** G for messages: at most two decimals, no trailing zeros. */
const g = (bytes: number) => String(Number((bytes / GB).toFixed(2)));

async function requireUser(ctx: AppContext, email: string): Promise<UserRow> {
  const user = await findUserByEmail(ctx, email);
  if (!user) throw new RpcError(Code.notFound, AgencyMsg.userNotFound(email));
  return user;
}

async function requireAgency(ctx: AppContext, email: string): Promise<{ owner: UserRow; agency: AgencyRow }> {
  const owner = await requireUser(ctx, email);
  const agency = await agencyOf(ctx.db, owner.id);
  if (!agency) throw new RpcError(Code.notFound, AgencyMsg.notAnAgency(email));
  return { owner, agency };
}

async function customerCount(db: Db, ownerId: string): Promise<number> {
  return (
    (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM users WHERE agency_id = ?", ownerId))?.n ?? 0
  );
}

async function toAgency(db: Db, owner: UserRow, row: AgencyRow): Promise<Agency> {
  return {
    ownerId: owner.id,
    email: owner.email,
    name: row.name,
    customerCount: await customerCount(db, owner.id),
    createTime: row.create_time,
  };
}

/** Makes the user an agency owner, or renames its agency. An agency's customer cannot own one. */
export async function setAgency(ctx: AppContext, input: SetAgencyInput, now = Date.now()): Promise<Agency> {
  return await tx(ctx.db, async () => {
    const owner = await requireUser(ctx, input.email);
    if (owner.is_agency === 1) throw new RpcError(Code.forbidden, AgencyMsg.ownerIsCustomer);
    const before = await agencyOf(ctx.db, owner.id);
    const row = (await ctx.db.get<AgencyRow>(
      `INSERT INTO agencies (user_id, name, create_time) VALUES (?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET name = excluded.name RETURNING *`,
      owner.id,
      input.name,
      now,
    )) as AgencyRow;
    if (before?.name !== row.name)
      await recordAudit(ctx.db, {
        action: "agency.set",
        target: owner.email,
        diff: { name: before ? { old: before.name, new: row.name } : { new: row.name } },
      });
    return await toAgency(ctx.db, owner, row);
  });
}

/** Ends an agency: its customers are detached (they keep their traffic) in the same transaction. */
export async function unsetAgency(ctx: AppContext, input: { email: string }): Promise<{ detached: number }> {
  return tx(ctx.db, async () => {
    const { owner, agency } = await requireAgency(ctx, input.email);
    const detached = (
      await ctx.db.run("UPDATE users SET agency_id = NULL, is_agency = 0 WHERE agency_id = ?", owner.id)
    ).changes;
    await ctx.db.run("DELETE FROM agencies WHERE user_id = ?", owner.id);
    await recordAudit(ctx.db, {
      action: "agency.unset",
      target: owner.email,
      diff: { name: { old: agency.name }, customers: { old: detached, new: 0 } },
    });
    return { detached };
  });
}

/** Attaches a normal user to an agency: it then sees the agency menu. Attaching twice is a no-op. */
export async function attachCustomer(ctx: AppContext, input: AttachCustomerInput): Promise<Agency> {
  return await tx(ctx.db, () => attachInTx(ctx, input));
}

async function attachInTx(ctx: AppContext, input: AttachCustomerInput): Promise<Agency> {
  const { owner, agency } = await requireAgency(ctx, input.agency_email);
  const customer = await requireUser(ctx, input.customer_email);
  if (customer.id === owner.id) throw new RpcError(Code.badInput, AgencyMsg.customerIsSelf);
  if (await agencyOf(ctx.db, customer.id)) throw new RpcError(Code.forbidden, AgencyMsg.customerIsOwner);
  if (customer.type !== "normal") throw new RpcError(Code.forbidden, AgencyMsg.customerNotNormal);
  const previous = await ctx.db.get<{ agency_id: string | null }>(
    "SELECT agency_id FROM users WHERE id = ?",
    customer.id,
  );
  const attached = (
    await ctx.db.run(
      `UPDATE users SET agency_id = ?1, is_agency = 1
       WHERE id = ?2 AND (agency_id IS NULL OR agency_id = ?1)`,
      owner.id,
      customer.id,
    )
  ).changes;
  if (!attached) throw new RpcError(Code.forbidden, AgencyMsg.customerOfOther);
  if (previous?.agency_id !== owner.id)
    await recordAudit(ctx.db, {
      action: "agency.attach",
      target: customer.email,
      diff: { agency: { old: "", new: owner.email } },
    });
  return await toAgency(ctx.db, owner, agency);
}

/** Detaches a customer from its agency: the agency menu goes, the traffic it was given stays. */
export async function detachCustomer(ctx: AppContext, input: AttachCustomerInput): Promise<Agency> {
  return await tx(ctx.db, () => detachInTx(ctx, input));
}

async function detachInTx(ctx: AppContext, input: AttachCustomerInput): Promise<Agency> {
  const { owner, agency } = await requireAgency(ctx, input.agency_email);
  const customer = await requireUser(ctx, input.customer_email);
  const detached = (
    await ctx.db.run(
      "UPDATE users SET agency_id = NULL, is_agency = 0 WHERE id = ? AND agency_id = ?",
      customer.id,
      owner.id,
    )
  ).changes;
  if (!detached) throw new RpcError(Code.notFound, AgencyMsg.notAttached);
  await recordAudit(ctx.db, {
    action: "agency.detach",
    target: customer.email,
    diff: { agency: { old: owner.email, new: "" } },
  });
  return await toAgency(ctx.db, owner, agency);
}

async function requireOwnAgency(ctx: AppContext, ownerId: string): Promise<AgencyRow> {
  const agency = await agencyOf(ctx.db, ownerId);
  if (!agency) throw new RpcError(Code.forbidden, AgencyMsg.callerNotOwner);
  return agency;
}

/** A customer of this owner by id or e-mail; anyone else (or nobody) is the same 1004. */
async function requireOwnCustomer(
  ctx: AppContext,
  ownerId: string,
  who: { customer_id?: string; email?: string },
) {
  const customer =
    who.customer_id !== undefined
      ? await findUserById(ctx, who.customer_id)
      : await findUserByEmail(ctx, who.email ?? "");
  const agencyId = customer
    ? (
        await ctx.db.get<{ agency_id: string | null }>(
          "SELECT agency_id FROM users WHERE id = ?",
          customer.id,
        )
      )?.agency_id
    : null;
  if (!customer || agencyId !== ownerId) throw new RpcError(Code.notFound, AgencyMsg.notYourCustomer);
  return customer;
}

/**
 * The owner gives `trafficG` of its permanent traffic (never trial traffic) to one of its
 * customers: 1037 below the transfer minimum, 1003 when the caller owns no agency, 1004 when the
 * customer is not its, 1038 when it has not that much permanent traffic, 1005 after
 * ALLOCATIONS_PER_HOUR this hour (refusals do not count).
 */
export async function allocateTraffic(
  ctx: AppContext,
  ownerId: string,
  input: AllocateInput,
  now = Date.now(),
): Promise<AllocateResult> {
  const min = await transferMinimumG(ctx);
  if (input.trafficG < min) throw new RpcError(Code.pushAmountTooLow, AgencyMsg.amountTooLow(min));
  return ctx.limiter.succeeding(
    [{ rule: ALLOCATIONS, key: ownerId }],
    () => new RpcError(Code.tooManyRequests, AgencyMsg.tooFrequent),
    async () => await moveAllocation(ctx, ownerId, input, now),
    now,
  );
}

/**
 * The check and both ledger rows of one allocation, in one transaction, so concurrent
 * allocations can never spend the same traffic twice.
 */
async function moveAllocation(
  ctx: AppContext,
  ownerId: string,
  input: AllocateInput,
  now: number,
): Promise<AllocateResult> {
  const bytes = Math.round(input.trafficG * GB);
  const timeZone = await ctx.settings.get("timezone");
  return tx(ctx.db, async () => {
    const agency = await requireOwnAgency(ctx, ownerId);
    const owner = (await findUserById(ctx, ownerId)) as UserRow;
    const customer = await requireOwnCustomer(ctx, ownerId, input);
    const available = await permanentTraffic(ctx.db, ownerId, now);
    if (available < bytes) throw new RpcError(Code.pushNotEnoughTraffic, AgencyMsg.notEnough(g(available)));
    const spent = await changeTraffic(ctx.db, {
      userId: ownerId,
      type: "agency_spend",
      desc: AgencyMsg.spendDesc(g(bytes), customer.email),
      traffic: -bytes,
      now,
      timeZone,
    });
    const received = await changeTraffic(ctx.db, {
      userId: customer.id,
      type: "agency_allocate",
      desc: AgencyMsg.allocateDesc(g(bytes), agency.name || owner.email),
      traffic: bytes,
      now,
      timeZone,
    });
    // An operator's `ferry agency allocate` is recorded; an owner's own allocation is not staff's.
    await recordStaffAudit(ctx.db, {
      action: "agency.allocate",
      target: customer.email,
      diff: { traffic: { old: received.traffic - bytes, new: received.traffic }, from: { new: owner.email } },
    });
    return {
      customerEmail: customer.email,
      allocated: bytes,
      ownerTraffic: spent.traffic,
      customerTraffic: received.traffic,
    };
  });
}

/** The owner's customers with their traffic, and what the owner may still allocate. */
export async function agencyCustomers(
  ctx: AppContext,
  ownerId: string,
  now = Date.now(),
): Promise<AgencyCustomers> {
  const agency = await requireOwnAgency(ctx, ownerId);
  const customers = await ctx.db.all<AgencyCustomers["customers"][number]>(
    `SELECT u.id AS _id, u.email, b.traffic, b.spend_traffic AS "spendTraffic",
         u.vip_expire_time AS "vipExpireTime",
         COALESCE((SELECT SUM(r.traffic_change) FROM traffic_records r
                   WHERE r.user_id = u.id AND r.type = 'agency_allocate'), 0) AS allocated
       FROM users u JOIN balances b ON b.user_id = u.id
       WHERE u.agency_id = ?1 ORDER BY u.create_time DESC, u.id LIMIT ?2`,
    ownerId,
    CUSTOMER_LIMIT,
  );
  return {
    name: agency.name,
    available: await permanentTraffic(ctx.db, ownerId, now),
    minAllocateG: await transferMinimumG(ctx),
    customers,
  };
}

/** Every agency with its customer count, newest first (the CLI and admins). */
export async function listAgencies(ctx: AppContext): Promise<Agency[]> {
  const rows = await ctx.db.all<
    AgencyRow & { email: string; customerCount: number }
  >(`SELECT a.*, u.email, (SELECT COUNT(*) FROM users c WHERE c.agency_id = a.user_id) AS "customerCount"
       FROM agencies a JOIN users u ON u.id = a.user_id ORDER BY a.create_time DESC`);
  return rows.map((r) => ({
    ownerId: r.user_id,
    email: r.email,
    name: r.name,
    customerCount: r.customerCount,
    createTime: r.create_time,
  }));
}
