/**
 * The HTTP edge of issue 11 over real HTTP: cross-site calls (finding 3), bodies limited while they
 * stream (finding 14), security headers (finding 9) and forwarded headers believed only from the
 * trusted proxies (finding 7).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { rowOrderSql } from "../src/db/db.ts";
import { transformPassword } from "../src/modules/user/password.ts";
import { toBase64Json } from "../src/rpc/envelope.ts";
import { parseTrustedProxies } from "../src/rpc/forwarded.ts";
import { ApiClient, decodeAnswer, loggedInClient, startTestServer, type TestServer } from "./harness.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});
afterEach(async () => {
  // Tests that change who is trusted or the site's origin put them back.
  server.context.trustedProxies = parseTrustedProxies("");
  await server.context.settings.update({ site_url: server.url });
});

const envelope = (payload: unknown = {}) => JSON.stringify({ data: toBase64Json(payload) });

async function userkeyOf(userId: string): Promise<string> {
  return (
    (await server.context.db.get<{ userkey: string }>("SELECT userkey FROM users WHERE id = ?", userId))
      ?.userkey ?? ""
  );
}

/** Posts `reset_userkey` as a logged-in customer with the given headers; the answer and whether the key changed. */
async function resetUserkeyWith(headers: Record<string, string>, body: BodyInit = envelope()) {
  const { client, user } = await loggedInClient(server);
  const before = await userkeyOf(user.id);
  const response = await fetch(`${server.url}/api/user/reset_userkey`, {
    method: "POST",
    body,
    headers: { cookie: client.cookieHeader(), ...headers },
  });
  const answer = await decodeAnswer(response);
  return { answer, changed: (await userkeyOf(user.id)) !== before };
}

describe("cross-site calls (finding 3)", () => {
  test("a text/plain reset_userkey with a valid session cookie is refused and the userkey stays", async () => {
    const { answer, changed } = await resetUserkeyWith({ "content-type": "text/plain" });
    expect(answer.code).toBe(1000);
    expect(answer.msg).toContain("application/json");
    expect(changed).toBe(false);
  });

  test("form, multipart and a missing content type are refused the same way", async () => {
    const multipart = new FormData();
    multipart.set("data", toBase64Json({}));
    const cases: [Record<string, string>, BodyInit][] = [
      [{ "content-type": "application/x-www-form-urlencoded" }, `data=${toBase64Json({})}`],
      [{}, multipart],
      // A byte body gets no content type from fetch.
      [{}, new TextEncoder().encode(envelope())],
    ];
    for (const [headers, body] of cases) {
      const { answer, changed } = await resetUserkeyWith(headers, body);
      expect({ answer: answer.code, changed }).toEqual({ answer: 1000, changed: false });
    }
  });

  test("public calls are refused before their handler runs: a text/plain login sets no session", async () => {
    const { email, password } = await loggedInClient(server);
    const response = await fetch(`${server.url}/api/user/login`, {
      method: "POST",
      body: envelope({ email, password: transformPassword(password) }),
      headers: { "content-type": "text/plain;charset=UTF-8" },
    });
    expect((await decodeAnswer(response)).code).toBe(1000);
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  test("application/json with parameters is accepted", async () => {
    const { answer, changed } = await resetUserkeyWith({ "content-type": "Application/JSON; charset=utf-8" });
    expect(answer.code).toBe(0);
    expect(changed).toBe(true);
  });

  test("a browser call from another site is refused even with JSON; the userkey stays", async () => {
    const json = { "content-type": "application/json" };
    const crossSite: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: server.url, "sec-fetch-site": "cross-site" },
      { origin: server.url.replace("127.0.0.1", "localhost") },
    ];
    for (const headers of crossSite) {
      const { answer, changed } = await resetUserkeyWith({ ...json, ...headers });
      expect({ headers, code: answer.code, changed }).toEqual({ headers, code: 1000, changed: false });
      expect(answer.msg).toContain("跨站");
    }
  });

  test("the site's own pages are accepted, and so are clients that are not browsers", async () => {
    const json = { "content-type": "application/json" };
    const ownPages: Record<string, string>[] = [
      { origin: server.url, "sec-fetch-site": "same-origin" },
      { origin: server.url },
      { "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "none" },
      {},
    ];
    for (const headers of ownPages) {
      const { answer, changed } = await resetUserkeyWith({ ...json, ...headers });
      expect({ headers, code: answer.code, changed }).toEqual({ headers, code: 0, changed: true });
    }
  });

  test("both the configured site origin and the origin the request came to count as own", async () => {
    await server.context.settings.update({ site_url: "https://panel.example.com" });
    const json = { "content-type": "application/json" };
    for (const origin of ["https://panel.example.com", server.url]) {
      const { answer } = await resetUserkeyWith({ ...json, origin });
      expect({ origin, code: answer.code }).toEqual({ origin, code: 0 });
    }
    await server.context.settings.update({ site_url: "" });
    expect((await resetUserkeyWith({ ...json, origin: server.url })).answer.code).toBe(0);
    expect((await resetUserkeyWith({ ...json, origin: "https://panel.example.com" })).answer.code).toBe(1000);
  });

  test("behind a trusted proxy the forwarded host and scheme are the request's origin; from others they are not", async () => {
    const proxied = {
      "content-type": "application/json",
      origin: "https://proxied.example",
      "x-forwarded-host": "proxied.example",
      "x-forwarded-proto": "https",
    };
    expect((await resetUserkeyWith(proxied)).answer.code).toBe(1000);
    server.context.trustedProxies = parseTrustedProxies("127.0.0.1");
    expect((await resetUserkeyWith(proxied)).answer.code).toBe(0);
  });
});

describe("bodies are limited while they stream (finding 14)", () => {
  /** A chunked body of `total` bytes shaped like an envelope; `pulled` counts what the server asked for. */
  function countedBody(total: number) {
    const chunk = new TextEncoder().encode("A".repeat(64 * 1024));
    const counter = { pulled: 0 };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (counter.pulled === 0) controller.enqueue(new TextEncoder().encode('{"data":"'));
        if (counter.pulled < total) {
          controller.enqueue(chunk);
          counter.pulled += chunk.byteLength;
        } else {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
        }
      },
    });
    return { stream, counter };
  }

  test("a chunked 1 MB envelope is refused with 1000 请求体过大", async () => {
    const { stream } = countedBody(1024 * 1024);
    const response = await fetch(`${server.url}/api/user/login`, {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
    });
    const answer = await decodeAnswer(response);
    expect(answer).toEqual({ code: 1000, data: null, msg: "请求体过大" });
  });

  test("the server stops reading a chunked envelope soon after the limit: a 64 MB body is barely pulled", async () => {
    const { stream, counter } = countedBody(64 * 1024 * 1024);
    const response = await fetch(`${server.url}/api/user/login`, {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
    });
    expect((await decodeAnswer(response)).msg).toBe("请求体过大");
    // 256 KB envelope limit plus what sockets buffer; Bun's own limit would be 8 MB.
    expect(counter.pulled).toBeLessThan(2 * 1024 * 1024);
  });
});

describe("security headers (finding 9)", () => {
  const policyOf = (response: Response) => {
    const policy = response.headers.get("content-security-policy") ?? "";
    return new Map(
      policy
        .split(";")
        .map((part) => part.trim().split(/\s+/))
        .filter((words) => words[0])
        .map(([name = "", ...values]) => [name, values]),
    );
  };

  test("the SPA page forbids inline script, framing and foreign connections", async () => {
    const response = await fetch(`${server.url}/`);
    const policy = policyOf(response);
    expect(policy.get("script-src")).toEqual(["'self'"]);
    expect(policy.get("default-src")).toEqual(["'self'"]);
    expect(policy.get("connect-src")).toEqual(["'self'"]);
    expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
    expect(policy.get("object-src")).toEqual(["'none'"]);
    expect(policy.get("base-uri")).toEqual(["'none'"]);
    expect(policy.get("form-action")).toEqual(["'self'"]);
    expect(policy.get("style-src")).not.toContain("'unsafe-inline'");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    // Plain http: no HSTS.
    expect(response.headers.get("strict-transport-security")).toBeNull();
  });

  test("the SPA itself has no inline script", async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    for (const script of html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)) {
      expect(script[0]).toContain(" src=");
      expect(script[1]?.trim()).toBe("");
    }
    expect(html).not.toMatch(/\son[a-z]+=/i);
  });

  test("a shipped page with an inline style allows exactly that style by its hash", async () => {
    const response = await fetch(`${server.url}/about.html`);
    const html = await response.text();
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? "";
    expect(style).not.toBe("");
    const hash = `'sha256-${createHash("sha256").update(style).digest("base64")}'`;
    expect(policyOf(response).get("style-src")).toEqual(["'self'", hash]);
  });

  test("every other answer carries the headers too: envelope calls, assets, 404s", async () => {
    const answers = [
      await new ApiClient(server.url).raw("/api/host/get", envelope()),
      await fetch(`${server.url}/app.js`),
      await fetch(`${server.url}/no-such-page`),
      await fetch(`${server.url}/no-such-page`, { method: "POST" }),
      await fetch(`${server.url}/healthz`),
    ];
    for (const response of answers) {
      expect(policyOf(response).get("frame-ancestors")).toEqual(["'none'"]);
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  test("HSTS is sent when a trusted proxy says the request came over https, never on a forged claim", async () => {
    const forged = await fetch(`${server.url}/`, { headers: { "x-forwarded-proto": "https" } });
    expect(forged.headers.get("strict-transport-security")).toBeNull();
    server.context.trustedProxies = parseTrustedProxies("127.0.0.1");
    const proxied = await fetch(`${server.url}/`, { headers: { "x-forwarded-proto": "https" } });
    expect(proxied.headers.get("strict-transport-security")).toBe("max-age=31536000");
  });
});

describe("forwarded headers come only from trusted proxies (finding 7)", () => {
  async function login(headers: Record<string, string>) {
    const { email, password, user } = await loggedInClient(server);
    const response = await new ApiClient(server.url).raw(
      "/api/user/login",
      envelope({ email, password: transformPassword(password) }),
      headers,
    );
    expect((await decodeAnswer(response)).code).toBe(0);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith("token=")) ?? "";
    const db = server.context.db;
    const newest = `ORDER BY create_time DESC, ${rowOrderSql(db)} DESC`;
    const ip = (
      await db.get<{ ip: string }>(`SELECT ip FROM sessions WHERE user_id = ? ${newest} LIMIT 1`, user.id)
    )?.ip;
    return { secure: /;\s*Secure/i.test(cookie), ip };
  }

  const forged = { "x-forwarded-for": "198.51.100.7, 203.0.113.9", "x-forwarded-proto": "https" };

  test("without trusted proxies a forged X-Forwarded-Proto gets no Secure cookie and X-Forwarded-For is ignored", async () => {
    expect(await login(forged)).toEqual({ secure: false, ip: "127.0.0.1" });
  });

  test("with trust-proxy set for other addresses, the peer 127.0.0.1 is not believed", async () => {
    server.context.trustedProxies = parseTrustedProxies("10.0.0.0/8, 192.0.2.1");
    expect(await login(forged)).toEqual({ secure: false, ip: "127.0.0.1" });
  });

  test("from a trusted proxy: Secure cookie, and the right-most address that is not a trusted proxy", async () => {
    server.context.trustedProxies = parseTrustedProxies("127.0.0.1");
    expect(await login(forged)).toEqual({ secure: true, ip: "203.0.113.9" });
    server.context.trustedProxies = parseTrustedProxies("127.0.0.0/8, 203.0.113.0/24");
    expect(await login(forged)).toEqual({ secure: true, ip: "198.51.100.7" });
  });
});
