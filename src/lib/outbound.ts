/**
 * The server's own connections to addresses an admin configures (EPay, TronGrid, the Telegram Bot
 * API, SMTP; issue 26, C11). The name is resolved here, every address it resolves to must be
 * public (src/lib/addresses.ts) unless the server runs with `--allow-private-urls`, and the
 * connection then goes to the address that was checked, with the name kept for `Host`, TLS (SNI
 * and the certificate) and SMTP. A name that resolves to this machine or the local network is
 * refused, also when it only starts to after it was saved (DNS rebinding).
 */
import { ADDRESS_KIND_TEXT, addressKind, hostKind } from "./addresses.ts";

/** The command-line flag that lets the server call private addresses, for messages. */
export const ALLOW_PRIVATE_FLAG = "--allow-private-urls";

/** A configured target that is this machine, the local network or link-local. */
export class PrivateTargetError extends Error {
  constructor(host: string, address: string) {
    const kind = addressKind(address) ?? hostKind(host) ?? "reserved";
    const what = kind === "public" ? "" : ADDRESS_KIND_TEXT[kind];
    super(
      `拒绝连接 ${host}（${address}，${what}）：不连接本机、内网或链路本地地址；` +
        `内网网关请以 ${ALLOW_PRIVATE_FLAG} 启动服务`,
    );
    this.name = "PrivateTargetError";
  }
}

/** `[::1]` → `::1`: the host as resolvers and sockets take it. */
const bareHost = (host: string) => host.replace(/^\[(.*)\]$/, "$1");

/**
 * The address to connect to for `host`: itself when it is an IP, else what it resolves to. Throws
 * PrivateTargetError when, without `allowPrivate`, the host or any address it resolves to is not
 * public (a name may resolve to a public and a private address; either could be the one used).
 */
export async function resolveTarget(host: string, allowPrivate: boolean): Promise<string> {
  const bare = bareHost(host);
  const named = hostKind(bare);
  if (!allowPrivate && named !== null && named !== "public") throw new PrivateTargetError(host, bare);
  const addresses = addressKind(bare) !== null ? [bare] : (await Bun.dns.lookup(bare)).map((r) => r.address);
  if (!allowPrivate) {
    const local = addresses.find((address) => addressKind(address) !== "public");
    if (local !== undefined) throw new PrivateTargetError(host, local);
  }
  // One address is dialled, without fetch's fallback between families: IPv4 where there is one,
  // as many servers have no IPv6 route.
  const chosen = addresses.find((address) => !address.includes(":")) ?? addresses[0];
  if (chosen === undefined) throw new Error(`${host} 无法解析`);
  return chosen;
}

/**
 * `fetch` for a URL an admin configured: connects to the checked address (resolveTarget), never
 * follows a redirect (it would lead past the check), and keeps the name for `Host` and TLS.
 */
export async function outboundFetch(
  url: string | URL,
  init: BunFetchRequestInit,
  allowPrivate: boolean,
): Promise<Response> {
  const target = new URL(url);
  const address = await resolveTarget(target.hostname, allowPrivate);
  const pinned = new URL(target);
  pinned.hostname = address.includes(":") ? `[${address}]` : address;
  const headers = new Headers(init.headers);
  headers.set("host", target.host);
  // TLS names the host (SNI) and checks the certificate against it; an address is its own name.
  const named = target.protocol === "https:" && addressKind(bareHost(target.hostname)) === null;
  const tls = named ? { ...init.tls, serverName: target.hostname } : init.tls;
  return fetch(pinned, { ...init, headers, tls, redirect: "error" });
}
