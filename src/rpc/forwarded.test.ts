/** Trusted proxies: the list `--trust-proxy` takes, and what a request's view believes from whom. */
import { describe, expect, test } from "bun:test";
import { LOOPBACK_PROXIES, parseTrustedProxies, recordRequestView } from "./forwarded.ts";
import { requestView } from "./request-view.ts";

describe("parseTrustedProxies", () => {
  test("addresses and CIDR ranges of both families; loopback covers 127/8 and ::1, IPv4-mapped too", () => {
    const loopback = parseTrustedProxies(LOOPBACK_PROXIES);
    for (const address of ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"]) {
      expect({ address, trusted: loopback.has(address) }).toEqual({ address, trusted: true });
    }
    for (const address of ["10.0.0.1", "128.0.0.1", "::2", "", "localhost"]) {
      expect({ address, trusted: loopback.has(address) }).toEqual({ address, trusted: false });
    }
    const mixed = parseTrustedProxies(" 10.0.0.0/8 , 192.0.2.7, 2001:db8::/32 ");
    expect(mixed.entries).toEqual(["10.0.0.0/8", "192.0.2.7", "2001:db8::/32"]);
    expect([mixed.has("10.200.1.1"), mixed.has("192.0.2.7"), mixed.has("192.0.2.8")]).toEqual([
      true,
      true,
      false,
    ]);
    expect([mixed.has("2001:db8:1::5"), mixed.has("2001:db9::1")]).toEqual([true, false]);
  });

  test("an empty list trusts nobody", () => {
    expect(parseTrustedProxies("").has("127.0.0.1")).toBe(false);
  });

  test("anything else is refused, naming the entry", () => {
    for (const entry of [
      "proxy.example",
      "10.0.0.0/33",
      "::/129",
      "10.0.0.1/8/1",
      "10.0.0.0/",
      "10.0.0.0/-1",
      "1.2.3",
    ]) {
      expect(() => parseTrustedProxies(`127.0.0.1,${entry}`)).toThrow(
        `not an IP address or CIDR range: ${entry}`,
      );
    }
  });
});

describe("recordRequestView", () => {
  const request = (headers: Record<string, string>) =>
    new Request("http://127.0.0.1:3000/api/x", { headers: { host: "127.0.0.1:3000", ...headers } });
  const forwarded = {
    "x-forwarded-for": "198.51.100.7, 203.0.113.9",
    "x-forwarded-proto": "https",
    "x-forwarded-host": "panel.example.com",
  };

  test("from a peer that is not trusted, forwarded headers change nothing", () => {
    const view = recordRequestView(request(forwarded), "192.0.2.50", parseTrustedProxies("127.0.0.1"));
    expect(view).toEqual({ ip: "192.0.2.50", https: false, host: "127.0.0.1:3000" });
  });

  test("from a trusted peer: the right-most address it did not vouch for, its scheme and host", () => {
    const req = request(forwarded);
    const view = recordRequestView(req, "127.0.0.1", parseTrustedProxies(LOOPBACK_PROXIES));
    expect(view).toEqual({ ip: "203.0.113.9", https: true, host: "panel.example.com" });
    // Read back later by the same request.
    expect(requestView(req)).toBe(view);
  });

  test("a chain of trusted proxies is walked; when all are trusted the left-most is the client", () => {
    const trusted = parseTrustedProxies("127.0.0.1, 203.0.113.0/24");
    expect(recordRequestView(request(forwarded), "127.0.0.1", trusted).ip).toBe("198.51.100.7");
    const allTrusted = request({ "x-forwarded-for": "203.0.113.1, 203.0.113.2" });
    expect(recordRequestView(allTrusted, "127.0.0.1", trusted).ip).toBe("203.0.113.1");
  });

  test("a hop that is no address stops the walk at the proxy that passed it on; ports and brackets are dropped", () => {
    const trusted = parseTrustedProxies("127.0.0.1, 203.0.113.9");
    const garbage = request({ "x-forwarded-for": "<script>, 203.0.113.9" });
    expect(recordRequestView(garbage, "127.0.0.1", trusted).ip).toBe("203.0.113.9");
    const ported = request({ "x-forwarded-for": "[2001:db8::1]:5000, 198.51.100.7:4000" });
    expect(recordRequestView(ported, "127.0.0.1", trusted).ip).toBe("198.51.100.7");
  });

  test("the nearest proxy's values win over a client's own X-Forwarded-Proto / -Host", () => {
    const appended = request({
      "x-forwarded-proto": "https, http",
      "x-forwarded-host": "evil.example, panel.example.com",
    });
    const view = recordRequestView(appended, "127.0.0.1", parseTrustedProxies("127.0.0.1"));
    expect(view).toEqual({ ip: "127.0.0.1", https: false, host: "panel.example.com" });
  });

  test("a request that never came through the server trusts no header", () => {
    expect(requestView(request(forwarded))).toEqual({ ip: "", https: false, host: "127.0.0.1:3000" });
  });
});
