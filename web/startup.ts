/**
 * Start-up rules of seed 000 §4 for what the server cannot see: parameters in the hash query
 * (`/#/login?c=abc&token=…`). `?c=` / `?token=` in the real query are handled by the server.
 */
import { NO_CHANNEL_CODE, TOKEN_PATTERN } from "../src/modules/user/constants.ts";
import { COOKIE_DAYS } from "../src/rpc/cookies.ts";
import { Cookies, getCookie, setCookie } from "./lib/cookies.ts";
import { hashPathAndQuery, queryParam } from "./lib/query.ts";

/**
 * Applies the start-up rules. Returns false when the page is being reloaded through the server:
 * a login-link token in the hash query can only be exchanged there, for an HttpOnly session
 * cookie. The server accepts only tokens it minted for a link; a value that cannot be one is
 * dropped from the address here without a reload.
 */
export function applyStartupParams(): boolean {
  const { path, query } = hashPathAndQuery();
  const hashToken = query.get("token")?.replace(/\/$/, "");
  if (hashToken !== undefined) {
    query.delete("token");
    const rest = query.toString();
    const hash = `#${path}${rest ? `?${rest}` : ""}`;
    if (TOKEN_PATTERN.test(hashToken)) {
      location.replace(`/?token=${encodeURIComponent(hashToken)}${hash}`);
      return false;
    }
    history.replaceState(history.state, "", `${location.pathname}${location.search}${hash}`);
  }

  const channel = queryParam("c");
  const current = getCookie(Cookies.channelCode);
  // The server gives first-time visitors the no-code value before the SPA can read a `c` that
  // sits in the hash query, so that value counts as "no channel cookie yet".
  // (The default no-code value for visitors without `c` is set by the server on `GET /`.)
  if (channel && (!current || current === NO_CHANNEL_CODE)) {
    setCookie(Cookies.channelCode, channel.slice(0, 64), { days: COOKIE_DAYS.channel });
  }
  return true;
}
