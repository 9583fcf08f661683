/**
 * Who sent a request and how it reached us. `X-Forwarded-For`, `-Proto` and `-Host` are believed
 * only when the socket peer is one of the trusted proxies (`ferry serve --trust-proxy`); from
 * anyone else they are ignored, so a client cannot claim another address, https or another host.
 */
import { BlockList, isIP } from "node:net";
import { directView, directViewOnDemand, type RequestView, rememberView } from "./request-view.ts";

/** The addresses whose forwarded headers are believed; empty trusts nobody. */
export interface TrustedProxies {
  /** The list as given, for messages. */
  readonly entries: readonly string[];
  has(address: string): boolean;
}

/** `--trust-proxy` without addresses: a proxy on the same machine. */
export const LOOPBACK_PROXIES = "127.0.0.0/8,::1";

/**
 * Parses a comma-separated list of IP addresses and CIDR ranges ("127.0.0.1, 10.0.0.0/8, ::1").
 * Throws on an entry that is neither, naming it.
 */
export function parseTrustedProxies(list: string): TrustedProxies {
  const entries = list
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const blocks = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const length = prefix === undefined ? bits : Number(prefix);
    const validPrefix = prefix === undefined || (/^\d+$/.test(prefix) && length <= bits);
    if (!family || extra !== undefined || !validPrefix) {
      throw new Error(`not an IP address or CIDR range: ${entry}`);
    }
    blocks.addSubnet(address, length, family === 4 ? "ipv4" : "ipv6");
  }
  return {
    entries,
    has(address) {
      if (entries.length === 0) return false;
      const family = isIP(address);
      return family !== 0 && blocks.check(address, family === 4 ? "ipv4" : "ipv6");
    },
  };
}

/** The right-most value of a list header (the one the nearest proxy wrote). */
function lastValue(header: string | null): string | undefined {
  return header?.split(",").at(-1)?.trim() || undefined;
}

/** Strips the brackets and port some proxies keep ("[::1]:443", "1.2.3.4:5678"). */
function bareAddress(entry: string): string {
  if (isIP(entry)) return entry;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed?.[1]) return bracketed[1];
  const withPort = /^([\d.]+):\d+$/.exec(entry);
  return withPort?.[1] ?? entry;
}

/** Walks X-Forwarded-For from the right past trusted proxies; the first other address is the client. */
function forwardedClient(header: string | null, peer: string, trusted: TrustedProxies): string {
  let client = peer;
  const hops = (header ?? "").split(",").map((hop) => bareAddress(hop.trim()));
  for (let i = hops.length - 1; i >= 0 && trusted.has(client); i--) {
    const hop = hops[i] ?? "";
    // Anything that is not an address was not written by a proxy; the hop that passed it on is the client.
    if (!isIP(hop)) break;
    client = hop;
  }
  return client;
}

/** Works out the request's view once, when it arrives (server.ts); later reads use `requestView`. */
export function recordRequestView(request: Request, peer: string, trusted: TrustedProxies): RequestView {
  const direct = directView(request, peer);
  if (!trusted.has(peer)) return rememberView(request, direct);
  const headers = request.headers;
  return rememberView(request, {
    ip: forwardedClient(headers.get("x-forwarded-for"), peer, trusted),
    https: direct.https || lastValue(headers.get("x-forwarded-proto"))?.toLowerCase() === "https",
    host: lastValue(headers.get("x-forwarded-host")) || direct.host,
  });
}

/**
 * The view of a request as it arrives (server.ts). Trusting no proxy, nothing depends on the
 * socket's address but the address itself, read when first asked for; otherwise as recordRequestView.
 */
export function recordArrival(request: Request, peer: () => string, trusted: TrustedProxies): RequestView {
  if (trusted.entries.length > 0) return recordRequestView(request, peer(), trusted);
  return rememberView(request, directViewOnDemand(request, peer));
}
