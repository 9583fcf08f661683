/**
 * The informational headers client apps read from a subscription (issue 29 §4; sources in
 * docs/decisions.md "Issue 29: headers and Xray JSON"): the profile's name, how often to update,
 * usage and expiry, the support and web-page buttons, and the announcement. Each is sent as an HTTP
 * header on every format; formats whose clients also read `#key: value` lines at the top of the
 * body (the URI list: Happ, Hiddify) get them there too. Each can be switched off in 配置管理.
 */
import { type Settings, siteOrigin } from "../modules/settings/schema.ts";
import { type UsageInfo, usageText } from "./model.ts";

/** Hours between automatic updates (`profile-update-interval`); the guides suggest 1440 minutes. */
export const UPDATE_INTERVAL_HOURS = 24;
/** Happ shows at most this many characters of `announce` (happ.su dev-docs meta-info). */
export const ANNOUNCE_MAX_CHARS = 200;
/** The 问题反馈 page of the SPA (web/routes.ts). */
export const FEEDBACK_PATH = "/#/feedback";

/** Header name and value, in the order they are written. */
export type ProfileHeader = readonly [name: string, value: string];

type HeaderSettings = Pick<
  Settings,
  | "site_url"
  | "preferDomain"
  | "notice_show"
  | "notice_title"
  | "notice_content"
  | "sub_header_title"
  | "sub_header_update_interval"
  | "sub_header_userinfo"
  | "sub_header_support_url"
  | "sub_header_web_page"
  | "sub_header_announce"
>;

/** `base64:` + UTF-8 base64: the form Happ, Hiddify and Marzban use for non-ASCII text in a header. */
export const base64Text = (text: string) => `base64:${Buffer.from(text, "utf8").toString("base64")}`;

/**
 * The announcement as clients show it: title and content of the 公告弹窗 while it is shown, at most
 * 200 characters (code points, so no character is cut in half); null when none is shown.
 */
export function announceText(settings: Pick<Settings, "notice_show" | "notice_title" | "notice_content">) {
  if (!settings.notice_show) return null;
  const title = settings.notice_title.trim();
  const content = settings.notice_content.trim().replace(/\s*\n\s*/g, " ");
  const text = title && content ? `${title}：${content}` : title || content;
  if (!text) return null;
  const chars = Array.from(text);
  return chars.length <= ANNOUNCE_MAX_CHARS ? text : `${chars.slice(0, ANNOUNCE_MAX_CHARS - 1).join("")}…`;
}

/** The headers that are switched on, built from settings only: never from the request's Host. */
export function profileHeaders(
  settings: HeaderSettings,
  file: { title: string; usage: UsageInfo },
): ProfileHeader[] {
  const headers: ProfileHeader[] = [];
  if (settings.sub_header_title) headers.push(["profile-title", base64Text(file.title)]);
  if (settings.sub_header_update_interval)
    headers.push(["profile-update-interval", String(UPDATE_INTERVAL_HOURS)]);
  if (settings.sub_header_userinfo) headers.push(["subscription-userinfo", usageText(file.usage)]);
  const origin = siteOrigin(settings);
  if (origin && settings.sub_header_support_url) headers.push(["support-url", `${origin}${FEEDBACK_PATH}`]);
  if (origin && settings.sub_header_web_page) headers.push(["profile-web-page-url", `${origin}/`]);
  const announce = settings.sub_header_announce ? announceText(settings) : null;
  if (announce) headers.push(["announce", base64Text(announce)]);
  return headers;
}

/** The same headers as `#key: value` lines for the top of a text body (Happ, Hiddify). */
export const headerLines = (headers: readonly ProfileHeader[]) =>
  headers.map(([name, value]) => `#${name}: ${value}`);
