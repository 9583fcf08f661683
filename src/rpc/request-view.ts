/**
 * A request as the server believes it arrived: worked out once when it comes in (rpc/forwarded.ts,
 * which alone decides whether forwarded headers count) and read wherever the answer depends on it.
 * Kept free of server-only imports: the SPA imports cookies.ts, which reads it.
 */

export interface RequestView {
  /** The client's address: the socket peer, or behind trusted proxies the first one they did not vouch for. */
  ip: string;
  https: boolean;
  /** The host the client asked for (`Host`, or a trusted proxy's `X-Forwarded-Host`). */
  host: string;
}

const views = new WeakMap<Request, RequestView>();

/** What the connection itself says, believing no forwarded header. */
export function directView(request: Request, peer: string): RequestView {
  return {
    ip: peer,
    https: request.url.startsWith("https:"),
    host: request.headers.get("host") || new URL(request.url).host,
  };
}

/**
 * The direct view with the client's address read from the socket only when first asked for: a
 * cached subscription fetch never needs it, and the read costs it about a tenth of its time
 * (issue 31 profile). Code that reads the address after an await calls `keepAddress` first.
 */
export function directViewOnDemand(request: Request, peer: () => string): RequestView {
  let ip: string | undefined;
  return {
    get ip() {
      ip ??= peer();
      return ip;
    },
    https: request.url.startsWith("https:"),
    host: request.headers.get("host") || new URL(request.url).host,
  };
}

/**
 * Reads the client's address now, while the request is surely still connected: for a handler about
 * to await something before it may need the address.
 */
export function keepAddress(request: Request): void {
  void requestView(request).ip;
}

export function rememberView(request: Request, view: RequestView): RequestView {
  views.set(request, view);
  return view;
}

/** The view recorded for a request; one that did not come through the server (a test's Request) trusts no header. */
export function requestView(request: Request): RequestView {
  return views.get(request) ?? rememberView(request, directView(request, ""));
}
