import { setSecurityHeaders } from "../rpc/security-headers.ts";

/** A subscription ready to send, as the route caches it. */
export interface ServedSubscription {
  /** The file, encoded to UTF-8 once: a Response of bytes skips encoding the text on every fetch. */
  body: Uint8Array<ArrayBuffer>;
  /**
   * Its headers with the security headers every answer carries (but HSTS, which depends on the
   * request), as a Headers object, which a Response copies fastest.
   */
  headers: Headers;
}

export function servedSubscription(body: string, headers: Record<string, string>): ServedSubscription {
  const complete = new Headers(headers);
  setSecurityHeaders(complete, false);
  return { body: new TextEncoder().encode(body), headers: complete };
}
