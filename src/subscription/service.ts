/**
 * What a user's subscription holds: the lines they may use (DESIGN §7), turned into proxies,
 * filtered to what the client's format can express, and the usage figures clients display.
 * Knows nothing of HTTP: the route and `ferry sub render` both call renderSubscription.
 */

import type { AppContext } from "../context.ts";
import { type Db, jsonObjectSql } from "../db/db.ts";
import { ID_PATTERN } from "../lib/id-schema.ts";
import { type EntryRow, toEntry } from "../modules/entry/service.ts";
import { type LineRow, lineVisibleSql } from "../modules/line/service.ts";
import { dailyQuota } from "../modules/user/limits.ts";
import type { UserRow } from "../modules/user/row.ts";
import { findUserById, todayUsage } from "../modules/user/service.ts";
import { sameSecret } from "../rpc/ids.ts";
import { RENDERERS } from "./formats/index.ts";
import type { Format, ProfileToggles, ProxyEntry, Rendered, UsageInfo } from "./model.ts";
import { headerLines, type ProfileHeader, profileHeaders } from "./profile-headers.ts";
import { lineProxies, noticeProxy, PROXY_AGENT_COLUMNS, type ProxyAgent, uniqueNames } from "./proxies.ts";
import type { SingboxDialect } from "./singbox-version.ts";
import { supports } from "./support.ts";

export const SITE_TITLE = "飞渡";

export const Notice = {
  disabled: "账号已被禁用，请联系客服",
  noTraffic: "流量已用完，请到商店购买套餐",
  noLines: "暂无可用线路，请联系客服",
  unsupported: "当前客户端不支持可用线路，请换用其他客户端",
  /** The SSR listing page's words for `unsupported` (issue 26 D16). */
  noSsrLines:
    "暂无支持 SSR 的线路：SSR 只能使用「Shadowsocks（兼容 SSR）」线路。请改用首页其他客户端的订阅。",
} as const;

/** Today's time-package quota left (0 without a running package) and permanent traffic left. */
export interface TrafficLeft {
  quota: number;
  permanent: number;
}

export async function trafficLeft(ctx: AppContext, user: UserRow, now = Date.now()): Promise<TrafficLeft> {
  const permanent = Math.max(0, user.traffic);
  if (user.vip_expire_time <= now) return { quota: 0, permanent };
  return {
    quota: Math.max(0, dailyQuota(user) - todayUsage(user, await ctx.settings.all(), now)),
    permanent,
  };
}

/**
 * subscription-userinfo: everything used so far is `download`, and `total` is that plus what is
 * left today (quota and permanent traffic), so clients show the true remainder. Expiry is the
 * time package's end while it runs, else 0 (never).
 */
export function usageInfo(user: UserRow, left: TrafficLeft, now = Date.now()): UsageInfo {
  const used = Math.max(0, user.spend_traffic);
  return {
    upload: 0,
    download: used,
    total: used + left.quota + left.permanent,
    expire: user.vip_expire_time > now ? Math.floor(user.vip_expire_time / 1000) : 0,
  };
}

/** The usage a notice-only file shows when the account's own must not show. */
const NO_USAGE: UsageInfo = { upload: 0, download: 0, total: 0, expire: 0 };

/** A line with its node's proxy columns and its entry, each as one JSON column, and the node's country. */
type SourceRow = LineRow & { agent_json: string; entry_json: string | null; agent_country: string };

const ENTRY_COLUMNS = ["id", "sort_index", "name", "ip", "ip_list", "desc", "visible", "create_time"];

/** The query of visibleLineProxies, built once per engine. */
const lineSourceSql = new Map<Db["engine"], string>();
function lineSourceQuery(db: Db): string {
  let sql = lineSourceSql.get(db.engine);
  if (!sql) {
    sql = `SELECT l.*, ${jsonObjectSql(db, "a", PROXY_AGENT_COLUMNS)} AS agent_json, a.country_code AS agent_country,
         CASE WHEN e.id IS NULL THEN NULL ELSE ${jsonObjectSql(db, "e", ENTRY_COLUMNS)} END AS entry_json
       FROM agent_lines l
       JOIN agents a ON a.id = l.agent_id
       LEFT JOIN entries e ON e.id = l.entry_id
       WHERE ${lineVisibleSql("?1", "?3", "?4", "?2")}
       ORDER BY l.sort_index, l.create_time`;
    lineSourceSql.set(db.engine, sql);
  }
  return sql;
}

/**
 * The lines a user may use: public, the required permission held and unexpired, not barred
 * for agency users. Copies and relays are expanded by lineProxies.
 */
export async function visibleLineProxies(
  ctx: AppContext,
  user: UserRow,
  now = Date.now(),
): Promise<ProxyEntry[]> {
  const rows = await ctx.db.all<SourceRow>(
    lineSourceQuery(ctx.db),
    user.id,
    now,
    user.is_agency,
    user.normal_permission,
  );
  const credentials = { uuid: user.proxy_secret };
  const naming = { english: user.use_english_node === 1 };
  return uniqueNames(
    rows.flatMap((row) => {
      const entry = row.entry_json ? toEntry(JSON.parse(row.entry_json) as EntryRow) : null;
      const agent = JSON.parse(row.agent_json) as ProxyAgent;
      return lineProxies({ line: row, agent, entry, country: row.agent_country }, credentials, naming);
    }),
  );
}

/** The profile toggles stored on the account (`/api/user/change_use_info`). */
export function profileToggles(
  user: Pick<UserRow, "in_xinjiang" | "in_foreign" | "use_english_node">,
): ProfileToggles {
  return {
    releaseDns: user.in_xinjiang === 1,
    abroad: user.in_foreign === 1,
    english: user.use_english_node === 1,
  };
}

/** How many links the SSR listing holds for the user: the lines they may use that SSR can express. */
export async function ssrLineCount(ctx: AppContext, user: UserRow, now = Date.now()): Promise<number> {
  return (await visibleLineProxies(ctx, user, now)).filter((proxy) => supports("ssr", proxy)).length;
}

/** The proxies for a format, or the one notice entry that says why there are none. */
export async function subscriptionProxies(
  ctx: AppContext,
  user: UserRow,
  format: Format,
  now = Date.now(),
  knownLeft?: TrafficLeft,
): Promise<{ proxies: ProxyEntry[]; notice: string | null }> {
  const left = knownLeft ?? (await trafficLeft(ctx, user, now));
  const notice = (message: string) => ({ proxies: [noticeProxy(message)], notice: message });
  if (user.disabled) return notice(Notice.disabled);
  if (left.quota <= 0 && left.permanent <= 0) return notice(Notice.noTraffic);
  const all = await visibleLineProxies(ctx, user, now);
  if (all.length === 0) return notice(Notice.noLines);
  const usable = all.filter((proxy) => supports(format, proxy));
  return usable.length > 0 ? { proxies: usable, notice: null } : notice(Notice.unsupported);
}

/** Compares the userkey in constant time; a wrong key and an unknown user look the same (404). */
export async function userForSubscription(
  ctx: AppContext,
  userId: string,
  userkey: string,
): Promise<UserRow | null> {
  if (!ID_PATTERN.test(userId) || !/^[0-9a-f]{32}$/.test(userkey)) return null;
  const user = await findUserById(ctx, userId);
  if (!user) return null;
  return sameSecret(userkey, user.userkey) ? user : null;
}

export interface SubscriptionRequest {
  format: Format;
  /** The full URL the client fetched. */
  url: string;
  title: string;
  query: URLSearchParams;
  /** sing-box only: the dialect for the client's core (`singboxDialectFor`). */
  singbox?: SingboxDialect;
  /** false: no `#key: value` lines in the body (a page a person reads). */
  headerLines?: boolean;
  /** A notice that replaces the lines and the usage (a refused device, issue 29): nothing of the account shows. */
  notice?: string;
}

export interface SubscriptionFile extends Rendered {
  usage: UsageInfo;
  title: string;
  /** Why the file holds only the notice entry instead of lines; null when it lists lines. */
  notice: string | null;
  /** The informational headers switched on in 配置管理 (profile-headers.ts). */
  profileHeaders: ProfileHeader[];
}

export async function renderSubscription(
  ctx: AppContext,
  user: UserRow,
  request: SubscriptionRequest,
  now = Date.now(),
): Promise<SubscriptionFile> {
  const left = await trafficLeft(ctx, user, now);
  const { proxies, notice } = request.notice
    ? { proxies: [noticeProxy(request.notice)], notice: request.notice }
    : await subscriptionProxies(ctx, user, request.format, now, left);
  const settings = await ctx.settings.all();
  // A refused device's notice tells nothing of the account (issue 29).
  const known = request.notice ? NO_USAGE : usageInfo(user, left, now);
  // Switched off, the package's end is not told anywhere (header, body lines, STATUS line).
  const usage = settings.sub_header_expire ? known : { ...known, expire: 0 };
  const headers = profileHeaders(settings, { title: request.title, usage });
  const rendered = RENDERERS[request.format]({
    proxies,
    notice,
    usage,
    title: request.title,
    url: request.url,
    host: new URL(request.url).hostname,
    query: request.query,
    toggles: profileToggles(user),
    singbox: request.singbox,
    headerLines: request.headerLines === false ? [] : headerLines(headers),
  });
  return { ...rendered, usage, title: request.title, notice, profileHeaders: headers };
}

/** The profile's name: the `name` query parameter (v2box and friends) or the site's name. */
export function titleFor(query: URLSearchParams): string {
  const name = query.get("name")?.trim().slice(0, 50);
  return name || SITE_TITLE;
}

/** The headers clients read (subscription-formats.md §3.1, profile-headers.ts). */
export function subscriptionHeaders(file: SubscriptionFile): Record<string, string> {
  return {
    "content-type": file.contentType,
    ...Object.fromEntries(file.profileHeaders),
    "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
    // Per-user credentials: never in a shared cache; one URL may serve several formats (auto).
    "cache-control": "private, no-store",
    vary: "user-agent",
    "x-content-type-options": "nosniff",
  };
}
