import type { AppContext } from "../../context.ts";
import { isUniqueViolation, nocaseEqualsSql, tx } from "../../db/db.ts";
import { businessDay } from "../../lib/time.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import { newId, randomHex } from "../../rpc/ids.ts";
import { isAgencyOwner } from "../agency/owner.ts";
import { recordAudit, recordStaffAudit } from "../audit/service.ts";
import { removeAllDevices } from "../device/service.ts";
import { listMyPermissions } from "../permission/service.ts";
import { SECRET_MASK, type Settings } from "../settings/schema.ts";
import { signUseFlags } from "../signuse/service.ts";
import { cachedTrialBalance } from "../trial/service.ts";
import { queueWebhookEvent } from "../webhook/outbox.ts";
import { dailyQuota } from "./limits.ts";
import { roleOf, USER_ROW_SELECT, type UserRow } from "./row.ts";
import { Msg, type Role, shownIcon, type UserInfo } from "./schema.ts";
import { revokeAccountAccess } from "./session.ts";

/**
 * argon2id at Bun's costs (64 MiB, 2 passes: ~270 ms on a small VPS core). The test suite, which
 * makes about 900 accounts, sets FERRY_INSECURE_FAST_PASSWORD_HASH=1 (tests/preload.ts) for the
 * least costs argon2id allows; a hash records its costs, so either kind verifies. Never in production.
 */
const PASSWORD_HASH: Parameters<typeof Bun.password.hash>[1] =
  process.env.FERRY_INSECURE_FAST_PASSWORD_HASH === "1"
    ? { algorithm: "argon2id", memoryCost: 1024, timeCost: 1 }
    : { algorithm: "argon2id" };

export function hashPassword(digest: string): Promise<string> {
  return Bun.password.hash(digest, PASSWORD_HASH);
}

let dummyHash: Promise<string> | null = null;
/** Verifies against a throw-away hash so that unknown e-mails cost the same time as wrong passwords. */
function burnVerify(digest: string): Promise<boolean> {
  dummyHash ??= hashPassword(randomHex(32));
  return dummyHash.then((hash) => Bun.password.verify(digest, hash));
}

export async function findUserByEmail(ctx: AppContext, email: string): Promise<UserRow | null> {
  return await ctx.db.get<UserRow>(`${USER_ROW_SELECT} WHERE ${nocaseEqualsSql(ctx.db, "u.email")}`, email);
}

export async function findUserById(ctx: AppContext, id: string): Promise<UserRow | null> {
  return await ctx.db.get<UserRow>(`${USER_ROW_SELECT} WHERE u.id = ?`, id);
}

/** Whether any account's role resolves to admin (stored type, or listed in admin_id as roleOf reads it). */
export async function hasAdmin(ctx: AppContext): Promise<boolean> {
  if (await ctx.db.get("SELECT 1 FROM users WHERE type = 'admin' LIMIT 1")) return true;
  const settings = await ctx.settings.all();
  for (const entry of settings.admin_id) {
    const user = (await findUserById(ctx, entry)) ?? (await findUserByEmail(ctx, entry.toLowerCase()));
    if (user !== null && roleOf(user, settings) === "admin") return true;
  }
  return false;
}

export interface NewUser {
  email: string;
  passwordDigest: string;
  type?: Role;
  channelCode?: string;
  icon?: string;
  firstUrl?: string;
  /** The address is known to be the owner's (an operator made the account); default false. */
  emailVerified?: boolean;
}

/** Creates an account; 1001 when the e-mail is taken. */
export async function createUser(ctx: AppContext, input: NewUser): Promise<UserRow> {
  const passwordHash = await hashPassword(input.passwordDigest);
  const now = Date.now();
  const id = newId(now);
  try {
    await tx(ctx.db, () => insertUser(ctx, id, passwordHash, input, now));
  } catch (error) {
    if (isUniqueViolation(error, "users", "email")) {
      throw new RpcError(Code.alreadyRegistered, Msg.alreadyRegistered);
    }
    throw error;
  }
  const user = await findUserById(ctx, id);
  if (!user) throw new Error("user vanished after insert");
  return user;
}

/** The account's row, and its audit row when staff or an operator made it (`ferry user create`). */
async function insertUser(ctx: AppContext, id: string, passwordHash: string, input: NewUser, now: number) {
  await ctx.db.run(
    `INSERT INTO users (id, email, password_hash, type, email_verified, icon, userkey, proxy_secret, channel_code, create_time, first_url, last_url)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    id,
    input.email,
    passwordHash,
    input.type ?? "normal",
    input.emailVerified ? 1 : 0,
    input.icon ?? "",
    randomHex(16),
    crypto.randomUUID(),
    input.channelCode ?? "",
    now,
    input.firstUrl ?? "",
    input.firstUrl ?? "",
  );
  await recordStaffAudit(ctx.db, {
    action: "user.create",
    target: input.email,
    diff: { type: { new: input.type ?? "normal" }, emailVerified: { new: input.emailVerified ?? false } },
  });
  await queueWebhookEvent(
    ctx,
    "user.registered",
    { userId: id, email: input.email, channelCode: input.channelCode ?? "", createTime: now },
    now,
  );
}

/** The user for an e-mail and transformed password, or null; disabled accounts get 1003. */
export async function verifyLogin(ctx: AppContext, email: string, digest: string): Promise<UserRow | null> {
  const user = await findUserByEmail(ctx, email);
  if (!user) {
    await burnVerify(digest);
    return null;
  }
  if (!(await Bun.password.verify(digest, user.password_hash))) return null;
  if (user.disabled) throw new RpcError(Code.forbidden, Msg.accountDisabled);
  return user;
}

export async function setRole(ctx: AppContext, email: string, role: Role): Promise<UserRow> {
  return await tx(ctx.db, async () => {
    const before = await findUserByEmail(ctx, email);
    if (!before) throw new RpcError(Code.notFound, `用户不存在: ${email}`);
    await ctx.db.run("UPDATE users SET type = ? WHERE id = ?", role, before.id);
    if (before.type !== role)
      await recordAudit(ctx.db, {
        action: "user.set_role",
        target: before.email,
        diff: { type: { old: before.type, new: role } },
      });
    return (await findUserById(ctx, before.id)) as UserRow;
  });
}

export async function setPassword(ctx: AppContext, userId: string, digest: string): Promise<void> {
  const hash = await hashPassword(digest);
  await tx(ctx.db, async () => {
    await ctx.db.run("UPDATE users SET password_hash = ? WHERE id = ?", hash, userId);
    await revokeAccountAccess(ctx, userId);
    const account = await ctx.db.get<{ email: string }>("SELECT email FROM users WHERE id = ?", userId);
    await recordAudit(ctx.db, {
      action: "user.change_password",
      target: account?.email ?? userId,
      diff: { password: { old: SECRET_MASK, new: SECRET_MASK } },
    });
  });
}

export function todayUsage(user: UserRow, settings: Settings, now = Date.now()): number {
  if (user.daily_usage === 0) return 0; // skips the timezone formatting, the slow part
  return user.daily_usage_day === businessDay(now, settings.timezone) ? user.daily_usage : 0;
}

export async function userInfo(ctx: AppContext, user: UserRow, now = Date.now()): Promise<UserInfo> {
  const settings = await ctx.settings.all();
  return {
    _id: user.id,
    email: user.email,
    icon: shownIcon(user.icon),
    type: roleOf(user, settings),
    is_agency_user: user.is_agency === 1,
    agencyOwner: await isAgencyOwner(ctx, user.id),
    userkey: user.userkey,
    paidUser: user.paid_user === 1,
    traffic: user.traffic,
    spendTraffic: user.spend_traffic,
    vipExpireTime: user.vip_expire_time,
    dailyTimePackageUsage: todayUsage(user, settings),
    limit: dailyQuota(user),
    ...(await signUseFlags(ctx, user.id, now)),
    ...(await cachedTrialBalance(ctx, user.id, now)),
    preferDomain: settings.preferDomain,
    permissions: await listMyPermissions(ctx, user.id),
    signUseRewardInfo: { continueSignReward: settings.continueSignReward },
    channel_code: user.channel_code,
    inXinjiang: user.in_xinjiang === 1,
    in_foreign: user.in_foreign === 1,
    use_english_node: user.use_english_node === 1,
    describe_host: settings.describe_host,
  };
}

// ---- subscription links as proof of ownership (reset / recover account) ----

const SUBSCRIPTION_PATH = /\/api\/subscript\/[a-z0-9_]+\/([0-9a-f]{24})\/([0-9a-f]{32})(?:[/?#]|$)/i;

/** The user a subscription link belongs to; `DESCRIBE_URL_ERROR` / `USER_NOT_EXIST` as the seed names them. */
export async function userFromSubscriptionUrl(ctx: AppContext, url: string): Promise<UserRow> {
  const match = SUBSCRIPTION_PATH.exec(url);
  if (!match?.[1] || !match[2]) throw new RpcError(Code.badInput, "DESCRIBE_URL_ERROR");
  const user = await findUserById(ctx, match[1].toLowerCase());
  if (!user || user.userkey !== match[2].toLowerCase()) throw new RpcError(Code.notFound, "USER_NOT_EXIST");
  return user;
}

/**
 * Subscription reset (seed 000 §8): a new userkey and a new proxy credential in one statement,
 * so the old link and the old node credentials stop working together, and the account's devices
 * removed in the same transaction (issue 29). 1033 for accounts the back office flagged as not
 * allowed to change their subscription key.
 */
export async function resetUserkey(ctx: AppContext, userId: string): Promise<{ userkey: string }> {
  const user = await findUserById(ctx, userId);
  if (!user) throw new RpcError(Code.notFound, "用户不存在");
  if (!user.can_change_describe_key) throw new RpcError(Code.accountRefused, "该账号不允许这样操作。");
  const userkey = randomHex(16);
  await tx(ctx.db, async () => {
    await ctx.db.run(
      "UPDATE users SET userkey = ?, proxy_secret = ? WHERE id = ?",
      userkey,
      crypto.randomUUID(),
      userId,
    );
    await removeAllDevices(ctx, userId);
  });
  return { userkey };
}

export async function touchActivity(ctx: AppContext, user: UserRow, now = Date.now()) {
  if (now - user.last_active_time < 60_000) return;
  await ctx.db.run("UPDATE users SET last_active_time = ? WHERE id = ?", now, user.id);
}
