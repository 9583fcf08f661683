import { z } from "zod";
import { isSafeHref } from "../../lib/links.ts";
import { type Webhook, webhooksSchema } from "../webhook/schema.ts";

const text = (fallback = "") => z.string().max(4000).default(fallback);
const num = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.number().min(min).max(max).default(fallback);
const flag = (fallback: boolean) => z.boolean().default(fallback);
/** Who collects a payment method: nobody, an EPay-compatible aggregator, or the sandbox. */
export const PAY_ACCOUNTS = ["", "epay", "sandbox"] as const;
const payAccount = z.enum(PAY_ACCOUNTS).default("");
const idList = z.array(z.string().max(200)).max(1000).default([]);

/** "https://panel.example.com" (scheme and host, optional port, nothing after) or "". */
export function normalizeOrigin(value: string): string | null {
  const trimmed = value.trim().replace(/\/+$/, "");
  if (trimmed === "") return "";
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : `https://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  if (url.username || url.password || url.search || url.hash || url.pathname !== "/") return null;
  return url.origin;
}
/** A base URL links are built on: "" or http(s)://host[/path], no query, fragment or credentials. */
export function isBaseUrl(value: string): boolean {
  const trimmed = value.trim();
  if (trimmed === "") return true;
  try {
    const url = new URL(trimmed);
    return (
      (url.protocol === "https:" || url.protocol === "http:") &&
      !url.username &&
      !url.password &&
      !url.search &&
      !url.hash
    );
  } catch {
    return false;
  }
}
const baseUrlText = (fallback = "") =>
  z.string().max(300).refine(isBaseUrl, "须为 http(s):// 开头的地址，不含查询参数").default(fallback);

/** An IANA time zone the runtime knows ("Asia/Shanghai"): anything else breaks every business day. */
export function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const originText = z
  .string()
  .max(300)
  .refine((value) => normalizeOrigin(value) !== null, "须为 http(s):// 开头的站点地址，不含路径")
  .default("");

/**
 * Every setting of seed 001 §3 with its typed default, plus the ones Ferry adds (SMTP, agency host,
 * timezone, contact lines of the announcement). Units: money in yuan, traffic rewards in MB,
 * durations as named.
 */
export const settingsSchema = z.object({
  // payments: which provider collects alipay / wxpay ("" = off), the EPay account, USDT-TRC20
  alipay: payAccount,
  wxpay: payAccount,
  /** The TRC20 address customers send USDT to; empty turns USDT off. */
  usdtpay: text(),
  /** Yuan per USDT. */
  exchange_rate: num(7.2, 0.01, 1000),
  /** Minutes an order's USDT amount is watched. */
  usdtCheckTime: num(20, 10, 60),
  /** Seconds between polls of the address. */
  usdtCheckInterval: num(15, 3, 3600),
  /** Base URL the gateways call back (a callback domain outside a CDN challenge); empty = siteOrigin. */
  notify_url: baseUrlText(),
  /** Base URL the customer comes back to after paying; empty = siteOrigin. */
  return_url: baseUrlText(),
  epay_url: baseUrlText(),
  epay_pid: text(),
  epay_key: text(),
  trongrid_url: baseUrlText("https://api.trongrid.io"),
  trongrid_api_key: text(),
  /** The sandbox provider for demos and tests (also FERRY_SANDBOX_PAY=1): nothing is really charged. */
  sandbox_pay: flag(false),
  // shop
  /** Visitors with this channel code see only combos priced above channel_price_filter_min (seed 000 §2). */
  channel_price_filter_code: text(),
  channel_price_filter_min: num(20, 0, 1_000_000),
  // traffic accounting
  traffic_spend_scale: num(1, 0, 100),
  minestTrafficSpend: num(0),
  /** On: traffic is charged at line scale × user scale only; the two global scales above are not applied. */
  noGlobalTrafficScaleLimit: flag(false),
  upload_traffic_spend_scale: num(1, 0, 100),
  updateV2rayDuration: num(60, 5, 86_400),
  trafficStasticDuration: num(60, 5, 86_400),
  // channel / referral
  openChannel: flag(true),
  inviteRule: text(),
  channelRewardRate: num(0.1, 0.05, 0.5),
  channelConsumerDuration: num(365, 0, 36_500),
  min_charge_money: num(500, 0, 1_000_000),
  // roles
  admin_id: idList,
  yunying_list: idList,
  // check-in, prizes
  signUseRewardTraffic: num(200, 0, 1_048_576),
  continueSignUseDay: num(30, 1, 3650),
  continueSignReward: num(1024, 0, 1_048_576),
  /** Mbps the node user list gives (speed_limit) to users spending today's time-package quota; 0 = no limit. */
  vip_traffic_thred_rate_limit: num(0, 0, 100_000),
  /** G of permanent traffic one lucky draw costs. */
  prizeBaseCost: num(1, 0, 1_000_000),
  /** Seats on the lucky-draw board; 0 = one seat per prize. */
  gameSeat: num(8, 0, 24),
  // traffic transfers (seed 000 §9: minimum 20 G, cost rate 0.2)
  minPushNum: num(20, 1, 1_000_000),
  pushCostRate: num(0.2, 0, 0.9),
  /** The panel's address as nodes reach it (install and upgrade URLs); empty = the back office's own origin. */
  panel_url: baseUrlText(),
  // install script addresses per server type (empty = the panel's own script)
  install_apine: text(),
  install_ubuntu_x86: text(),
  install_ubuntu_arm: text(),
  install_ubuntu_guonei: text(),
  install_ubuntu_reality: text(),
  install_alpine_reality: text(),
  // domains and content
  /**
   * The site's own public origin (https://panel.example.com): the only source of links in mail and
   * bot messages and of payment callback bases; empty falls back to preferDomain (see siteOrigin).
   */
  site_url: originText,
  preferDomain: text(),
  contentUrl_guonei: text(),
  contentUrl_guowai: text(),
  describe_host: text(),
  agency_host: text(),
  /** The shared Apple ID page (/apple_id_share) opens for paying customers; empty = not open. */
  apple_id_share_url: baseUrlText(),
  /** Quantumult X one-click import: the filter (rule) list and rewrite list; empty = not imported. */
  qx_filter_url: baseUrlText(),
  qx_rewrite_url: baseUrlText(),
  timezone: z
    .string()
    .max(100)
    .refine(isTimeZone, "时区无效，须为 IANA 时区名，如 Asia/Shanghai")
    .default("Asia/Shanghai"),
  // announcement
  notice_show: flag(false),
  notice_title: text(),
  notice_content: text(),
  notice_mark_red: flag(false),
  notice_day_interval: num(1, 1, 365),
  contact_info: text(),
  /** The announcement's 交流群 link: relative or http(s), the rule of every link the panel shows. */
  group_link: z
    .string()
    .max(300)
    .refine((value) => value === "" || isSafeHref(value), "群组链接须为 http(s):// 开头的链接或站内链接")
    .default(""),
  // what subscription files tell client apps (issue 29 §4): each can be switched off
  /** profile-title: the profile's name (the site's, or the link's `name`). */
  sub_header_title: flag(true),
  /** profile-update-interval: hours between automatic updates. */
  sub_header_update_interval: flag(true),
  /** subscription-userinfo: traffic used and left. */
  sub_header_userinfo: flag(true),
  /** expire= in subscription-userinfo (and Shadowrocket's STATUS line): the time package's end. */
  sub_header_expire: flag(true),
  /** support-url: the site's 问题反馈 page (only when the site address is set). */
  sub_header_support_url: flag(true),
  /** profile-web-page-url: the site (only when the site address is set). */
  sub_header_web_page: flag(true),
  /** announce: the announcement while 显示公告 is on. */
  sub_header_announce: flag(true),
  // outgoing mail
  smtp_host: text(),
  smtp_port: num(465, 1, 65_535),
  smtp_secure: flag(true),
  smtp_user: text(),
  smtp_password: text(),
  smtp_from: text(),
  // the Telegram bot (issue 13 §5): on while a token is set
  /** The token @BotFather gives ("123456:ABC…"); empty turns the bot off. */
  telegram_bot_token: z
    .string()
    .max(200)
    .refine(
      (value) => value === "" || value === SECRET_MASK || /^\d{1,20}:[\w-]{20,100}$/.test(value),
      "机器人令牌格式不对，须为 @BotFather 给出的完整令牌（数字、冒号和一串字符）",
    )
    .default(""),
  /** The Bot API's base URL: the public one, or a self-hosted Bot API server. */
  telegram_api_base: baseUrlText("https://api.telegram.org"),
  /** Updates come by webhook to site_url (https, port 443/80/88/8443) instead of long polling. */
  telegram_webhook: flag(false),
  // scheduled backups (<data>/backups/ferry-YYYY-MM-DD.db, src/ops/backup.ts)
  /** Hour of the business day (setting `timezone`) the daily backup is written from; -1 = off. */
  backup_hour: z.number().int("须为整数").min(-1).max(23).default(-1),
  /** How many daily backups are kept; older ones are deleted. */
  backup_keep: z.number().int("须为整数").min(1).max(365).default(7),
  // off-box copies of the scheduled backups (issue 30 §4, src/ops/offbox.ts)
  /** The S3-compatible service's endpoint (https://s3.us-east-1.amazonaws.com, R2, MinIO, …); empty = no S3 copy. */
  backup_s3_endpoint: baseUrlText(),
  backup_s3_bucket: z
    .string()
    .max(63)
    .refine(
      (value) => value === "" || /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(value),
      "存储桶名须为 3–63 位小写字母、数字、点或短横线",
    )
    .default(""),
  /** The region the signatures name ("us-east-1"; Cloudflare R2: "auto"). */
  backup_s3_region: z.string().max(64).default("us-east-1"),
  backup_s3_access_key_id: z.string().max(200).default(""),
  backup_s3_secret_access_key: z.string().max(200).default(""),
  /** Keys are `<prefix>ferry-YYYY-MM-DD.db.ferrybak`. */
  backup_s3_prefix: z
    .string()
    .max(200)
    .refine((value) => !value.startsWith("/") && !value.includes(".."), "前缀不能以 / 开头或含 ..")
    .default("ferry/"),
  /** Virtual-hosted style (https://<bucket>.<endpoint host>/key) instead of path style (<endpoint>/<bucket>/key). */
  backup_s3_virtual_host: flag(false),
  /** Also send each scheduled backup to the bound admins' Telegram chats (files under 50 MB). */
  backup_telegram: flag(false),
  /** Encrypts every off-box copy (AES-256-GCM, key by scrypt); empty = copies leave unencrypted. */
  backup_passphrase: z
    .string()
    .max(200)
    .refine((value) => value === "" || [...value].length >= 8, "加密口令至少 8 个字符")
    .default(""),
  /** How many scheduled copies are kept under the prefix; older ones are deleted. */
  backup_offbox_keep: z.number().int("须为整数").min(1).max(3650).default(30),
  /**
   * Prometheus scrapes `/metrics` with `Authorization: Bearer <this>` (issue 18 §4); empty: only
   * from this machine (loopback, not through a proxy).
   */
  metrics_token: z
    .string()
    .max(200)
    .refine(
      (value) => value === "" || value === SECRET_MASK || /^[\x21-\x7e]{16,200}$/.test(value),
      "监控令牌须为 16 个以上可见字符（不含空格），留空则只允许本机抓取",
    )
    .default(""),
  // two-factor login (issue 30)
  /** On: admin and yunying accounts must turn on two-factor login before anything else. */
  totp_required_staff: flag(false),
  // webhooks (issue 30 §3): each posts the events it lists to its URL, signed with its secret
  /** `[{id, url, secret, events}]`; secrets are masked like SECRET_SETTINGS (maskSettingForDisplay). */
  webhooks: webhooksSchema.default([]),
});

export type Settings = z.infer<typeof settingsSchema>;

/**
 * The trusted origin links are built from (site_url, else preferDomain as https), never the
 * request's Host header; null when neither is set or usable.
 */
export function siteOrigin(settings: Pick<Settings, "site_url" | "preferDomain">): string | null {
  // The store hands out one settings object until the next write, so this parses once per write.
  const known = siteOrigins.get(settings);
  if (known !== undefined) return known;
  const origin = normalizeOrigin(settings.site_url) || normalizeOrigin(settings.preferDomain) || null;
  siteOrigins.set(settings, origin);
  return origin;
}
const siteOrigins = new WeakMap<object, string | null>();
export type SettingKey = keyof Settings;

/** Settings that never leave the server in clear; `get` shows SECRET_MASK when one is set. */
export const SECRET_SETTINGS: readonly SettingKey[] = [
  "smtp_password",
  "epay_key",
  "trongrid_api_key",
  "telegram_bot_token",
  "metrics_token",
  "backup_s3_secret_access_key",
  "backup_passphrase",
];
export const SECRET_MASK = "********";

/**
 * Settings naming a server the panel itself calls, or hands to a gateway to call (issue 26, C11):
 * none may point at this machine, the local network or link-local addresses unless the server
 * runs with --allow-private-urls. URLs, and the SMTP host.
 */
export const OUTBOUND_URL_SETTINGS = [
  "epay_url",
  "notify_url",
  "return_url",
  "trongrid_url",
  "telegram_api_base",
  "backup_s3_endpoint",
] as const satisfies readonly SettingKey[];
export const OUTBOUND_HOST_SETTINGS = ["smtp_host"] as const satisfies readonly SettingKey[];

type SettingsShape = typeof settingsSchema.shape;

/**
 * What `/api/admin/config/set_config` accepts: any subset of the settings. Built from the fields
 * without their defaults, because zod 4 fills a missing key that has a default even inside
 * `.partial()`, which would reset every setting not sent.
 */
export const settingsPatchSchema = z
  .object(
    Object.fromEntries(
      Object.entries(settingsSchema.shape).map(([key, field]) => [key, field.removeDefault().optional()]),
    ) as { [K in keyof SettingsShape]: z.ZodOptional<ReturnType<SettingsShape[K]["removeDefault"]>> },
  )
  .strict();

/** `/api/host/get`: public site information for the announcement modal. */
export const hostInfoSchema = z.object({
  preferDomain: z.string(),
  /** True when the page host is the setting agency_host: the SPA shows the agency menu (DESIGN §7). */
  agencyMode: z.boolean(),
  contact_info: z.string(),
  group_link: z.string(),
  /** Whether 找回密码 can mail a confirmation link (mail and the site address are set up). */
  resetByMail: z.boolean(),
  /** Whether a shared Apple ID link is set; the link itself goes only to paying customers. */
  appleIdShareOpen: z.boolean(),
  /** The Quantumult X import's rule lists (settings of the same names; "" = left out). */
  qx_filter_url: z.string(),
  qx_rewrite_url: z.string(),
  notice: z.object({
    notice_show: z.boolean(),
    notice_title: z.string(),
    notice_content: z.string(),
    notice_mark_red: z.boolean(),
    notice_day_interval: z.number(),
  }),
});
export type HostInfo = z.infer<typeof hostInfoSchema>;

/** Webhooks as an admin may see them: each secret replaced by the mask. */
export function maskWebhookSecrets(webhooks: readonly Webhook[]): Webhook[] {
  return webhooks.map((webhook) => ({ ...webhook, secret: webhook.secret ? SECRET_MASK : "" }));
}

/**
 * A setting's value as it may leave the server (the settings get answer, the audit trail's diff):
 * a secret setting as SECRET_MASK ("" when unset), each webhook's secret masked, the rest as it is.
 * A setting added with secrets inside its value gets its case here.
 */
export function maskSettingValue(key: SettingKey, value: unknown): unknown {
  if (SECRET_SETTINGS.includes(key)) return value ? SECRET_MASK : "";
  if (key === "webhooks") return maskWebhookSecrets(value as Webhook[]);
  return value;
}
