/**
 * Cross-site request refusal (issue 11, finding 3). A page on another site can make a browser send
 * the session cookie with a "simple" request (text/plain, a form, multipart) without asking; only
 * JSON needs a CORS preflight, which ferry never grants. And a browser says where a request comes
 * from (`Origin`, `Sec-Fetch-Site`), which a page cannot forge. Clients that are not browsers (the
 * CLI, tests, apps) send neither header and are not affected.
 */

/** `Content-Type: application/json`, parameters (charset) allowed. */
export function isJsonRequest(request: Request): boolean {
  const type = request.headers.get("content-type");
  return type?.split(";")[0]?.trim().toLowerCase() === "application/json";
}

/** The origin ("scheme://host[:port]") of an absolute URL, normalised; null when it is not one. */
export function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Whether a browser request comes from the site itself: `Sec-Fetch-Site` (when sent) is
 * same-origin, or none for what the user typed; `Origin` (when sent) is one of `ownOrigins`.
 * Same-site is not enough: another subdomain is another party. `Origin: null` (sandboxed frames,
 * some redirects) is refused.
 */
export function sameSiteRequest(request: Request, ownOrigins: readonly (string | null)[]): boolean {
  const fetchSite = request.headers.get("sec-fetch-site");
  if (fetchSite !== null && fetchSite !== "same-origin" && fetchSite !== "none") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  const claimed = originOf(origin);
  return claimed !== null && ownOrigins.some((own) => own !== null && originOf(own) === claimed);
}
