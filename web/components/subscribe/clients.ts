/**
 * The client apps of the dashboard's platform tabs and of the 订阅导入（进阶） card (seed 000 §2):
 * which subscription client key each one fetches, how it imports with one click, and where its
 * install guide is.
 */
import { type Client, subscriptionOrigin, subscriptionUrl } from "../../../src/subscription/clients.ts";
import type { Platform } from "../platform.ts";
import type { DeepLinkKind } from "./deepLinks.ts";

export interface SubscribeClient {
  name: string;
  /** The `{client}` of /api/subscript/{client}/{userId}/{userkey}. */
  key: Exclude<Client, "auto">;
  /** The one-click import link; none for apps without a URL scheme (v2rayN, generic link). */
  deepLink?: DeepLinkKind;
  /** Where one-click import works (seed 000 §5); anywhere when not given. */
  importOn?: "mobile" | "iOS";
  /** Hash route of the install guide. */
  guide?: string;
  /** The advanced card offers a QR code for apps that scan one. */
  qr?: boolean;
  recommended?: boolean;
  /** The advanced card marks apps that cannot route domestic sites directly. */
  noDirect?: boolean;
  /** An Xray app that also imports the Xray JSON subscription (`json`): 订阅 ▾ offers that link too. */
  xrayJson?: boolean;
}

const FLCLASH_PC: SubscribeClient = {
  name: "FLClash",
  key: "flclash",
  deepLink: "clash",
  guide: "/#/flclash_for_pc",
};

export const PLATFORM_CLIENTS: Record<Platform, readonly SubscribeClient[]> = {
  Windows: [
    FLCLASH_PC,
    { name: "Clash", key: "clash", deepLink: "clash", guide: "/#/clash_for_windows" },
    { name: "v2ray", key: "v2ray", guide: "/#/v2rayng_for_windows" },
  ],
  Android: [
    { name: "FLClash", key: "flclash", deepLink: "clash", guide: "/#/flclash_for_android" },
    { name: "SingBox", key: "singbox", deepLink: "singbox", guide: "/#/singbox_for_android" },
    { name: "Clash", key: "clash", deepLink: "clash", guide: "/#/clash_for_android" },
    { name: "v2rayNG", key: "v2ray", deepLink: "v2rayng", guide: "/#/v2rayng_for_android", xrayJson: true },
    { name: "Clash Meta", key: "mjclash", deepLink: "clash", guide: "/#/clash_meta_for_android" },
  ],
  iOS: [
    { name: "Shadowrocket", key: "ss", deepLink: "shadowrocket", importOn: "mobile", guide: "/#/ss_for_ios" },
    { name: "SingBox", key: "singbox", deepLink: "singbox", guide: "/#/singbox_for_ios" },
    {
      name: "QuantumultX",
      key: "qx",
      deepLink: "quantumultx",
      importOn: "mobile",
      guide: "/#/quantumultx_for_ios",
    },
    {
      name: "Streisands",
      key: "streisands",
      deepLink: "streisand",
      guide: "/#/streisand_for_ios",
      xrayJson: true,
    },
    { name: "V2Box", key: "v2box", deepLink: "v2box", guide: "/#/v2box_for_ios", xrayJson: true },
  ],
  macOS: [
    FLCLASH_PC,
    { name: "SingBox", key: "singbox", deepLink: "singbox", guide: "/#/singbox_for_mac" },
    { name: "Clash", key: "clash", deepLink: "clash", guide: "/#/clash_for_macos" },
    // The generic base64 link: any v2ray-family app on the Mac takes it by copy and paste.
    { name: "v2ray", key: "v2ray" },
  ],
};

/** The advanced card's buttons, in the seed's order; SSR is imported through Shadowrocket. */
export const ADVANCED_CLIENTS: readonly SubscribeClient[] = [
  {
    name: "Shadowrocket",
    key: "ss",
    deepLink: "shadowrocket",
    importOn: "mobile",
    qr: true,
    recommended: true,
  },
  { name: "FLClash", key: "flclash", deepLink: "clash", recommended: true },
  { name: "SSR", key: "ssr", deepLink: "shadowrocket", importOn: "mobile", qr: true, recommended: true },
  { name: "Loon", key: "loon", deepLink: "loon", qr: true, recommended: true },
  { name: "Clash", key: "clash", deepLink: "clash" },
  { name: "Surge", key: "surge", deepLink: "surge", importOn: "iOS", qr: true },
  { name: "QuantumultX", key: "qx", deepLink: "quantumultx", importOn: "mobile", qr: true },
  { name: "Surfboard", key: "surfboard", deepLink: "surge", qr: true, noDirect: true },
];

export const SINGBOX_CLIENT: SubscribeClient = {
  name: "sing-box",
  key: "singbox",
  deepLink: "singbox",
  qr: true,
};

/** The Xray JSON subscription's client key (one complete config per line, issue 29). */
export const XRAY_JSON_KEY = "json" satisfies SubscribeClient["key"];

/** Clients that fail with 网络异常 when the user info has no `_id` (seed 000 §5). */
export const NEEDS_USER_ID: readonly SubscribeClient["key"][] = ["ss", "ssr"];

/** The user's link for `client` on the describe_host setting's site, else on this one. */
export function userSubscriptionUrl(
  key: SubscribeClient["key"],
  user: { _id: string; userkey: string; describe_host: string },
  currentOrigin: string = location.origin,
): string {
  return subscriptionUrl(subscriptionOrigin(user.describe_host, currentOrigin), key, user);
}
