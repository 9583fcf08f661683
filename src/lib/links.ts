/**
 * Which links the panel shows or follows, for the server and the SPA alike (issue 11: a gateway's
 * or a notice's `javascript:` link must never run in the panel's origin).
 */

/** Schemes of ordinary web pages. */
const WEB_SCHEMES: readonly string[] = ["https:", "http:"];

/**
 * The wallet apps' own schemes that payment gateways hand out (payments.md §2–4):
 * `alipays://platformapi/startapp?…`, `alipay://…`, `weixin://wxpay/bizpayurl?pr=…`, `wxp://…`.
 */
const WALLET_SCHEMES: readonly string[] = ["alipays:", "alipay:", "weixin:", "wxp:"];

/** Relative links resolve against this, so they count as same-site https. */
const SAME_SITE = "https://same-site.invalid/";

/**
 * The scheme a browser would use for `link` (relative links: https), or null for blank text or
 * what is no URL at all. The WHATWG parser strips the tabs, newlines and leading spaces a browser
 * strips, so `" java\tscript:"` is seen as `javascript:`, as the browser would.
 */
function schemeOf(link: string): string | null {
  if (link.trim() === "") return null;
  try {
    return new URL(link, SAME_SITE).protocol;
  } catch {
    return null;
  }
}

/** A link the panel may follow from a notice or show as a page link: relative or http(s). */
export function isSafeHref(link: string): boolean {
  const scheme = schemeOf(link);
  return scheme !== null && WEB_SCHEMES.includes(scheme);
}

/** A pay, app or QR link from a gateway: http(s) or a wallet app's scheme, nothing else. */
export function isPayLink(link: string): boolean {
  const scheme = schemeOf(link);
  return scheme !== null && (WEB_SCHEMES.includes(scheme) || WALLET_SCHEMES.includes(scheme));
}

/** The scheme of a refused link, for logs ("javascript:"), without the rest of it. */
export function linkSchemeForLog(link: string): string {
  return schemeOf(link) ?? "(no URL)";
}
