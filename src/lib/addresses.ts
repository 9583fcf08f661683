/**
 * What an address is (issue 26, C11): public, or one the panel must not be made to call (this
 * machine, the local network, link-local). Read for the URL settings when they are saved and for
 * every address a name resolves to before the server connects (src/lib/outbound.ts), and for the
 * loopback-only `/metrics`. Pure, so the SPA may import it too.
 */

export type AddressKind = "public" | "loopback" | "private" | "link-local" | "unspecified" | "reserved";

/** "127.0.0.1" → [127, 0, 0, 1]; only the plain dotted form (the URL parser makes it of any other). */
function ipv4Bytes(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part))) return null;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : null;
}

/** The eight 16-bit words of an IPv6 address ("::1", "::ffff:127.0.0.1", "fe80::1%eth0"), or null. */
function ipv6Words(text: string): number[] | null {
  let hex = text.replace(/%.*$/, "");
  const lastColon = hex.lastIndexOf(":");
  if (hex.includes(".", lastColon)) {
    // A dotted IPv4 tail is the last two words.
    const v4 = ipv4Bytes(hex.slice(lastColon + 1));
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    hex = `${hex.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = hex.split("::");
  if (halves.length > 2) return null;
  const [head = [], tail = []] = halves.map((half) =>
    (half ? half.split(":") : []).map((group) =>
      /^[0-9a-f]{1,4}$/i.test(group) ? parseInt(group, 16) : NaN,
    ),
  );
  if ([...head, ...tail].some(Number.isNaN)) return null;
  const explicit = head.length + tail.length;
  if (halves.length === 1) return explicit === 8 ? head : null;
  if (explicit > 7) return null;
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...tail];
}

function ipv4Kind([a = 0, b = 0, c = 0]: number[]): AddressKind {
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  // Carrier-grade NAT (100.64/10) is a provider's private network.
  if (a === 100 && b >= 64 && b <= 127) return "private";
  if (a === 169 && b === 254) return "link-local";
  // IETF protocol assignments, benchmarking, multicast, reserved, broadcast.
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19)) || a >= 224) {
    return "reserved";
  }
  return "public";
}

/** The IPv4 address in two words, as bytes. */
const embedded = (high = 0, low = 0) => [high >> 8, high & 255, low >> 8, low & 255];

function ipv6Kind(w: number[]): AddressKind {
  const zeros = (from: number, to: number) => w.slice(from, to).every((word) => word === 0);
  if (zeros(0, 8)) return "unspecified";
  if (zeros(0, 7) && w[7] === 1) return "loopback";
  // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4.
  if (zeros(0, 5) && (w[5] === 0xffff || w[5] === 0)) return ipv4Kind(embedded(w[6], w[7]));
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return ipv4Kind(embedded(w[6], w[7]));
  if (w[0] === 0x2002) {
    const inner = ipv4Kind(embedded(w[1], w[2]));
    if (inner !== "public") return inner;
  }
  const first = w[0] ?? 0;
  if ((first & 0xfe00) === 0xfc00) return "private"; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return "link-local"; // fe80::/10
  if ((first & 0xffc0) === 0xfec0) return "private"; // site-local fec0::/10, deprecated
  if ((first & 0xff00) === 0xff00) return "reserved"; // multicast
  return "public";
}

/** The kind of an IP address as resolvers and sockets write it ("10.0.0.1", "::1"); null for no IP. */
export function addressKind(address: string): AddressKind | null {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  const v4 = ipv4Bytes(bare);
  if (v4) return ipv4Kind(v4);
  const v6 = bare.includes(":") ? ipv6Words(bare) : null;
  return v6 ? ipv6Kind(v6) : null;
}

/**
 * The kind of a host as a URL or a setting gives it: an IP in any spelling the URL parser reads
 * (`0x7f000001`, `2130706433`, `0177.0.0.1`, `[::ffff:127.0.0.1]`), or `localhost` and its
 * subdomains (loopback by RFC 6761). Null for any other name: what it resolves to decides.
 */
export function hostKind(host: string): AddressKind | null {
  const name = host.trim().toLowerCase().replace(/\.+$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  const literal = name.includes(":") && !name.startsWith("[") ? `[${name}]` : name;
  let normalized: string;
  try {
    normalized = new URL(`http://${literal}/`).hostname;
  } catch {
    return null;
  }
  return addressKind(normalized);
}

/** The host of an http(s) URL, or null when it is none. */
export function urlHost(url: string): string | null {
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.hostname : null;
  } catch {
    return null;
  }
}

/** How a refusal names the kind, in the messages admins read. */
export const ADDRESS_KIND_TEXT: Record<Exclude<AddressKind, "public">, string> = {
  loopback: "本机地址",
  private: "内网地址",
  "link-local": "链路本地地址",
  unspecified: "未指定地址",
  reserved: "保留地址",
};
