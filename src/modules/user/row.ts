/**
 * A user as services read it: the users row with its balances (USER_ROW_SELECT), and the role it
 * resolves to. Kept apart from service.ts so that the context, sessions and limits can name a user
 * without importing the services that take a context (no import circle, issue 19).
 */
import type { Settings } from "../settings/schema.ts";
import type { Role } from "./schema.ts";

export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  type: Role;
  is_agency: number;
  disabled: number;
  email_verified: number;
  icon: string;
  userkey: string;
  proxy_secret: string;
  /** The user's integer id on the node API (UniProxy). */
  node_uid: number;
  scale: number;
  channel_code: string;
  paid_user: number;
  traffic: number;
  spend_traffic: number;
  vip_expire_time: number;
  daily_limit: number | null;
  daily_usage: number;
  daily_usage_day: string;
  wallet_fen: number;
  in_xinjiang: number;
  in_foreign: number;
  use_english_node: number;
  can_change_describe_key: number;
  can_change_password: number;
  /** Sees every line that requires a permission without holding it (docs/decisions.md). */
  normal_permission: number;
  /** On: daily_unlimit_traffic replaces the package's daily quota (user/limits.ts dailyQuota). */
  special_daily_unlimit_traffic: number;
  daily_unlimit_traffic: number;
  /** A channel-invited customer whose orders earn the channel its rebate after consumer_duration too. */
  force_reward: number;
  create_time: number;
  last_active_time: number;
  first_url: string;
  last_url: string;
}

export const ROLES: readonly Role[] = ["normal", "channel", "yunying", "admin"];

/**
 * A whole UserRow: the users row (alias u, for the WHERE that follows) with its balances, which
 * live in a narrow table of their own that node reports rewrite (issue 18). Scalar subqueries, not
 * a JOIN: bun:sqlite answers this single-row read in ~3 µs that way and ~17 µs as a JOIN.
 */
export const USER_ROW_SELECT = `SELECT u.*,
    (SELECT traffic FROM balances WHERE user_id = u.id) AS traffic,
    (SELECT spend_traffic FROM balances WHERE user_id = u.id) AS spend_traffic,
    (SELECT daily_usage FROM balances WHERE user_id = u.id) AS daily_usage,
    (SELECT daily_usage_day FROM balances WHERE user_id = u.id) AS daily_usage_day
  FROM users u`;

/**
 * Stored type, raised by the settings lists admin_id / yunying_list (DESIGN §7). An entry names an
 * account by id, or by e-mail once that e-mail is confirmed: listing an address nobody registered
 * yet must not hand the role to whoever signs up with it.
 */
export function roleOf(
  user: Pick<UserRow, "id" | "email" | "type" | "email_verified">,
  settings: Settings,
): Role {
  const email = user.email_verified === 1 ? user.email.toLowerCase() : null;
  const listed = (list: string[]) => list.some((entry) => entry === user.id || entry.toLowerCase() === email);
  if (user.type === "admin" || listed(settings.admin_id)) return "admin";
  if (user.type === "yunying" || listed(settings.yunying_list)) return "yunying";
  return user.type;
}
