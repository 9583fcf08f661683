/**
 * Issue 31: envelope calls and plain subscription fetches are answered before Elysia's router
 * (server.ts `hotRoutes`), cached subscription files are kept as bytes with their security headers,
 * and the client's address is read from the socket only when asked for. What a client gets must
 * not change: the router's answer, every security header (HSTS behind a trusted https proxy), the
 * same bytes on every fetch of a cached file, and the device's address recorded.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setDeviceLimit } from "../src/modules/device/service.ts";
import type { UserRow } from "../src/modules/user/row.ts";
import { toBase64Json } from "../src/rpc/envelope.ts";
import { parseTrustedProxies } from "../src/rpc/forwarded.ts";
import { setSecurityHeaders } from "../src/rpc/security-headers.ts";
import { buildApp } from "../src/server.ts";
import { type ApiClient, loggedInClient, startTestServer, type TestServer } from "./harness.ts";

let server: TestServer;
let client: ApiClient;
let user: UserRow;

beforeAll(async () => {
  server = await startTestServer();
  ({ client, user } = await loggedInClient(server));
  await setDeviceLimit(server.context, user.id, 3);
});
afterAll(async () => {
  await server?.close();
});

const subscriptionPath = () => `/api/subscript/clash/${user.id}/${user.userkey}`;
const DEVICE = { "user-agent": "ClashX/1.9.0", "x-hwid": "hot-path-device-1", "x-device-os": "macOS" };

function requestFor(path: string): RequestInit & { headers: Record<string, string> } {
  if (path.startsWith("/api/subscript/")) return { method: "GET", headers: DEVICE };
  return {
    method: "POST",
    headers: { "content-type": "application/json", cookie: client.cookieHeader() },
    body: JSON.stringify({ data: toBase64Json({}) }),
  };
}

/** Headers Bun.serve sets on the wire itself, absent from a Response the router hands back. */
const TRANSPORT = new Set(["date", "content-length", "connection", "keep-alive", "transfer-encoding"]);

async function comparable(response: Response) {
  const headers = [...response.headers].filter(([name]) => !TRANSPORT.has(name)).sort();
  return { status: response.status, headers, body: await response.text() };
}

describe("the hot paths (issue 31)", () => {
  test("each answers exactly what the router answers", async () => {
    const router = buildApp(server.context);
    const paths = [
      "/api/user/userinfo",
      "/api/user/userinfo?from=test",
      subscriptionPath(),
      `${subscriptionPath()}?flag=v2ray&name=hot`,
      `/api/subscript/clash/${user.id.toUpperCase()}/${user.userkey}`,
      `${subscriptionPath()}/`,
      "/api/subscript/nosuchclient/x/y",
    ];
    for (const path of paths) {
      // Over HTTP first: a new device is registered there, so both meet it known.
      const served = await comparable(await fetch(`${server.url}${path}`, requestFor(path)));
      const routed = await router.fetch(new Request(`${server.url}${path}`, requestFor(path)));
      setSecurityHeaders(routed.headers, false);
      expect({ path, ...served }).toEqual({ path, ...(await comparable(routed)) });
    }
  });

  test("a cached subscription file sends the same bytes, with its length, on every fetch", async () => {
    const bodies: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await fetch(`${server.url}${subscriptionPath()}`, { headers: DEVICE });
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(Number(response.headers.get("content-length"))).toBe(bytes.length);
      bodies.push(new TextDecoder().decode(bytes));
    }
    expect(bodies[0]).toContain("proxies:");
    expect(new Set(bodies).size).toBe(1);
  });

  test("envelope and subscription answers carry the security headers; HSTS only from a trusted https proxy", async () => {
    const answers = async (headers: Record<string, string>) => [
      await client.raw("/api/user/userinfo", JSON.stringify({ data: toBase64Json({}) }), headers),
      await fetch(`${server.url}${subscriptionPath()}`, { headers: { ...DEVICE, ...headers } }),
      await fetch(`${server.url}${subscriptionPath()}`, { headers: { ...DEVICE, ...headers } }),
    ];
    const forwarded = { "x-forwarded-proto": "https" };
    for (const response of [...(await answers({})), ...(await answers(forwarded))]) {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
      expect(response.headers.get("strict-transport-security")).toBeNull();
    }
    const untrusted = server.context.trustedProxies;
    server.context.trustedProxies = parseTrustedProxies("127.0.0.1");
    try {
      for (const response of await answers(forwarded)) {
        expect(response.headers.get("strict-transport-security")).toBe("max-age=31536000");
        expect(response.headers.get("x-frame-options")).toBe("DENY");
      }
    } finally {
      server.context.trustedProxies = untrusted;
    }
  });

  test("a new device fetching a cached file is recorded with the client's address", async () => {
    await fetch(`${server.url}${subscriptionPath()}`, { headers: DEVICE });
    const hwid = "hot-path-device-2";
    const response = await fetch(`${server.url}${subscriptionPath()}`, {
      headers: { ...DEVICE, "x-hwid": hwid },
    });
    expect(response.headers.get("x-hwid-active")).toBe("true");
    const device = await server.context.db.get<{ last_ip: string }>(
      "SELECT last_ip FROM devices WHERE user_id = ? AND hwid = ?",
      user.id,
      hwid,
    );
    expect(device?.last_ip).toBe("127.0.0.1");
  });
});
