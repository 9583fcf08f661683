/**
 * Headers every answer carries (issue 11, finding 9): a Content-Security-Policy the SPA runs under
 * (scripts only from the site's own files, no inline script, no framing), frame protection for old
 * browsers, a Referrer-Policy, nosniff, and HSTS on https.
 */
import { createHash } from "node:crypto";

/**
 * The SPA's needs: its own bundle, stylesheet and fetches; styles it sets through the DOM (which CSP
 * allows); images from itself, data: URLs and user icons on https. Pay pages open by navigation,
 * never by a form or a frame, so nothing else is allowed.
 */
const DIRECTIVES: [string, string][] = [
  ["default-src", "'self'"],
  ["script-src", "'self'"],
  ["style-src", "'self'"],
  ["img-src", "'self' data: https:"],
  ["font-src", "'self' data:"],
  ["connect-src", "'self'"],
  ["object-src", "'none'"],
  ["base-uri", "'none'"],
  ["form-action", "'self'"],
  ["frame-ancestors", "'none'"],
];

/** The policy, allowing also the inline `<style>` blocks given (by their SHA-256, not 'unsafe-inline'). */
export function contentSecurityPolicy(inlineStyles: readonly string[] = []): string {
  const hashes = inlineStyles.map((css) => ` 'sha256-${createHash("sha256").update(css).digest("base64")}'`);
  return DIRECTIVES.map(([name, sources]) =>
    name === "style-src" ? `${name} ${sources}${hashes.join("")}` : `${name} ${sources}`,
  ).join("; ");
}

const DEFAULT_POLICY = contentSecurityPolicy();

/** The policy for one HTML page: its own inline `<style>` blocks are allowed, nothing else inline. */
export function pagePolicy(html: string): string {
  const styles = [...html.matchAll(/<style(?:\s[^>]*)?>([\s\S]*?)<\/style>/gi)].map(
    (match) => match[1] ?? "",
  );
  return styles.length ? contentSecurityPolicy(styles) : DEFAULT_POLICY;
}

/**
 * The headers every answer carries but HSTS, for answers built with them from the start (the
 * envelope, the hot path): setSecurityHeaders then has nothing left to add.
 */
export const SECURITY_HEADERS = {
  "content-security-policy": DEFAULT_POLICY,
  "referrer-policy": "strict-origin-when-cross-origin",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
} as const;

const HSTS = "max-age=31536000";

/** Adds the security headers; a route's own Content-Security-Policy or Referrer-Policy is kept. */
export function setSecurityHeaders(headers: Headers, https: boolean): void {
  if (https) headers.set("strict-transport-security", HSTS);
  if (headers.get("x-frame-options") === SECURITY_HEADERS["x-frame-options"]) return; // built with them
  if (!headers.has("content-security-policy")) headers.set("content-security-policy", DEFAULT_POLICY);
  if (!headers.has("referrer-policy")) headers.set("referrer-policy", "strict-origin-when-cross-origin");
  headers.set("x-frame-options", "DENY");
  headers.set("x-content-type-options", "nosniff");
}

/** Set on a Response whose headers were built with the security headers already (markSecured). */
const SECURED = Symbol("secured");
type MaybeSecured = Response & { [SECURED]?: true };

/**
 * Says that `response` was built from headers setSecurityHeaders already completed (the envelope's,
 * a cached subscription's), so secureResponse need not read its headers back: on the hot paths
 * that read costs more than the rest of the answer's headers (issue 31 profile).
 */
export function markSecured(response: Response): Response {
  (response as MaybeSecured)[SECURED] = true;
  return response;
}

/** The answer as it leaves: the security headers on it (HSTS on https), unless built with them. */
export function secureResponse(response: Response, https: boolean): Response {
  if ((response as MaybeSecured)[SECURED] !== true) setSecurityHeaders(response.headers, https);
  else if (https) response.headers.set("strict-transport-security", HSTS);
  return response;
}
