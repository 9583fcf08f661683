/**
 * Devices (issue 29): which devices fetch an account's subscription, the device limit, and the
 * decision the subscription route takes on each fetch (`admitDevice`). Knows no HTTP: the route
 * reads the headers and hands over the id and the other device headers (subscription/device-gate.ts).
 *
 * The limit: the per-customer override (users.device_limit) when set, else the largest deviceNum
 * among the packages the customer holds (docs/decisions.md "Issue 29: devices"); 0 = unlimited.
 * A fetch from a device known and written within REFRESH_MS answers from the cached state and
 * writes nothing, so a fetch storm does not write per fetch.
 */
import type { AppContext } from "../../context.ts";
import { tx } from "../../db/db.ts";
import { Code, RpcError } from "../../rpc/codes.ts";
import type { RateRule } from "../../rpc/rate-limit.ts";
import { recordAudit } from "../audit/service.ts";
import {
  type DeviceLimit,
  type DeviceList,
  DeviceMsg,
  type DeviceState,
  type ListedDevice,
  MAX_DEVICE_FIELD,
  MAX_DEVICES,
  MAX_HWID_LENGTH,
  MAX_USER_AGENT,
  NEW_DEVICES_PER_HOUR,
} from "./schema.ts";

/** A known device's last_seen, platform and address are written again at most this often. */
export const REFRESH_MS = 10 * 60_000;

const USER_NOT_FOUND = "用户不存在";

const NEW_DEVICE_RULE: RateRule = {
  name: "device-new",
  max: NEW_DEVICES_PER_HOUR,
  windowMs: 60 * 60_000,
};

/** What a fetch says about its device besides the id, as sent; read only when a row is written. */
export interface DeviceDetails {
  platform: string | null;
  osVersion: string | null;
  model: string | null;
  userAgent: string | null;
  ip: string;
}

/**
 * What the subscription route does with a fetch:
 *  - `off`: no limit; answer as without devices (a device that sent an id is recorded);
 *  - `active`: the limit holds and this device is within it (x-hwid-active, x-hwid-limit);
 *  - `max-reached`: a new device over the limit (or over the hourly bound): the notice only;
 *  - `not-supported`: the limit holds and the client sent no (usable) device id: the notice only.
 */
export type Admission =
  | { kind: "off" }
  | { kind: "active"; limit: number }
  | { kind: "max-reached" }
  | { kind: "not-supported" };

const OFF: Admission = Object.freeze({ kind: "off" });
const MAX_REACHED: Admission = Object.freeze({ kind: "max-reached" });
const NOT_SUPPORTED: Admission = Object.freeze({ kind: "not-supported" });
const admitted = (limit: number): DeviceState["admitted"] =>
  limit > 0 ? Object.freeze({ kind: "active", limit }) : { kind: "off" };

/** Printable characters, no spaces: what clients send (hex, UUIDs, base64). */
const HWID_PATTERN = /^[\x21-\x7e]+$/;

/** The `x-hwid` as stored: trimmed; null when absent, longer than MAX_HWID_LENGTH or not printable. */
export function canonicalHwid(raw: string | null): string | null {
  const hwid = raw?.trim();
  if (!hwid || hwid.length > MAX_HWID_LENGTH || !HWID_PATTERN.test(hwid)) return null;
  return hwid;
}

/** Trimmed, control characters dropped, cut to `max`. */
function cleanField(value: string | null, max: number): string {
  if (!value) return "";
  return value
    .replace(/\p{Cc}/gu, "")
    .trim()
    .slice(0, max);
}

/** The columns a device row stores, bounded. */
function deviceColumns(details: DeviceDetails) {
  return {
    platform: cleanField(details.platform, MAX_DEVICE_FIELD),
    osVersion: cleanField(details.osVersion, MAX_DEVICE_FIELD),
    model: cleanField(details.model, MAX_DEVICE_FIELD),
    userAgent: cleanField(details.userAgent, MAX_USER_AGENT),
    ip: cleanField(details.ip, MAX_DEVICE_FIELD),
  };
}

// ---- the limit ---------------------------------------------------------------------------------

/**
 * The override and the packages' limit. A package is held while what it sold is in force: a time
 * package (add_vip_duration) while the account's time package runs, traffic that never expires
 * while permanent traffic is left, traffic with a term (traffic_days) while its grant holds some.
 */
const LIMIT_SQL = `SELECT u.device_limit AS override,
    (SELECT MAX(c.device_num) FROM orders o JOIN combos c ON c.id = o.combo_id
      WHERE o.user_id = u.id AND o.status = 'paied' AND c.device_num > 0
        AND ((o.add_vip_duration > 0 AND u.vip_expire_time > ?2)
          OR (o.add_traffic > 0 AND o.traffic_days = 0 AND b.traffic > 0)
          OR (o.add_traffic > 0 AND o.traffic_days > 0 AND EXISTS (SELECT 1 FROM trial_grants g
                WHERE g.order_id = o.id AND g.remaining > 0 AND g.expire_time > ?2)))) AS packages
  FROM users u JOIN balances b ON b.user_id = u.id
  WHERE u.id = ?1`;

/** The account's limit, or null when there is no such account. */
async function findDeviceLimit(ctx: AppContext, userId: string, now: number): Promise<DeviceLimit | null> {
  const row = await ctx.db.get<{ override: number | null; packages: number | null }>(LIMIT_SQL, userId, now);
  if (!row) return null;
  const fromPackages = row.packages ?? 0;
  const wanted = row.override ?? fromPackages;
  return { limit: Math.min(wanted, MAX_DEVICES), override: row.override, fromPackages };
}

export async function deviceLimit(ctx: AppContext, userId: string, now = Date.now()): Promise<DeviceLimit> {
  const found = await findDeviceLimit(ctx, userId, now);
  if (!found) throw new RpcError(Code.notFound, USER_NOT_FOUND);
  return found;
}

async function loadState(ctx: AppContext, userId: string, now: number): Promise<DeviceState | null> {
  const found = await findDeviceLimit(ctx, userId, now);
  if (!found) return null;
  const limit = found.limit;
  const rows = await ctx.db.all<{ hwid: string; last_seen: number }>(
    "SELECT hwid, last_seen FROM devices WHERE user_id = ?",
    userId,
  );
  return {
    limit,
    admitted: admitted(limit),
    lastSeen: new Map(rows.map((row) => [row.hwid, row.last_seen])),
  };
}

// ---- the gate ----------------------------------------------------------------------------------

/**
 * The decision for one fetch of `userId`'s subscription (its key already proved). A known device
 * written within REFRESH_MS (or a fetch without an id) is answered from the cached state at once,
 * not as a promise: the hot path awaits nothing. Otherwise the device is registered or refreshed
 * in one transaction that counts the account's devices itself; `details` is read only then.
 */
export function admitDevice(
  ctx: AppContext,
  userId: string,
  hwid: string | null,
  details: () => DeviceDetails,
  now = Date.now(),
): Admission | Promise<Admission> {
  const state = ctx.cache.devices.get(userId, () => loadState(ctx, userId, now), now);
  if (state instanceof Promise) return state.then((known) => decide(ctx, userId, known, hwid, details, now));
  return decide(ctx, userId, state, hwid, details, now);
}

function decide(
  ctx: AppContext,
  userId: string,
  state: DeviceState | null,
  hwid: string | null,
  details: () => DeviceDetails,
  now: number,
): Admission | Promise<Admission> {
  if (!state) return OFF;
  if (hwid === null) return state.limit > 0 ? NOT_SUPPORTED : OFF;
  const seen = state.lastSeen.get(hwid);
  if (seen !== undefined && now - seen < REFRESH_MS) return state.admitted;
  return registerDevice(ctx, userId, hwid, details(), now);
}

async function registerDevice(
  ctx: AppContext,
  userId: string,
  hwid: string,
  details: DeviceDetails,
  now: number,
): Promise<Admission> {
  const claim = { hwid, ...deviceColumns(details) };
  return await tx(ctx.db, async () => {
    const found = await findDeviceLimit(ctx, userId, now);
    if (!found) return OFF;
    const limit = found.limit;
    const refreshed = await ctx.db.run(
      `UPDATE devices SET platform = ?, os_version = ?, model = ?, user_agent = ?, last_seen = ?, last_ip = ?
        WHERE user_id = ? AND hwid = ?`,
      claim.platform,
      claim.osVersion,
      claim.model,
      claim.userAgent,
      now,
      claim.ip,
      userId,
      claim.hwid,
    );
    if (refreshed.changes > 0) return admitted(limit);
    const count = await ctx.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM devices WHERE user_id = ?",
      userId,
    );
    // Without a limit a device past the bound is served but not recorded; with one it is refused.
    const refused = limit > 0 ? MAX_REACHED : OFF;
    if ((count?.n ?? 0) >= (limit > 0 ? limit : MAX_DEVICES)) return refused;
    if (!(await ctx.limiter.hit(NEW_DEVICE_RULE, userId, now))) return refused;
    await ctx.db.run(
      `INSERT INTO devices (user_id, hwid, platform, os_version, model, user_agent, first_seen, last_seen, last_ip)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, hwid) DO NOTHING`,
      userId,
      claim.hwid,
      claim.platform,
      claim.osVersion,
      claim.model,
      claim.userAgent,
      now,
      now,
      claim.ip,
    );
    return admitted(limit);
  });
}

// ---- seeing and removing -----------------------------------------------------------------------

interface DeviceRow {
  hwid: string;
  platform: string;
  os_version: string;
  model: string;
  user_agent: string;
  first_seen: number;
  last_seen: number;
  last_ip: string;
}

/** An address as the customer sees it: the last part of an IPv4 address, the tail of an IPv6 one hidden. */
export function maskIp(ip: string): string {
  if (!ip) return "";
  if (ip.includes(":")) {
    const groups = ip.split(":").filter((group) => group !== "");
    return `${groups.slice(0, 2).join(":")}:*:*`;
  }
  const parts = ip.split(".");
  return parts.length === 4 ? `${parts.slice(0, 2).join(".")}.*.*` : "*";
}

const listed = (row: DeviceRow, ip: (ip: string) => string): ListedDevice => ({
  hwid: row.hwid,
  platform: row.platform,
  osVersion: row.os_version,
  model: row.model,
  userAgent: row.user_agent,
  firstSeen: row.first_seen,
  lastSeen: row.last_seen,
  lastIp: ip(row.last_ip),
});

/** An account's devices, most recently seen first, with its limit; `maskAddresses` for the customer's own view. */
export async function listDevices(
  ctx: AppContext,
  userId: string,
  options: { maskAddresses: boolean },
  now = Date.now(),
): Promise<DeviceList> {
  const limit = await deviceLimit(ctx, userId, now);
  const rows = await ctx.db.all<DeviceRow>(
    `SELECT hwid, platform, os_version, model, user_agent, first_seen, last_seen, last_ip
      FROM devices WHERE user_id = ? ORDER BY last_seen DESC, hwid`,
    userId,
  );
  const ip = options.maskAddresses ? maskIp : (address: string) => address;
  return { ...limit, devices: rows.map((row) => listed(row, ip)) };
}

/** Removes one device of the account; 404 when the account has no such device. */
export async function removeDevice(ctx: AppContext, userId: string, hwid: string): Promise<null> {
  const removed = await ctx.db.run("DELETE FROM devices WHERE user_id = ? AND hwid = ?", userId, hwid);
  if (removed.changes === 0) throw new RpcError(Code.notFound, DeviceMsg.notFound);
  return null;
}

/** Removes every device of the account (the caller's transaction, if any: a subscription reset). */
export async function removeAllDevices(ctx: AppContext, userId: string): Promise<{ removed: number }> {
  const { changes } = await ctx.db.run("DELETE FROM devices WHERE user_id = ?", userId);
  return { removed: changes };
}

/**
 * An admin's or operator's removal of one device (`hwid`) or of every device of an account, in
 * one transaction with its audit row (`device.remove`). 1004 for an unknown account or device.
 */
export async function removeDevicesAsStaff(
  ctx: AppContext,
  userId: string,
  hwid: string | null,
): Promise<number> {
  return await tx(ctx.db, async () => {
    const account = await ctx.db.get<{ email: string }>("SELECT email FROM users WHERE id = ?", userId);
    if (!account) throw new RpcError(Code.notFound, USER_NOT_FOUND);
    const removed = hwid === null ? (await removeAllDevices(ctx, userId)).removed : 1;
    if (hwid !== null) await removeDevice(ctx, userId, hwid);
    const diff = hwid === null ? { devices: { old: removed, new: 0 } } : { hwid: { old: hwid } };
    await recordAudit(ctx.db, { action: "device.remove", target: account.email, diff });
    return removed;
  });
}

/** Sets the per-customer limit (0 = unlimited), or with null goes back to the packages' limit. */
export async function setDeviceLimit(
  ctx: AppContext,
  userId: string,
  limit: number | null,
  now = Date.now(),
): Promise<DeviceLimit> {
  if (limit !== null && (!Number.isInteger(limit) || limit < 0 || limit > MAX_DEVICES))
    throw new RpcError(Code.badInput, DeviceMsg.limitRange);
  await tx(ctx.db, async () => {
    const before = await ctx.db.get<{ email: string; device_limit: number | null }>(
      "SELECT email, device_limit FROM users WHERE id = ?",
      userId,
    );
    if (!before) throw new RpcError(Code.notFound, USER_NOT_FOUND);
    await ctx.db.run("UPDATE users SET device_limit = ? WHERE id = ?", limit, userId);
    if (before.device_limit === limit) return;
    const diff = { deviceLimit: { old: before.device_limit, new: limit } };
    await recordAudit(ctx.db, { action: "device.set_limit", target: before.email, diff });
  });
  return await deviceLimit(ctx, userId, now);
}

/** Devices recorded and the limit in force, for short summaries (the bot's /sub). */
export async function deviceUsage(
  ctx: AppContext,
  userId: string,
  now = Date.now(),
): Promise<{ used: number; limit: number }> {
  const { limit } = await deviceLimit(ctx, userId, now);
  const row = await ctx.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM devices WHERE user_id = ?", userId);
  return { used: row?.n ?? 0, limit };
}

/** One line for short summaries (the bot's /sub): devices used and allowed. */
export async function deviceUsageText(ctx: AppContext, userId: string, now = Date.now()): Promise<string> {
  const { used, limit } = await deviceUsage(ctx, userId, now);
  return limit > 0 ? `设备：已用 ${used} 台，上限 ${limit} 台` : `设备：已记录 ${used} 台，不限设备数`;
}
