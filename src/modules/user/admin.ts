/**
 * User management for admins (seed 001 §2.5, §7 /api/admin/users/*): the list, one user, editing
 * the account's flags, disabling, and adjustments of traffic, time package and wallet, each of
 * which writes its ledger row and an admin_adjustments row in one transaction.
 */
import type { AppContext } from "../../context.ts";
import { likeSql, tx } from "../../db/db.ts";
import { fenToYuan, yuanToFen } from "../../lib/money.ts";
import { DAY_MS } from "../../lib/time.ts";
import { GB } from "../../lib/traffic.ts";
import { extendedTimePackage } from "../../payments/credit.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { type AuditDiff, editDiff, recordAudit } from "../audit/service.ts";
import { changeTraffic, changeWallet } from "../ledger/service.ts";
import type { Settings } from "../settings/schema.ts";
import { permanentTraffic } from "../trial/service.ts";
import {
  type AdjustmentInput,
  type AdminUser,
  AdminUserMsg,
  adjustmentInput,
  type UpdateUserInput,
  type UserListInput,
  updateUserInput,
  userListInput,
} from "./admin-schema.ts";
import { roleOf, type UserRow } from "./row.ts";
import { findUserByEmail, findUserById, setPassword } from "./service.ts";
import { revokeAccountAccess } from "./session.ts";

/** The user list's columns: a UserRow without its secrets, plus the agency owner's e-mail. */
type AdminUserRow = Pick<
  UserRow,
  | "id"
  | "email"
  | "type"
  | "email_verified"
  | "disabled"
  | "scale"
  | "channel_code"
  | "create_time"
  | "paid_user"
  | "is_agency"
  | "wallet_fen"
  | "spend_traffic"
  | "traffic"
  | "vip_expire_time"
  | "last_active_time"
  | "first_url"
  | "last_url"
  | "userkey"
  | "can_change_describe_key"
  | "can_change_password"
  | "normal_permission"
  | "special_daily_unlimit_traffic"
  | "daily_unlimit_traffic"
  | "force_reward"
> & { agency_email: string | null };

// Never password_hash or proxy_secret.
const ADMIN_USER_SELECT = `SELECT u.id, u.email, u.type, u.email_verified, u.disabled, u.scale, u.channel_code,
    u.create_time, u.paid_user, u.is_agency, a.email AS agency_email, u.wallet_fen, b.spend_traffic,
    b.traffic, u.vip_expire_time, u.last_active_time, u.first_url, u.last_url, u.userkey,
    u.can_change_describe_key, u.can_change_password, u.normal_permission,
    u.special_daily_unlimit_traffic, u.daily_unlimit_traffic, u.force_reward
  FROM users u JOIN balances b ON b.user_id = u.id LEFT JOIN users a ON a.id = u.agency_id`;

const gFromBytes = (bytes: number) => bytes / GB;

function toAdminUser(row: AdminUserRow, settings: Settings): AdminUser {
  return {
    _id: row.id,
    email: row.email,
    disable: row.disabled === 1,
    scale: row.scale,
    channel_code: row.channel_code,
    createTime: row.create_time,
    paidUser: row.paid_user === 1,
    type: roleOf(row, settings),
    is_agency: row.is_agency === 1,
    agency: row.agency_email ?? "",
    wallet_money: fenToYuan(row.wallet_fen),
    spendTraffic: row.spend_traffic,
    traffic: row.traffic,
    vipExpireTime: row.vip_expire_time,
    lastActiveTime: row.last_active_time,
    first_url: row.first_url,
    last_url: row.last_url,
    userkey: row.userkey,
    canChangeDescribeKey: row.can_change_describe_key === 1,
    canChangePassword: row.can_change_password === 1,
    normalPermission: row.normal_permission === 1,
    specialDailyUnlimitTraffic: row.special_daily_unlimit_traffic === 1,
    dailyUnlimitTraffic: gFromBytes(row.daily_unlimit_traffic),
    forceReward: row.force_reward === 1,
  };
}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * `/api/admin/users/userlist`: newest sign-ups first; filterStr matches the e-mail, the channel
 * code or the id (case-insensitively, % and _ taken literally); from / to bound the sign-up time.
 */
export async function listAdminUsers(ctx: AppContext, query: UserListInput = {}): Promise<AdminUser[]> {
  const { number, filterStr, fromTimestamp, toTimestamp } = userListInput.parse(query);
  const rows = await ctx.db.all<AdminUserRow>(
    `${ADMIN_USER_SELECT}
       WHERE (?1 = '' OR u.email ${likeSql(ctx.db)} ?2 ESCAPE '\\' OR u.channel_code ${likeSql(ctx.db)} ?2 ESCAPE '\\' OR u.id ${likeSql(ctx.db)} ?2 ESCAPE '\\')
         AND (CAST(?3 AS BIGINT) IS NULL OR u.create_time >= ?3) AND (CAST(?4 AS BIGINT) IS NULL OR u.create_time <= ?4)
       ORDER BY u.create_time DESC, u.id DESC
       LIMIT ?5`,
    filterStr,
    likePattern(filterStr),
    fromTimestamp || null,
    toTimestamp || null,
    number,
  );
  const settings = await ctx.settings.all();
  return rows.map((row) => toAdminUser(row, settings));
}

/** `/api/admin/users/user`: one user as the list shows it; 1004 when there is none. */
export async function getAdminUser(ctx: AppContext, userId: string): Promise<AdminUser> {
  const user = await findAdminUser(ctx, userId);
  if (!user) throw new RpcError(Code.notFound, AdminUserMsg.notFound);
  return user;
}

async function findAdminUser(ctx: AppContext, userId: string): Promise<AdminUser | null> {
  const row = await ctx.db.get<AdminUserRow>(`${ADMIN_USER_SELECT} WHERE u.id = ?`, userId);
  return row ? toAdminUser(row, await ctx.settings.all()) : null;
}

export interface Adjustment {
  adminId: string;
  userId: string;
  /** Bytes of permanent traffic added (negative: taken). */
  trafficBytes?: number;
  /** Days of time package added (negative: taken). */
  days?: number;
  walletFen?: number;
  reason: string;
  now: number;
}

export interface AdjustResult {
  traffic: number;
  vipExpireTime: number;
  walletFen: number;
}

/**
 * Changes a user's permanent traffic, time package and / or wallet as an admin: one traffic record
 * (admin_adjust) for traffic and days, one wallet entry (adjust) for money and one admin_adjustments
 * row, all in one transaction. A change that would leave a balance below zero is refused whole.
 */
export async function adjustUser(ctx: AppContext, adjustment: Adjustment): Promise<AdjustResult> {
  const trafficBytes = Math.round(adjustment.trafficBytes ?? 0);
  const days = adjustment.days ?? 0;
  const walletFen = adjustment.walletFen ?? 0;
  const reason = adjustment.reason.trim();
  const { now } = adjustment;
  if (trafficBytes === 0 && days === 0 && walletFen === 0)
    throw new RpcError(Code.badInput, AdminUserMsg.nothingToAdjust);
  if (!reason) throw new RpcError(Code.badInput, AdminUserMsg.reasonRequired);
  if (!Number.isInteger(days)) throw new RpcError(Code.badInput, "天数须为整数");
  return await tx(ctx.db, async () => {
    const user = await findUserById(ctx, adjustment.userId);
    if (!user) throw new RpcError(Code.notFound, AdminUserMsg.notFound);
    // Trial traffic (with its own expiry) is not the admin's to take: only permanent traffic is.
    if (trafficBytes < 0 && (await permanentTraffic(ctx.db, user.id, now)) + trafficBytes < 0)
      throw new RpcError(Code.badInput, AdminUserMsg.trafficBelowZero);
    const timePackage =
      days > 0
        ? extendedTimePackage(user, days, null, now)
        : days < 0
          ? { vipExpireTime: user.vip_expire_time + days * DAY_MS }
          : null;
    if (timePackage && timePackage.vipExpireTime < now)
      throw new RpcError(Code.badInput, AdminUserMsg.daysBelowZero);
    if (user.wallet_fen + walletFen < 0) throw new RpcError(Code.badInput, AdminUserMsg.walletBelowZero);

    // The traffic record's type already reads 管理员调整; the wallet entry's desc says it.
    const timeZone = (await ctx.settings.all()).timezone;
    let balances = { traffic: user.traffic, vipExpireTime: user.vip_expire_time };
    if (trafficBytes !== 0 || timePackage) {
      balances = await changeTraffic(ctx.db, {
        userId: user.id,
        type: "admin_adjust",
        desc: reason,
        traffic: trafficBytes,
        ...(timePackage ?? {}),
        now,
        timeZone,
      });
    }
    const wallet =
      walletFen !== 0
        ? await changeWallet(ctx.db, {
            userId: user.id,
            type: "adjust",
            changeFen: walletFen,
            desc: `管理员调整：${reason}`,
            now,
          })
        : user.wallet_fen;
    await ctx.db.run(
      `INSERT INTO admin_adjustments (admin_id, user_id, traffic_change, vip_change, wallet_change_fen, reason, create_time)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      adjustment.adminId,
      user.id,
      trafficBytes,
      balances.vipExpireTime - user.vip_expire_time,
      walletFen,
      reason,
      now,
    );
    return { ...balances, walletFen: wallet };
  });
}

/** The wire's adjustment (G, days, yuan) as adjustUser takes it, or null when it changes nothing. */
export function adjustmentFrom(
  input: AdjustmentInput,
  adminId: string,
  userId: string,
  now: number,
): Adjustment | null {
  const parsed = adjustmentInput.parse(input);
  if (parsed.trafficG === 0 && parsed.days === 0 && parsed.walletYuan === 0) return null;
  return {
    adminId,
    userId,
    trafficBytes: Math.round(parsed.trafficG * GB),
    days: parsed.days,
    walletFen: yuanToFen(parsed.walletYuan),
    reason: parsed.reason,
    now,
  };
}

const flag = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0);

/**
 * `/api/admin/users/update_user`: changes the fields given, in one transaction with the optional
 * adjustment. Disabling ends every session, trusted browser and login link of the account at once;
 * an admin cannot disable their own account.
 */
export async function updateUser(
  ctx: AppContext,
  adminId: string,
  input: UpdateUserInput,
  now = Date.now(),
): Promise<AdminUser> {
  const fields = updateUserInput.parse(input);
  if (fields.disable === true && fields._id === adminId)
    throw new RpcError(Code.badInput, "不能禁用自己的账号");
  const adjustment = fields.adjust ? adjustmentFrom(fields.adjust, adminId, fields._id, now) : null;
  await tx(ctx.db, async () => {
    const before = await findAdminUser(ctx, fields._id);
    const changed = (
      await ctx.db.run(
        `UPDATE users SET
           disabled = COALESCE(?2, disabled),
           scale = COALESCE(?3, scale),
           can_change_describe_key = COALESCE(?4, can_change_describe_key),
           can_change_password = COALESCE(?5, can_change_password),
           normal_permission = COALESCE(?6, normal_permission),
           special_daily_unlimit_traffic = COALESCE(?7, special_daily_unlimit_traffic),
           daily_unlimit_traffic = COALESCE(?8, daily_unlimit_traffic),
           force_reward = COALESCE(?9, force_reward)
         WHERE id = ?1`,
        fields._id,
        flag(fields.disable),
        fields.scale ?? null,
        flag(fields.canChangeDescribeKey),
        flag(fields.canChangePassword),
        flag(fields.normalPermission),
        flag(fields.specialDailyUnlimitTraffic),
        fields.dailyUnlimitTraffic === undefined ? null : Math.round(fields.dailyUnlimitTraffic * GB),
        flag(fields.forceReward),
      )
    ).changes;
    if (!changed) throw new RpcError(Code.notFound, AdminUserMsg.notFound);
    if (fields.disable === true) await revokeAccountAccess(ctx, fields._id);
    if (adjustment) await adjustUser(ctx, adjustment);
    await recordUserUpdate(ctx, before as AdminUser, await getAdminUser(ctx, fields._id), adjustment);
  });
  return await getAdminUser(ctx, fields._id);
}

/** Fields of the account the audit trail leaves out: its id (the target names it) and what no admin sets. */
const UNAUDITED_USER_FIELDS = ["_id", "lastActiveTime", "spendTraffic", "userkey"];

/** One row per update: `balance.adjust` when it moved a balance (with the reason), else `user.update`. */
async function recordUserUpdate(
  ctx: AppContext,
  before: AdminUser,
  after: AdminUser,
  adjustment: Adjustment | null,
): Promise<void> {
  const diff: AuditDiff = editDiff(before, after, UNAUDITED_USER_FIELDS);
  if (adjustment) diff.reason = { new: adjustment.reason };
  if (Object.keys(diff).length === 0) return;
  await recordAudit(ctx.db, {
    action: adjustment ? "balance.adjust" : "user.update",
    target: after.email,
    diff,
  });
}

/** The user with this e-mail, or 1004. */
export async function requireUserByEmail(ctx: AppContext, email: string) {
  const user = await findUserByEmail(ctx, email.trim().toLowerCase());
  if (!user) throw new RpcError(Code.notFound, `${AdminUserMsg.notFound}: ${email}`);
  return user;
}

/** `/api/admin/users/change_password`: sets the password and signs the account out everywhere. */
export async function changeUserPassword(ctx: AppContext, email: string, digest: string): Promise<null> {
  await setPassword(ctx, (await requireUserByEmail(ctx, email)).id, digest);
  return null;
}
