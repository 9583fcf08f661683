/**
 * Which sing-box core a client runs, from its User-Agent or `?version=`, reduced to the config
 * dialect Ferry renders for it (docs/decisions.md "Issue 29: sing-box by version"):
 *   "1.10"  cores older than 1.11: legacy DNS servers, the `dns` outbound, inbound `sniff`
 *   "1.11"  legacy DNS servers (the only form 1.11 knows) with rule actions (new in 1.11)
 *   "1.12"  1.12 and every later core: typed DNS servers, rule actions, `default_domain_resolver`;
 *           nothing in it was deprecated by 1.12–1.14, so 1.13 and 1.14 get the same file
 */

export const SINGBOX_DIALECTS = ["1.10", "1.11", "1.12"] as const;
export type SingboxDialect = (typeof SINGBOX_DIALECTS)[number];

/** For clients that do not say their core: see decisions.md (they read only the outbounds, or run a current core). */
export const DEFAULT_SINGBOX_DIALECT: SingboxDialect = "1.12";

export interface CoreVersion {
  major: number;
  minor: number;
}

export function dialectOf({ major, minor }: CoreVersion): SingboxDialect {
  if (major > 1 || minor >= 12) return "1.12";
  return minor === 11 ? "1.11" : "1.10";
}

/** `1.11`, `1.11.4`, `v1.12.0-beta.3`: at most three digits a part, so no junk of any length is read as a version. */
const VERSION = /^v?(\d{1,3})\.(\d{1,3})(?:\.\d{1,3})?(?:-[0-9a-z.]{1,20})?$/i;

/** `?version=`: a sing-box version as the apps print it, or null for anything else. */
export function parseVersionParam(value: string): CoreVersion | null {
  const match = VERSION.exec(value.trim());
  if (!match) return null;
  return { major: Number(match[1]), minor: Number(match[2]) };
}

/**
 * The core version a User-Agent names:
 * - `sing-box 1.11.4` anywhere (SFA/SFI/SFM/SFT `SFI/1.11.4 (411; sing-box 1.11.4)`, and any
 *   client that appends its core, e.g. `Karing/1.2.24; sing-box 1.13.19`, `sing-box/1.12.0`);
 * - else the official apps' own version (`SFA/1.11.4`), which is their core's;
 * - else Hiddify's app version mapped to the core it embeds: 4.x is built on sing-box 1.13,
 *   2.x and older on 1.8.9 (hiddify-core 3.1.8), so older than 1.11;
 * - else null (Karing without its core, browsers, anything else).
 */
export function coreVersionFromUserAgent(userAgent: string): CoreVersion | null {
  const core = /sing-box[ /]v?(\d{1,3})\.(\d{1,3})/i.exec(userAgent);
  if (core) return { major: Number(core[1]), minor: Number(core[2]) };
  const app = /^SF[AIMT]\/(\d{1,3})\.(\d{1,3})/i.exec(userAgent);
  if (app) return { major: Number(app[1]), minor: Number(app[2]) };
  const hiddify = /hiddify(?:next)?\/(\d{1,3})\./i.exec(userAgent);
  if (hiddify) return Number(hiddify[1]) >= 4 ? { major: 1, minor: 13 } : { major: 1, minor: 8 };
  return null;
}

/**
 * The dialect for a sing-box fetch: `?version=` beats the User-Agent, and a client that names no
 * version gets the default. A `version` that is not a version is refused ("invalid"), never guessed at.
 */
export function singboxDialectFor(
  userAgent: string,
  versionParam: string | null,
): SingboxDialect | "invalid" {
  if (versionParam !== null) {
    const asked = parseVersionParam(versionParam);
    return asked ? dialectOf(asked) : "invalid";
  }
  const running = coreVersionFromUserAgent(userAgent);
  return running ? dialectOf(running) : DEFAULT_SINGBOX_DIALECT;
}

/** What the subscription route and `ferry sub render` use: a dialect for a sing-box fetch, else undefined. */
export function dialectForFetch(
  format: string,
  userAgent: string,
  versionParam: string | null,
): SingboxDialect | "invalid" | undefined {
  return format === "singbox" ? singboxDialectFor(userAgent, versionParam) : undefined;
}

export const INVALID_VERSION_MESSAGE = "version 参数无效：应为 sing-box 版本号，例如 1.11 或 1.12.4";
