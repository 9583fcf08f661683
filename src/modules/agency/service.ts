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

function requireUser(ctx: AppContext, email: string): UserRow {
  const user = findUserByEmail(ctx, email);
  if (!user) throw new RpcError(Code.notFound, AgencyMsg.userNotFound(email));
  return user;
}

function requireAgency(ctx: AppContext, email: string): { owner: UserRow; agency: AgencyRow } {
  const owner = requireUser(ctx, email);
  const agency = agencyOf(ctx.db, owner.id);
  if (!agency) throw new RpcError(Code.notFound, AgencyMsg.notAnAgency(email));
  return { owner, agency };
}

function customerCount(db: Db, ownerId: string): number {
  return (
    db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM users WHERE agency_id = ?").get(ownerId)
      ?.n ?? 0
  );
}

function toAgency(db: Db, owner: UserRow, row: AgencyRow): Agency {
  return {
    ownerId: owner.id,
    email: owner.email,
    name: row.name,
    customerCount: customerCount(db, owner.id),
    createTime: row.create_time,
  };
}

/** Makes the user an agency owner, or renames its agency. An agency's customer cannot own one. */
export function setAgency(ctx: AppContext, input: SetAgencyInput, now = Date.now()): Agency {
  const owner = requireUser(ctx, input.email);
  if (owner.is_agency === 1) throw new RpcError(Code.forbidden, AgencyMsg.ownerIsCustomer);
  const row = ctx.db
    .query<AgencyRow, [string, string, number]>(
      `INSERT INTO agencies (user_id, name, create_time) VALUES (?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET name = excluded.name RETURNING *`,
    )
    .get(owner.id, input.name, now) as AgencyRow;
  return toAgency(ctx.db, owner, row);
}

/** Ends an agency: its customers are detached (they keep their traffic) in the same transaction. */
export function unsetAgency(ctx: AppContext, input: { email: string }): { detached: number } {
  const { owner } = requireAgency(ctx, input.email);
  return tx(ctx.db, () => {
    const detached = ctx.db
      .query("UPDATE users SET agency_id = NULL, is_agency = 0 WHERE agency_id = ?")
      .run(owner.id).changes;
    ctx.db.query("DELETE FROM agencies WHERE user_id = ?").run(owner.id);
    return { detached };
  });
}

/** Attaches a normal user to an agency: it then sees the agency menu. Attaching twice is a no-op. */
export function attachCustomer(ctx: AppContext, input: AttachCustomerInput): Agency {
  const { owner, agency } = requireAgency(ctx, input.agency_email);
  const customer = requireUser(ctx, input.customer_email);
  if (customer.id === owner.id) throw new RpcError(Code.badInput, AgencyMsg.customerIsSelf);
  if (agencyOf(ctx.db, customer.id)) throw new RpcError(Code.forbidden, AgencyMsg.customerIsOwner);
  if (customer.type !== "normal") throw new RpcError(Code.forbidden, AgencyMsg.customerNotNormal);
  const attached = ctx.db
    .query(
      `UPDATE users SET agency_id = ?1, is_agency = 1
       WHERE id = ?2 AND (agency_id IS NULL OR agency_id = ?1)`,
    )
    .run(owner.id, customer.id).changes;
  if (!attached) throw new RpcError(Code.forbidden, AgencyMsg.customerOfOther);
  return toAgency(ctx.db, owner, agency);
}

/** Detaches a customer from its agency: the agency menu goes, the traffic it was given stays. */
export function detachCustomer(ctx: AppContext, input: AttachCustomerInput): Agency {
  const { owner, agency } = requireAgency(ctx, input.agency_email);
  const customer = requireUser(ctx, input.customer_email);
  const detached = ctx.db
    .query("UPDATE users SET agency_id = NULL, is_agency = 0 WHERE id = ? AND agency_id = ?")
    .run(customer.id, owner.id).changes;
  if (!detached) throw new RpcError(Code.notFound, AgencyMsg.notAttached);
  return toAgency(ctx.db, owner, agency);
}

function requireOwnAgency(ctx: AppContext, ownerId: string): AgencyRow {
  const agency = agencyOf(ctx.db, ownerId);
  if (!agency) throw new RpcError(Code.forbidden, AgencyMsg.callerNotOwner);
  return agency;
}

/** A customer of this owner by id or e-mail; anyone else (or nobody) is the same 1004. */
function requireOwnCustomer(ctx: AppContext, ownerId: string, who: { customer_id?: string; email?: string }) {
  const customer =
    who.customer_id !== undefined
      ? findUserById(ctx, who.customer_id)
      : findUserByEmail(ctx, who.email ?? "");
  const agencyId = customer
    ? ctx.db
        .query<{ agency_id: string | null }, [string]>("SELECT agency_id FROM users WHERE id = ?")
        .get(customer.id)?.agency_id
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
export function allocateTraffic(
  ctx: AppContext,
  ownerId: string,
  input: AllocateInput,
  now = Date.now(),
): AllocateResult {
  const min = transferMinimumG(ctx);
  if (input.trafficG < min) throw new RpcError(Code.pushAmountTooLow, AgencyMsg.amountTooLow(min));
  return ctx.limiter.succeeding(
    [{ rule: ALLOCATIONS, key: ownerId }],
    () => new RpcError(Code.tooManyRequests, AgencyMsg.tooFrequent),
    () => moveAllocation(ctx, ownerId, input, now),
    now,
  );
}

/**
 * The check and both ledger rows of one allocation, in one transaction, so concurrent
 * allocations can never spend the same traffic twice.
 */
function moveAllocation(ctx: AppContext, ownerId: string, input: AllocateInput, now: number): AllocateResult {
  const bytes = Math.round(input.trafficG * GB);
  const timeZone = ctx.settings.get("timezone");
  return tx(ctx.db, () => {
    const agency = requireOwnAgency(ctx, ownerId);
    const owner = findUserById(ctx, ownerId) as UserRow;
    const customer = requireOwnCustomer(ctx, ownerId, input);
    const available = permanentTraffic(ctx.db, ownerId, now);
    if (available < bytes) throw new RpcError(Code.pushNotEnoughTraffic, AgencyMsg.notEnough(g(available)));
    const spent = changeTraffic(ctx.db, {
      userId: ownerId,
      type: "agency_spend",
      desc: AgencyMsg.spendDesc(g(bytes), customer.email),
      traffic: -bytes,
      now,
      timeZone,
    });
    const received = changeTraffic(ctx.db, {
      userId: customer.id,
      type: "agency_allocate",
      desc: AgencyMsg.allocateDesc(g(bytes), agency.name || owner.email),
      traffic: bytes,
      now,
      timeZone,
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
export function agencyCustomers(ctx: AppContext, ownerId: string, now = Date.now()): AgencyCustomers {
  const agency = requireOwnAgency(ctx, ownerId);
  const customers = ctx.db
    .query<AgencyCustomers["customers"][number], [string, number]>(
      `SELECT u.id AS _id, u.email, b.traffic, b.spend_traffic AS spendTraffic,
         u.vip_expire_time AS vipExpireTime,
         COALESCE((SELECT SUM(r.traffic_change) FROM traffic_records r
                   WHERE r.user_id = u.id AND r.type = 'agency_allocate'), 0) AS allocated
       FROM users u JOIN balances b ON b.user_id = u.id
       WHERE u.agency_id = ?1 ORDER BY u.create_time DESC, u.id LIMIT ?2`,
    )
    .all(ownerId, CUSTOMER_LIMIT);
  return {
    name: agency.name,
    available: permanentTraffic(ctx.db, ownerId, now),
    minAllocateG: transferMinimumG(ctx),
    customers,
  };
}

/** Every agency with its customer count, newest first (the CLI and admins). */
export function listAgencies(ctx: AppContext): Agency[] {
  const rows = ctx.db
    .query<AgencyRow & { email: string; customerCount: number }, []>(
      `SELECT a.*, u.email, (SELECT COUNT(*) FROM users c WHERE c.agency_id = a.user_id) AS customerCount
       FROM agencies a JOIN users u ON u.id = a.user_id ORDER BY a.create_time DESC`,
    )
    .all();
  return rows.map((r) => ({
    ownerId: r.user_id,
    email: r.email,
    name: r.name,
    customerCount: r.customerCount,
    createTime: r.create_time,
  }));
}
